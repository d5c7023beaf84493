"""The HomeKit bridge's tests: a real homed (homed_testkit, Clients/python/testkit),
a provider of test accessories in this process (homed.Provider), the bridge as a
real process on a free loopback port (mDNS off: --no-advertise), and aiohomekit
as the controller (hap_controller.py)."""


import pytest


from homed_testkit.fixtures import homed, processes, workdir  # noqa: F401


@pytest.fixture
def controllers():
    made = []

    def make():
        from .hap_controller import HapController
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
    from .bridge_kit import TestDevices
    kit = TestDevices(homed.socket_path)
    try:
        yield kit.start()
    finally:
        kit.stop()
