"""The HomeKit provider's tests: an accessory served by HAP-python on loopback
as a real process (tests/accessory_server.py, mDNS stubbed), a real homed
(Clients/python/tests/homed_testkit.py) and the provider as a real process,
paired with the accessory by its own `pair` command."""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROVIDER_DIR = HERE.parent
REPO = PROVIDER_DIR.parents[2]
for path in (REPO / "Clients" / "python" / "tests", REPO / "Clients" / "python", PROVIDER_DIR, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from provider_fixtures import homed, processes, workdir  # noqa: E402,F401


@pytest.fixture
def accessory(workdir, processes):
    from hk_helpers import Accessory
    server = Accessory(workdir, processes)
    yield server.start()


@pytest.fixture
def paired(homed, accessory, workdir, processes):
    """The accessory paired, the provider running, every accessory reachable in homed."""
    from hk_helpers import Setup
    return Setup(homed, accessory, workdir, processes).ready()
