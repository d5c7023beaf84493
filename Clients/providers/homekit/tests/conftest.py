"""The HomeKit provider's tests: an accessory served by HAP-python on loopback
as a real process (tests/accessory_server.py, mDNS stubbed), a real homed
(homed_testkit, Clients/python/testkit) and the provider as a real process,
paired with the accessory by its own `pair` command."""


import pytest


from homed_testkit.fixtures import homed, processes, workdir  # noqa: F401


@pytest.fixture
def accessory(workdir, processes):
    from .hk_helpers import Accessory
    server = Accessory(workdir, processes)
    yield server.start()


@pytest.fixture
def paired(homed, accessory, workdir, processes):
    """The accessory paired, the provider running, every accessory reachable in homed."""
    from .hk_helpers import Setup
    return Setup(homed, accessory, workdir, processes).ready()
