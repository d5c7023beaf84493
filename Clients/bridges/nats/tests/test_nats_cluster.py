"""A three-node JetStream cluster on loopback, the stream and the bucket with
three replicas: the stream's leader killed during a burst, and nothing the
cluster acknowledged is lost — the stream ends holding every event once."""


from homed_testkit.providers import wait_for

from homed_nats import layout as L
from .nats_home import direct_log, make_home, Devices, start_bridge, run, wait_snapshot
from .nats_server import stream_leader
from .test_nats_restarts import BURST, Burst, bucket_matches, stream_matches

NAMES = L.Names("home")


def test_the_stream_leader_killed_during_a_burst_loses_nothing_acknowledged(homed, cluster, processes):
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    events = direct_log(homed)
    bridge = start_bridge(homed, cluster.urls, processes, "--replicas", "3")
    try:
        wait_snapshot(bridge, timeout=30)
        leader = wait_for(lambda: run(stream_leader(NAMES.stream, cluster.urls)), 15, "the stream's leader")
        burst = Burst(devices).start()
        events.wait_for(lambda e: True, count=BURST // 4, timeout=30)
        node = next(n for n in cluster.nodes if n.name == leader)
        node.kill()
        burst.join()
        events.wait_for(lambda e: True, count=BURST, timeout=30)
        survivors = [n.url for n in cluster.nodes if n is not node]
        stream_matches(survivors, events, bridge)
        bucket_matches(homed, survivors)
        new_leader = run(stream_leader(NAMES.stream, survivors))
        assert new_leader and new_leader != leader
        assert "Traceback" not in bridge.log()
    finally:
        events.close()
        devices.stop()
