"""The HomeKit bridge's tests: a real homed (Clients/python/tests/homed_testkit.py),
a provider of test accessories in this process (homed.Provider), the bridge as a
real process on a free loopback port (mDNS off: --no-advertise), and aiohomekit
as the controller (hap_controller.py)."""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BRIDGE_DIR = HERE.parent
REPO = BRIDGE_DIR.parents[2]
for path in (REPO / "Clients" / "python" / "tests", REPO / "Clients" / "python", BRIDGE_DIR, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from provider_fixtures import homed, processes, workdir  # noqa: E402,F401


@pytest.fixture
def controllers():
    made = []

    def make():
        from hap_controller import HapController
        controller = HapController()
        made.append(controller)
        return controller
    try:
        yield make
    finally:
        for controller in made:
            controller.close()


@pytest.fixture
def devices(homed):
    from bridge_kit import TestDevices
    kit = TestDevices(homed.socket_path)
    try:
        yield kit.start()
    finally:
        kit.stop()
