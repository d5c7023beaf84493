"""The MQTT devices provider's tests: a real mosquitto on a free loopback port,
a fleet of fake devices announcing themselves on it (tests/fleet.py), a real
homed (Clients/python/tests/homed_testkit.py) and the provider as a real
process."""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROVIDER_DIR = HERE.parent
REPO = PROVIDER_DIR.parents[2]
for path in (REPO / "Clients" / "python" / "tests", REPO / "Clients" / "python", PROVIDER_DIR, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from provider_fixtures import broker, homed, processes, workdir  # noqa: E402,F401


@pytest.fixture
def fleet(broker):
    from fleet import Fleet
    fake = Fleet(broker.port)
    try:
        yield fake.start()
    finally:
        fake.stop()
