"""The publishing window: bursts of reports of 50 values each (homed sends the
bridge 50 events at a time, so records are always in flight), watched from a
connection of the test's own that sees every record the bridge publishes and
every acknowledgement the stream sends it (one core subscription to `>` on the
same server: both in the server's order).

- the window is bounded: never more records published than acknowledged plus
  the window (`[nats] window = 8`), and the window used to the full;
- the bridge killed (kill -9) with records of its window unacknowledged (the
  server stopped with SIGSTOP while the bridge goes on sending, so that bytes of
  the bridge sit unread at the server; then the bridge killed and the server
  continued): restarted, the stream holds every event homed sent, once, in
  order, and the bucket homed's values;
- a cluster's stream leader killed (kill -9) in the middle of a burst, after it was
  stopped (SIGSTOP) with half the burst still to send, so that records are in
  flight when it dies: the same.
"""

import json
import os
import signal
import threading

import nats
import pytest

from homed.provider import Provider, Ref
from homed_testkit.providers import wait_for

from homed_nats import layout as L
from .nats_home import direct_log, make_home, run, start_bridge, wait_snapshot
from .nats_server import stream_leader
from .test_nats_restarts import bucket_matches, stream_matches

NAMES = L.Names("home")
SENSORS = 50
REPORTS = 100  # of SENSORS values each


def sensors():
    return [{"key": f"t{i}", "name": f"Thermometer {i}", "category": "SENSOR", "room": "Garage",
             "services": [{"type": "TemperatureSensor",
                           "characteristics": [{"type": "CurrentTemperature", "value": 0.0}]}]}
            for i in range(SENSORS)]


class Burst:
    """REPORTS reports of SENSORS values each, in a thread, as fast as homed takes
    them; every value differs from the one before it, so each is an event."""

    def __init__(self, socket_path, reports=REPORTS):
        self.provider = Provider("burst", sensors(), socket_path=socket_path, client_name="test burst")
        self.refs = [Ref(f"t{i}", "TemperatureSensor", "CurrentTemperature") for i in range(SENSORS)]
        self.reports = reports
        self.error = None
        # hold_after(n): the burst waits after n reports until resume().
        self.held_after = None
        self.resumed = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.provider.start()
        if not self.provider.wait_registered(15):
            raise AssertionError(f"the burst's provider was not registered: {self.provider.error}")
        return self

    def go(self):
        self.thread.start()
        return self

    def hold_after(self, reports):
        """Before go(): the burst stops after `reports` reports until resume()."""
        self.held_after = reports
        return self

    def resume(self):
        self.resumed.set()

    def _run(self):
        try:
            for n in range(self.reports):
                if n == self.held_after and not self.resumed.wait(60):
                    raise AssertionError(f"the burst was held after {n} reports and never resumed")
                self.provider.report({ref: (n % 100 + 1) / 10 + i for i, ref in enumerate(self.refs)})
        except Exception as error:  # noqa: BLE001 - the test says it
            self.error = error

    def join(self):
        self.thread.join(120)
        assert not self.thread.is_alive(), "the burst did not end"
        assert self.error is None, f"a report failed: {self.error!r}"

    def stop(self):
        self.provider.stop()


class Spy:
    """Every record published on the journal's subjects and every acknowledgement
    of the stream, as the server passes them on, in one thread of its own."""

    def __init__(self, urls):
        self.urls = urls if isinstance(urls, list) else [urls]
        self.lock = threading.Lock()
        self.published = 0
        self.acked = 0  # the highest stream sequence acknowledged
        self.most = 0  # the most records ever published and not acknowledged
        self.ready = threading.Event()
        self.stopping = False
        self.thread = threading.Thread(target=lambda: run(self._run()), daemon=True)

    async def _run(self):
        import asyncio
        nc = await nats.connect(self.urls, max_reconnect_attempts=-1, reconnect_time_wait=0.2)

        journal = NAMES.journal + "."

        async def seen(msg):
            # One subscription for both, so that nats-py hands them over in the
            # server's order (each subscription has its own queue).
            if msg.subject.startswith(journal):
                if msg.reply.startswith("$JS.ACK."):
                    return  # the stream giving a record to a reader, not the bridge publishing it
                with self.lock:
                    self.published += 1
                    self.most = max(self.most, self.published - self.acked)
                return
            if not msg.subject.startswith("_INBOX."):
                return
            try:
                ack = json.loads(msg.data)
            except ValueError:
                return
            if isinstance(ack, dict) and ack.get("stream") == NAMES.stream and set(ack) <= {"stream", "seq", "domain"}:
                with self.lock:
                    self.acked = max(self.acked, ack["seq"])
        await nc.subscribe(">", cb=seen)
        await nc.flush()
        self.ready.set()
        while not self.stopping:
            await asyncio.sleep(0.05)
        await nc.close()

    def start(self):
        self.thread.start()
        assert self.ready.wait(10), "the spy did not subscribe"
        return self

    def stop(self):
        self.stopping = True
        self.thread.join(5)


def unread_bytes(port):
    """Bytes waiting in the receive queues of the established TCP connections
    whose local port is `port` (the server's side): /proc/net/tcp."""
    total = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            local, state, queues = fields[1], fields[3], fields[4]
            if int(local.rsplit(":", 1)[1], 16) == port and state == "01":
                total += int(queues.split(":")[1], 16)
    return total


def start(homed, urls, processes, *extra, workdir=None, window=None):
    with homed.client() as client:
        make_home(client)
    burst = Burst(homed.socket_path).start()
    events = direct_log(homed)
    args = list(extra)
    if window is not None:
        path = os.path.join(workdir, "window.ini")
        with open(path, "w") as f:
            f.write(f"[nats]\nwindow = {window}\n")
        args += ["--config", path]
    bridge = start_bridge(homed, urls, processes, *args)
    wait_snapshot(bridge, timeout=30)
    return burst, events, bridge


def test_the_bridge_never_has_more_than_its_window_unacknowledged(homed, server, processes, workdir):
    spy = Spy(server.url).start()
    burst, events, bridge = start(homed, server.url, processes, workdir=workdir, window=8)
    try:
        burst.go().join()
        events.wait_for(lambda e: True, count=REPORTS * SENSORS, timeout=30)
        stream_matches(server.url, events, bridge)
        wait_for(lambda: spy.acked == spy.published, 15,
                 f"every record published to be acknowledged (stream seqs: {spy.acked} of {spy.published})")
        assert spy.most == 8, f"at most {spy.most} records were in flight, with a window of 8"
        bucket_matches(homed, server.url)
        assert "Traceback" not in bridge.log()
    finally:
        spy.stop()
        events.close()
        burst.stop()


def test_the_bridge_killed_with_its_window_in_flight_writes_nothing_twice_and_skips_nothing(
        homed, server, processes):
    spy = Spy(server.url).start()
    burst, events, bridge = start(homed, server.url, processes)
    stopped = False
    try:
        burst.go()
        wait_for(lambda: spy.published >= 500, 30, "500 records published", bridge)
        os.kill(server.proc.pid, signal.SIGSTOP)
        stopped = True
        # What the bridge sends now stays in the server's receive queue, unacknowledged.
        wait_for(lambda: unread_bytes(server.port) >= 16384, 30, "16 KiB of records unread at the stopped server")
        bridge.kill()
        os.kill(server.proc.pid, signal.SIGCONT)
        stopped = False
        burst.join()
        events.wait_for(lambda e: True, count=REPORTS * SENSORS, timeout=30)
        bridge = start_bridge(homed, server.url, processes, log_name="bridge-2.log")
        stream_matches(server.url, events, bridge)
        bucket_matches(homed, server.url)
        assert "Traceback" not in bridge.log()
    finally:
        if stopped:
            os.kill(server.proc.pid, signal.SIGCONT)
        spy.stop()
        events.close()
        burst.stop()


def test_a_cluster_node_killed_in_the_middle_of_a_burst_loses_nothing(homed, cluster, processes):
    burst, events, bridge = start(homed, cluster.urls, processes, "--replicas", "3")
    leader = wait_for(lambda: run(stream_leader(NAMES.stream, cluster.urls)), 15, "the stream's leader")
    node = next(n for n in cluster.nodes if n.name == leader)
    # The spy on a node that stays: it sees the records the bridge sends through any.
    spy = Spy(next(n.url for n in cluster.nodes if n is not node)).start()
    try:
        # Half the burst, then the leader stopped (SIGSTOP: it acknowledges nothing
        # more) and the rest sent: the bridge's records are in flight, unacknowledged,
        # when the leader is killed, however fast or slow the machine.
        burst.hold_after(REPORTS // 2).go()
        wait_for(lambda: spy.published >= REPORTS * SENSORS // 4, 30, "a quarter of the burst published", bridge)
        os.kill(node.proc.pid, signal.SIGSTOP)
        burst.resume()
        # Records in flight: published through a node that stays and not acknowledged,
        # or, when the bridge is connected to the leader itself, unread at the leader.
        wait_for(lambda: spy.published > spy.acked or unread_bytes(node.port) > 0, 30,
                 "records in flight with the leader stopped", bridge)
        node.kill()  # SIGKILL ends a stopped process too
        burst.join()
        events.wait_for(lambda e: True, count=REPORTS * SENSORS, timeout=30)
        survivors = [n.url for n in cluster.nodes if n is not node]
        stream_matches(survivors, events, bridge)
        bucket_matches(homed, survivors)
        new_leader = run(stream_leader(NAMES.stream, survivors))
        assert new_leader and new_leader != leader
        assert "Traceback" not in bridge.log()
    finally:
        spy.stop()
        events.close()
        burst.stop()
