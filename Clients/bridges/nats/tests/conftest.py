"""homed-nats's tests: a real nats-server on a free loopback port (or three
routed into a cluster), a real homed (Clients/python/tests/homed_testkit.py),
the bridge as a real process, and readers and writers over nats-py."""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BRIDGE_DIR = HERE.parent
REPO = BRIDGE_DIR.parents[2]
for path in (REPO / "Clients" / "python" / "tests", REPO / "Clients" / "python", BRIDGE_DIR, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from provider_fixtures import homed, processes, stored_homed, workdir  # noqa: E402,F401


@pytest.fixture
def server(workdir):
    from nats_server import NatsServer
    node = NatsServer(workdir)
    try:
        yield node.start()
    finally:
        node.kill()
