"""homed-nats-remote: homed's own protocol on a local socket, carried over NATS
to a homed on another machine (README.md, "The remote socket").

    homed-nats-remote [--config FILE] [--server URL]… [--site S] [--user-file F | --creds F]
                      [--js-prefix P] [--listen-socket PATH] [--exit-when-idle SECONDS]
        serves the socket (default: $XDG_RUNTIME_DIR/homed/nats-<site>-<digest>.sock)
    homed-nats-remote … --print-socket
        prints that path
    homed-nats-remote … -- COMMAND [ARG…]
        finds the socket of these settings answering, else starts one (it ends
        after 10 idle minutes), then runs COMMAND with HOMED_SOCKET set to it:
        what `homectl --nats URL …` runs (homectl passes itself as COMMAND)
"""

from __future__ import annotations

import argparse
import fcntl
import logging
import os
import subprocess
import sys
import time

from homed.provider import run_until_signalled

from .config import SettingsError, load
from .remote_socket import RemoteSocket, SocketInUse, default_socket_path

log = logging.getLogger("homed-nats-remote")

PROG = "homed-nats-remote"
START_TIMEOUT = 10.0
IDLE_EXIT = 600.0  # a socket started for a command ends once no client used it for this long


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Serves homed's protocol on a local Unix socket and carries "
                                                      "each call over NATS to the site's homed-nats.")
    p.add_argument("--config", metavar="FILE", help="an INI file with a [nats] section (as homed-nats's)")
    p.add_argument("--server", action="append", metavar="URL",
                   help="a NATS server (repeat for a cluster; default nats://127.0.0.1:4222)")
    p.add_argument("--site", help="the home's name on NATS (default home)")
    p.add_argument("--user-file", metavar="FILE", help="a file with username=… and password=… lines")
    p.add_argument("--creds", metavar="FILE", help="a NATS .creds file (user JWT and nkey seed)")
    p.add_argument("--js-prefix", metavar="PREFIX",
                   help="the JetStream API prefix under which this account imports the home's "
                        "(default $JS.API: the stream is in this account)")
    p.add_argument("--listen-socket", metavar="PATH", help="the socket to serve (default: under $XDG_RUNTIME_DIR)")
    p.add_argument("--exit-when-idle", type=float, metavar="SECONDS",
                   help="stop once no client has been connected for this long")
    p.add_argument("--print-socket", action="store_true", help="print the socket's path and exit")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.add_argument("command", nargs=argparse.REMAINDER,
                   help="after --: a command to run with HOMED_SOCKET set to the socket (started if need be)")
    return p


def _start(argv_settings, path: str) -> None:
    """Starts the socket for `path` in a session of its own (it outlives this
    command), unless one answers; one start at a time per path (a lock file)."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _listening(path):  # one is running (reaching NATS or not: it says so itself)
            return
        log_path = path + ".log"
        with open(log_path, "ab") as out:
            child = subprocess.Popen([sys.executable, "-m", "homed_nats.cli", *argv_settings, "--listen-socket", path,
                                      "--exit-when-idle", str(IDLE_EXIT)], stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            # Answering a hello needs NATS: a socket that listens is enough, the
            # command then hears UNAVAILABLE naming the server from the socket itself.
            if os.path.exists(path) and _listening(path):
                return
            if child.poll() is not None:
                tail = open(log_path, errors="replace").read()[-600:]
                raise SocketInUse(f"the remote socket for {path} did not start (exit {child.returncode}): {tail}")
            if time.monotonic() > deadline:
                raise SocketInUse(f"the remote socket {path} did not listen within {START_TIMEOUT:g} s "
                                  f"(its log: {log_path})")
            time.sleep(0.02)


def _listening(path: str) -> bool:
    import socket
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1)
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = []
    if "--" in argv:
        at = argv.index("--")
        argv, command = argv[:at], argv[at + 1:]
    args = parser().parse_args(argv)
    if args.command:
        print(f"{PROG}: {args.command[0]!r}: a command to run goes after --", file=sys.stderr)
        return 64
    logging.basicConfig(level=getattr(logging, args.log_level.upper()),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("nats").setLevel(logging.CRITICAL)
    flags = {"servers": args.server, "site": args.site, "user_file": args.user_file, "credentials": args.creds}
    try:
        settings = load(args.config, flags)
    except SettingsError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 2
    if args.exit_when_idle is not None and args.exit_when_idle <= 0:
        print(f"{PROG}: --exit-when-idle {args.exit_when_idle:g}: a number of seconds above 0", file=sys.stderr)
        return 64
    path = args.listen_socket or default_socket_path(settings)
    if args.print_socket:
        print(path)
        return 0
    if command:
        passed = []
        for name, value in (("--config", args.config), ("--site", args.site), ("--user-file", args.user_file),
                            ("--creds", args.creds), ("--js-prefix", args.js_prefix)):
            if value is not None:
                passed += [name, value]
        for server in args.server or ():
            passed += ["--server", server]
        try:
            _start(passed, path)
        except (SocketInUse, OSError) as error:
            print(f"{PROG}: {error}", file=sys.stderr)
            return 14
        os.environ["HOMED_SOCKET"] = path
        try:
            os.execvp(command[0], command)
        except OSError as error:
            print(f"{PROG}: cannot run {command[0]}: {error.strerror or error}", file=sys.stderr)
            return 127
    server = RemoteSocket(settings, path, js_prefix=args.js_prefix, exit_when_idle=args.exit_when_idle)
    try:
        return run_until_signalled(server.run, server.stop, PROG, log)
    except SocketInUse as error:
        log.error("%s", error)
        return 2


if __name__ == "__main__":
    sys.exit(main())
