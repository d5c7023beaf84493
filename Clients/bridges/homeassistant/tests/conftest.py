"""homed-mqtt's tests: a real mosquitto on a free loopback port, a real homed
(homed_testkit, Clients/python/testkit) with accessories from a provider the
test runs (tests/home_source.py), the bridge as a real process, and a paho
subscriber in the role of Home Assistant (tests/ha_peer.py)."""


import pytest


from homed_testkit.fixtures import broker, homed, processes, stored_homed, workdir  # noqa: F401


@pytest.fixture
def ha(broker):
    """Home Assistant's side of the broker: every message recorded."""
    from .ha_peer import HomeAssistantPeer
    peer = HomeAssistantPeer(broker.port)
    try:
        yield peer.start()
    finally:
        peer.stop()
