"""The home the tests export, the bridge as a process, and what the stream
holds, read back with nats-py (asyncio.run in the test's thread)."""

import asyncio
import os
import sys
import threading

import nats
from nats.js import api

from homed import pb
from homed.provider import Provider, Ref
from homed_testkit import EventLog, ProviderProcess

from homed_nats import layout as L
from homed_testkit import installed_program
from homed_testkit.providers import wait_log

PROGRAM = installed_program("homed-nats")

ACCESSORIES = [
    {"key": "lamp", "name": "Lamp", "category": "LIGHTBULB", "room": "Kitchen",
     "services": [{"type": "Lightbulb", "characteristics": [
         {"type": "On", "value": False}, {"type": "Brightness", "value": 40}]}]},
    {"key": "sensor", "name": "Sensor", "category": "SENSOR", "room": "Garage",
     "services": [{"type": "TemperatureSensor", "characteristics": [{"type": "CurrentTemperature", "value": 18.5}]}]},
]
TEMP = Ref("sensor", "TemperatureSensor", "CurrentTemperature")
BRIGHTNESS = Ref("lamp", "Lightbulb", "Brightness")


class Devices:
    def __init__(self, socket_path):
        self.lock = threading.Lock()
        self.values = {}
        self.provider = Provider("devices", ACCESSORIES, on_read=self.on_read, on_write=self.on_write,
                                 socket_path=socket_path, client_name="test devices")

    def on_read(self, refs):
        with self.lock:
            return {ref: self.values[ref] for ref in refs if ref in self.values}

    def on_write(self, values, atomic):
        with self.lock:
            self.values.update(values)
        return None

    def start(self):
        self.provider.start()
        if not self.provider.wait_registered(15):
            raise AssertionError(f"the test provider was not registered: {self.provider.error}")
        return self

    def report(self, ref, value):
        with self.lock:
            self.values[ref] = value
        self.provider.report({ref: value})

    def stop(self):
        self.provider.stop()


def make_home(client):
    home_id = client.call("ChangeLayout", pb.LayoutRequest(add_home=pb.AddHome(name="Test Home"))).created_id
    for room in ("Kitchen", "Garage"):
        client.call("ChangeLayout", pb.LayoutRequest(add_room=pb.AddRoom(home_id=home_id, name=room)))
    return home_id


def found(client):
    """{provider key: Accessory}"""
    return {a.provider_key: a for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories}


def char_id(accessory, characteristic):
    return next(c.id for s in accessory.services for c in s.characteristics if c.type_name == characteristic)


def start_bridge(homed, urls, processes, *extra, log_name="bridge.log", site="home"):
    argv = [sys.executable, PROGRAM, "--socket", homed.socket_path, "--site", site, "--log-level", "debug", *extra]
    for url in ([urls] if isinstance(urls, str) else urls):
        argv += ["--server", url]
    process = ProviderProcess(argv, os.path.join(homed.directory, log_name))
    processes.append(process)
    return process.start()


def wait_snapshot(bridge, timeout=10.0):
    """Waits until the bridge has homed's snapshot. From then on every change homed
    makes reaches the stream as an event; one made before it (while the bridge is
    still subscribing) may be folded into the snapshot instead."""
    return wait_log(bridge, "received: the changes after it follow", timeout=timeout)


def run(coro):
    return asyncio.run(coro)


async def _connect(urls, **options):
    return await nats.connect(urls if isinstance(urls, list) else [urls], connect_timeout=2,
                              max_reconnect_attempts=3, **options)


async def _read_stream(urls, names, options):
    nc = await _connect(urls, **options)
    try:
        js = nc.jetstream(timeout=5)
        info = await js.stream_info(names.stream)
        out = []
        if info.state.messages == 0:
            return out
        config = api.ConsumerConfig(deliver_policy=api.DeliverPolicy.ALL, ack_policy=api.AckPolicy.NONE,
                                    mem_storage=True, inactive_threshold=30.0)
        sub = await js.pull_subscribe(names.stream_subjects[0], stream=names.stream, config=config)
        while not out or out[-1][0] < info.state.last_seq:
            for msg in await sub.fetch(1024, timeout=5):
                out.append((msg.metadata.sequence.stream, msg.subject, dict(msg.headers or {}), msg.data))
        await sub.unsubscribe()
        return out
    finally:
        await nc.close()


def read_stream(urls, names, **options):
    """[(stream seq, subject, headers, data)] of every message in the stream."""
    return run(_read_stream(urls, names, options))


def journal_events(records):
    """[(journal, homed seq, Event)] of the event records, in stream order."""
    out = []
    for _, _, headers, data in records:
        tail = L.tail_of(headers)
        if tail and tail[2] == L.EVENT:
            for event in pb.SubscribeResponse.FromString(data).events:
                out.append((tail[0], event.seq, event))
    return out


async def _kv(urls, names, options):
    nc = await _connect(urls, **options)
    try:
        from homed_nats.remote import read_snapshot
        return await read_snapshot(nc.jetstream(timeout=5), names)
    finally:
        await nc.close()


def read_bucket(urls, names, **options):
    return run(_kv(urls, names, options))


def direct_log(homed):
    """Everything homed sends a subscriber: what the stream must hold."""
    events = EventLog(homed.socket_path, pb.SubscribeRequest(policy=pb.SLOW_DISCONNECT, queue_limit=16384))
    events.wait_subscribed()
    return events


class ReaderThread:
    """homed_nats.remote.RemoteReader in a thread of its own (its own event
    loop), recording every item."""

    def __init__(self, urls, names, **filters):
        self.urls, self.names, self.filters = urls, names, filters
        self.items = []
        self.error = None
        self.cond = threading.Condition()
        self.stopping = False
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self):
        from homed_nats.remote import RemoteReader
        try:
            nc = await nats.connect(self.urls if isinstance(self.urls, list) else [self.urls],
                                    max_reconnect_attempts=-1, reconnect_time_wait=0.2, connect_timeout=2)
            reader = RemoteReader(nc, self.names, **self.filters)
            while not self.stopping:
                try:
                    item = await asyncio.wait_for(reader.__anext__(), 0.5)
                except asyncio.TimeoutError:
                    continue
                with self.cond:
                    self.items.append(item)
                    self.cond.notify_all()
            await reader.close()
            await nc.close()
        except Exception as error:  # noqa: BLE001 - reported by wait
            with self.cond:
                self.error = error
                self.cond.notify_all()

    def start(self):
        self.thread.start()
        return self

    def wait(self, condition, timeout=20.0, what="the reader's items"):
        with self.cond:
            if not self.cond.wait_for(lambda: self.error is not None or condition(self.items), timeout):
                raise AssertionError(f"{what} not within {timeout} s ({len(self.items)} items)")
            if self.error is not None:
                raise AssertionError(f"the reader failed: {self.error!r}")

    def stop(self):
        self.stopping = True
        self.thread.join(5)

    def state(self):
        """{characteristic id: pb.Value} from the last snapshot and the events after it, and
        the events' homed sequence numbers per journal."""
        values, seqs = {}, []
        for item in self.items:
            if item.kind == "snapshot":
                values = {cid: L.value_from_json(e["value"]) for cid, e in item.values.items()}
            elif item.kind == "event" and item.event.WhichOneof("body") == "value":
                values[item.event.value.characteristic_id] = item.event.value.value
            if item.kind == "event":
                seqs.append((item.journal, item.event.seq))
        return values, seqs
