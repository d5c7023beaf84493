"""The Zigbee2MQTT provider's tests: a real mosquitto on a free loopback port,
a fake Zigbee2MQTT coordinator (tests/coordinator.py) on it, a real homed
(Clients/python/tests/homed_testkit.py) and the provider as a real process."""

import shutil
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROVIDER_DIR = HERE.parent
REPO = PROVIDER_DIR.parents[2]
for path in (REPO / "Clients" / "python" / "tests", REPO / "Clients" / "python", PROVIDER_DIR, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


from z2m_broker import Mosquitto, free_port  # noqa: E402


@pytest.fixture
def workdir():
    tmp = tempfile.mkdtemp(prefix="homed-z2m-", dir="/tmp")
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def broker(workdir):
    server = Mosquitto(workdir, free_port())
    try:
        yield server.start()
    finally:
        server.kill()


@pytest.fixture
def homed(workdir):
    """A homed (no demo, in memory), killed at teardown."""
    from homed_testkit import HomedProcess, require_binary
    daemon = HomedProcess(require_binary(), workdir, in_memory=True)
    try:
        daemon.start()
        yield daemon
    finally:
        daemon.kill()


@pytest.fixture
def coordinator(broker):
    from coordinator import FakeCoordinator
    fake = FakeCoordinator(broker.port)
    try:
        yield fake.start()
    finally:
        fake.stop()


@pytest.fixture
def processes():
    """Provider processes the test started: each still running at teardown is killed by pid."""
    started = []
    try:
        yield started
    finally:
        for process in started:
            process.cleanup()
