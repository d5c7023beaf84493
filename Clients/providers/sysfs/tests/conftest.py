"""The sysfs provider's tests: a real homed (Clients/python/tests/homed_testkit.py)
and the provider run as a real process against a fake sysfs tree."""

import shutil
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROVIDER_DIR = HERE.parent
REPO = PROVIDER_DIR.parents[2]
for path in (REPO / "Clients" / "python" / "tests", REPO / "Clients" / "python", PROVIDER_DIR):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


@pytest.fixture
def homed():
    """A homed (no demo, in memory) in a fresh temporary directory, killed at teardown."""
    from homed_testkit import HomedProcess, require_binary
    binary = require_binary()
    tmp = tempfile.mkdtemp(prefix="homed-sysfs-", dir="/tmp")
    daemon = HomedProcess(binary, tmp, in_memory=True)
    try:
        daemon.start()
        yield daemon
    finally:
        daemon.kill()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def processes():
    """Provider processes the test started: each still running at teardown is killed by pid."""
    started = []
    try:
        yield started
    finally:
        for process in started:
            process.cleanup()
