"""Fixtures shared by the providers' and bridges' tests. A conftest.py imports
the ones it uses:

    from homed_testkit.fixtures import broker, homed, processes, workdir  # noqa: F401

`workdir` is a fresh temporary directory, `homed` a real daemon in it (no demo, in
memory), `stored_homed` one on a database there (so a test can restart it with its
home), `broker` Debian's mosquitto on a free loopback port, `processes` the
provider processes a test started (each still running at teardown is killed by pid).
"""

import shutil
import tempfile

import pytest


@pytest.fixture
def workdir():
    tmp = tempfile.mkdtemp(prefix="homed-test-", dir="/tmp")
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def homed(workdir):
    from . import HomedProcess, require_binary
    daemon = HomedProcess(require_binary(), workdir, in_memory=True)
    try:
        daemon.start()
        yield daemon
    finally:
        daemon.kill()


@pytest.fixture
def stored_homed(workdir):
    from . import HomedProcess, require_binary
    daemon = HomedProcess(require_binary(), workdir)
    try:
        daemon.start()
        yield daemon
    finally:
        daemon.kill()


@pytest.fixture
def broker(workdir):
    from .mqtt_broker import Mosquitto, free_port
    server = Mosquitto(workdir, free_port())
    try:
        yield server.start()
    finally:
        server.kill()


@pytest.fixture
def processes():
    started = []
    try:
        yield started
    finally:
        for process in started:
            process.cleanup()
