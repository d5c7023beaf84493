"""The Zigbee2MQTT provider's tests: a real mosquitto on a free loopback port,
a fake Zigbee2MQTT coordinator (tests/coordinator.py) on it, a real homed
(homed_testkit, Clients/python/testkit) and the provider as a real process."""


import pytest


from homed_testkit.fixtures import broker, homed, processes, workdir  # noqa: F401


@pytest.fixture
def coordinator(broker):
    from .coordinator import FakeCoordinator
    fake = FakeCoordinator(broker.port)
    try:
        yield fake.start()
    finally:
        fake.stop()
