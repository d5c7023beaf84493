"""The ESPHome provider's tests: a fake ESPHome device as a real process on a
free loopback port (tests/fake_device.py, aioesphomeapi's own messages, its
entities from tests/devices.json), a real homed (homed_testkit,
Clients/python/testkit) and the provider as a real process."""


import pytest


from homed_testkit.fixtures import homed, processes, workdir  # noqa: F401


@pytest.fixture
def device(workdir, processes):
    from .esp_helpers import FakeDevice
    return FakeDevice(workdir, processes).start()
