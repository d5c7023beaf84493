"""The MQTT devices provider's tests: a real mosquitto on a free loopback port,
a fleet of fake devices announcing themselves on it (tests/fleet.py), a real
homed (homed_testkit, Clients/python/testkit) and the provider as a real
process."""


import pytest


from homed_testkit.fixtures import broker, homed, processes, workdir  # noqa: F401


@pytest.fixture
def fleet(broker):
    from .fleet import Fleet
    fake = Fleet(broker.port)
    try:
        yield fake.start()
    finally:
        fake.stop()
