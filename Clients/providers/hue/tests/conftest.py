"""The Hue provider's tests: a fake bridge (tests/fake_bridge.py, HTTPS and
server-sent events on 127.0.0.1, serving resources recorded from a real
bridge) as a real process, a real homed (homed_testkit, Clients/python/testkit)
and the provider as a real process."""

import pytest

from homed_testkit.fixtures import homed, processes, stored_homed, workdir  # noqa: F401


@pytest.fixture
def bridge(workdir, processes):
    from .hue_helpers import FakeBridge
    return FakeBridge(workdir, processes).start()


@pytest.fixture
def running(homed, bridge, workdir, processes):
    """The provider on the fake bridge, its accessories registered."""
    from .hue_helpers import start_provider, wait_log, write_pairing
    key_file = write_pairing(workdir, bridge)
    process = start_provider(homed, key_file, processes)
    wait_log(process, "accessories registered; following its events", timeout=20)
    return process
