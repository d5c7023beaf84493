"""Shared test setup: a real homed for the integration tests (the package under
test is the installed one: Scripts/bootstrap.sh --python installs it into .venv)."""

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from homed_testkit import accepts, die_with_parent, homed_binary
from homed_testkit.fixtures import processes  # noqa: F401 (a fixture)

CLIENT_DIR = Path(__file__).resolve().parents[1]
REPO = CLIENT_DIR.parents[1]


START_TIMEOUT = 10.0


class Daemon:
    def __init__(self, proc, socket_path, log_path, args):
        self.proc = proc
        self.socket_path = socket_path
        self.log_path = log_path
        self.args = args

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-4000:]
        except OSError:
            return ""


def _stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture(scope="module")
def daemon():
    """A `homed --demo` on a socket in a fresh temporary directory, killed at teardown."""
    binary, explicit = homed_binary()
    if not os.access(binary, os.X_OK):
        if explicit:
            pytest.fail(f"HOMED_BIN={binary} is not an executable file")
        pytest.fail(f"no homed binary at {binary} (swift build, or set HOMED_BIN)")
    # A short directory: sun_path holds 108 bytes.
    tmp = tempfile.mkdtemp(prefix="homed-py-", dir="/tmp")
    socket_path = os.path.join(tmp, "homed.sock")
    # Its own database and configuration: as root, homed's defaults are the system's
    # (/var/lib/homed, /etc/homed), which no test may touch.
    args = [binary, "--demo", "--socket", socket_path, "--db", os.path.join(tmp, "homed.sqlite")]
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
    if "--no-simulator" in help_text.stdout + help_text.stderr:
        args.append("--no-simulator")
    log_path = os.path.join(tmp, "homed.log")
    proc = None
    try:
        with open(log_path, "wb") as log:
            env = dict(os.environ)
            env.pop("HOMED_SOCKET", None)
            env["STATE_DIRECTORY"] = tmp
            env["CONFIGURATION_DIRECTORY"] = tmp
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    cwd=tmp, env=env, preexec_fn=die_with_parent)
        d = Daemon(proc, socket_path, log_path, args)
        deadline = time.monotonic() + START_TIMEOUT
        while not accepts(socket_path):
            if proc.poll() is not None:
                pytest.fail(f"homed exited with {proc.returncode} before listening: {' '.join(args)}\n{d.log()}")
            if time.monotonic() > deadline:
                pytest.fail(f"homed did not accept on {socket_path} within {START_TIMEOUT} s\n{d.log()}")
            time.sleep(0.05)
        yield d
        if proc.poll() is not None:
            pytest.fail(f"homed died during the tests (exit {proc.returncode})\n{d.log()}")
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)


# -- providers: a daemon on a database of its own, and provider processes -------

@pytest.fixture
def homed_db():
    """A homed (no demo) on a database in a fresh temporary directory, which the
    test may stop, kill and restart (`homed_testkit.HomedProcess`); killed at
    teardown."""
    from homed_testkit import HomedProcess, require_binary
    binary = require_binary()
    tmp = tempfile.mkdtemp(prefix="homed-prov-", dir="/tmp")
    daemon = HomedProcess(binary, tmp)
    try:
        daemon.start()
        yield daemon
    finally:
        daemon.kill()
        shutil.rmtree(tmp, ignore_errors=True)
