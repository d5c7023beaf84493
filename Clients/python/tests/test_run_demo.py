"""Scripts/run-demo.sh, the quick start's first command, stopped as people stop
it: by its PID (SIGTERM), by Ctrl-C (SIGINT) or by kill -9. homed stops with it
every time, and the temporary database goes only after homed has ended."""

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from homed_testkit import repository, require_binary

BOUND = 60.0


def wait_until(condition, what):
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {BOUND}s: {what}")


def accepts(path):
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(path)
        return True
    except OSError:
        return False


def children(pid):
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def demo(tmp_path):
    started = []

    def start():
        sock = str(tmp_path / "homed.sock")
        log = open(tmp_path / "run-demo.log", "w+")
        proc = subprocess.Popen([str(repository() / "Scripts" / "run-demo.sh"), "--socket", sock],
                                env=dict(os.environ, HOMED_BIN=require_binary()), stdout=log, stderr=log,
                                start_new_session=True)
        started.append(proc)
        wait_until(lambda: accepts(sock), "the demo's homed accepts on its socket")
        homed = children(proc.pid)
        assert len(homed) == 1, homed
        text = Path(log.name).read_text()
        scratch = re.search(r"the demo's database is (\S+)/homed\.sqlite", text).group(1)
        return proc, homed[0], scratch

    yield start
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stopped_by_a_signal_it_stops_homed_then_removes_the_database(demo, sig):
    proc, homed, scratch = demo()
    assert os.path.isfile(os.path.join(scratch, "homed.sqlite"))
    proc.send_signal(sig)
    assert proc.wait(timeout=BOUND) == 0
    assert not alive(homed), "homed still runs after run-demo.sh ended"
    assert not os.path.exists(scratch)


def test_killed_with_sigkill_homed_stops_too(demo):
    proc, homed, scratch = demo()
    try:
        proc.kill()
        proc.wait(timeout=BOUND)
        wait_until(lambda: not alive(homed), "homed stops once run-demo.sh is gone")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # what kill -9 leaves: nothing writes to it any more
