"""homed-nats's tests: a real nats-server on a free loopback port (or three
routed into a cluster), a real homed (homed_testkit, Clients/python/testkit),
the bridge as a real process, and readers and writers over nats-py."""


import pytest


from homed_testkit.fixtures import homed, processes, stored_homed, workdir  # noqa: F401


@pytest.fixture
def server(workdir):
    from .nats_server import NatsServer
    node = NatsServer(workdir)
    try:
        yield node.start()
    finally:
        node.kill()


@pytest.fixture
def cluster(workdir):
    from .nats_server import Cluster
    nodes = Cluster(workdir)
    try:
        yield nodes.start()
    finally:
        nodes.kill()
