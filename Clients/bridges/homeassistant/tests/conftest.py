"""homed-mqtt's tests: a real mosquitto on a free loopback port, a real homed
(Clients/python/tests/homed_testkit.py) with accessories from a provider the
test runs (tests/home_source.py), the bridge as a real process, and a paho
subscriber in the role of Home Assistant (tests/ha_peer.py)."""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BRIDGE_DIR = HERE.parent
REPO = BRIDGE_DIR.parents[2]
for path in (REPO / "Clients" / "python" / "tests", REPO / "Clients" / "python", BRIDGE_DIR, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from provider_fixtures import broker, homed, processes, stored_homed, workdir  # noqa: E402,F401


@pytest.fixture
def ha(broker):
    """Home Assistant's side of the broker: every message recorded."""
    from ha_peer import HomeAssistantPeer
    peer = HomeAssistantPeer(broker.port)
    try:
        yield peer.start()
    finally:
        peer.stop()
