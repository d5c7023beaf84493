#!/usr/bin/env python3
"""A stand-in for homed that the C client's conformance runner starts: given
homed's arguments and `--socket PATH`, it runs a real homed (on a socket of its
own), a nats-server with the tests' accounts, homed-nats, and homed-nats-remote
serving PATH; SIGTERM (or the runner's death) ends them all. So the runner's
scenarios go through the remote socket without the runner knowing.

    remote_daemon.py [homed's arguments…] --socket PATH
"""

import os
import shutil
import signal
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))))

from homed_testkit import HomedProcess, homed_binary, kill_pid  # noqa: E402

from Clients.bridges.nats.tests.remote_site import accounts_server, start_remote, start_site_bridge  # noqa: E402


def main() -> int:
    args = sys.argv[1:]
    at = args.index("--socket")
    path, homed_args = args[at + 1], args[:at] + args[at + 2:]
    workdir = tempfile.mkdtemp(prefix="homed-remote-daemon-")
    homed = HomedProcess(os.environ.get("HOMED_REAL_BIN") or homed_binary()[0], workdir)
    homed.args = [homed.binary, "--socket", homed.socket_path] + homed_args
    server = accounts_server(workdir)
    processes = []
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    try:
        homed.start()
        server.start()
        start_site_bridge(homed, server, processes, workdir)
        # As olga, an admin: the conformance list runs with the role a local client of
        # the daemon's own user has (ImportLayout is an admin's call).
        remote, _ = start_remote(server.url, processes, workdir, user="olga", path=path)
        stopping.wait()
        # Stopped, not killed: it removes its socket from the runner's directory.
        remote.proc.send_signal(signal.SIGTERM)
        remote.proc.wait(10)
    finally:
        for process in reversed(processes):
            process.cleanup()
        server.kill()
        kill_pid(homed.proc)
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
