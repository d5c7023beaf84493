#!/usr/bin/env python3
"""The Zigbee2MQTT provider's benchmarks, on a real mosquitto and a real homed
(both started here on loopback and a temporary directory, killed at the end):

  latency   a device's state message on the broker to a `homectl watch` line,
            p50/p99 over --messages messages, next to mosquitto's own
            publish-to-subscriber time for the same messages (a paho subscriber
            on the device's topic, in the same run);
  register  --devices Zigbee2MQTT devices (climate sensors) registered and seeded
            with /get, from the provider's start to the last accessory holding
            its value.
  corpus    the whole corpus (tests/corpus: every device Zigbee2MQTT documents)
            published at once as `bridge/devices`, as after a coordinator
            restart, to a provider already following the broker: seconds until
            every device the mapping takes is registered in a fresh homed, and
            until all of them are reachable.

    python3 Clients/providers/zigbee2mqtt/bench/bench_z2m.py latency --messages 10000
    python3 Clients/providers/zigbee2mqtt/bench/bench_z2m.py register --devices 1000
    python3 Clients/providers/zigbee2mqtt/bench/bench_z2m.py corpus --runs 3

Times are wall-clock on this machine; run each a few times and compare medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROVIDER_DIR = HERE.parent
REPO = PROVIDER_DIR.parents[2]

import paho.mqtt.client as mqtt

from ..tests import corpus_coverage
from ..tests import devices as catalog
from homed import pb
from homed_testkit import HomedProcess, ProviderProcess, homed_binary
from homed_testkit.mqtt_broker import Mosquitto, free_port
from homed_testkit import installed_program

BASE = "zigbee2mqtt"


def climate_sensor(n: int) -> dict:
    return catalog.device(n, f"sensor {n}", "WSDCGQ11LM", "Xiaomi", "Aqara temperature and humidity sensor",
                          [catalog.numeric("temperature", "°C", access=5), catalog.numeric("humidity", "%", access=5),
                           catalog.numeric("battery", "%", 0, 100, access=5)])


class Coordinator:
    """The smallest fake Zigbee2MQTT for a benchmark: retained bridge state and
    devices, /get answered with the device's state."""

    def __init__(self, port: int, devices: list):
        self.devices = devices
        self.states = {d["friendly_name"]: {"temperature": 20.0 + d["network_address"] % 10, "humidity": 50.0,
                                            "battery": 90} for d in devices}
        self.client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id="bench-z2m")
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.ready = threading.Event()
        self.port = port

    def start(self) -> "Coordinator":
        self.client.connect("127.0.0.1", self.port)
        self.client.loop_start()
        if not self.ready.wait(10):
            raise SystemExit("the benchmark's coordinator could not connect")
        return self

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        client.subscribe(f"{BASE}/+/get", qos=0)
        client.publish(f"{BASE}/bridge/state", json.dumps({"state": "online"}), qos=1, retain=True)
        client.publish(f"{BASE}/bridge/devices", json.dumps([catalog.COORDINATOR] + self.devices), qos=1, retain=True)
        self.ready.set()

    def _on_message(self, client, userdata, message):
        name = message.topic[len(BASE) + 1:-len("/get")]
        if name in self.states:
            client.publish(f"{BASE}/{name}", json.dumps(self.states[name]), qos=0)

    def publish(self, name: str, state: dict) -> None:
        self.client.publish(f"{BASE}/{name}", json.dumps(state), qos=0)

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def start_world(workdir: str, devices: list):
    binary, _ = homed_binary()
    broker = Mosquitto(workdir, free_port()).start()
    homed = HomedProcess(binary, workdir, in_memory=True)
    homed.start()
    coordinator = Coordinator(broker.port, devices).start()
    return broker, homed, coordinator


def stop_world(workdir, broker, homed, coordinator, provider) -> None:
    """Everything start_world and start_provider started (None: not started), by pid."""
    for part in (provider, coordinator):
        if part is not None:
            (part.cleanup if hasattr(part, "cleanup") else part.stop)()
    if homed is not None:
        homed.kill()
    if broker is not None:
        broker.kill()
    shutil.rmtree(workdir, ignore_errors=True)


def start_provider(homed, broker, workdir):
    argv = [sys.executable, installed_program("homed-zigbee2mqtt"), "--socket", homed.socket_path,
            "--broker", broker.url, "--log-level", "warning"]
    return ProviderProcess(argv, os.path.join(workdir, "z2m.log")).start()


def accessories(client):
    return [a for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories
            if a.provider == "zigbee2mqtt"]


def seeded(client, count: int) -> bool:
    found = accessories(client)
    if len(found) < count:
        return False
    ids = [c.id for a in found for s in a.services if s.type_name == "TemperatureSensor"
           for c in s.characteristics if c.type_name == "CurrentTemperature"]
    reads = client.read(ids).reads
    return len(ids) == count and all(r.code == 0 and r.value.WhichOneof("kind") for r in reads)


def register(args) -> None:
    results = []
    for run in range(args.runs):
        workdir = tempfile.mkdtemp(prefix="homed-bench-z2m-", dir="/tmp")
        broker = homed = coordinator = provider = None
        try:
            devices = [climate_sensor(n) for n in range(1, args.devices + 1)]
            broker, homed, coordinator = start_world(workdir, devices)
            with homed.client() as client:
                started = time.monotonic()
                provider = start_provider(homed, broker, workdir)
                deadline = started + 120
                while not seeded(client, args.devices):
                    if time.monotonic() > deadline:
                        raise SystemExit(f"not seeded within 120 s\n{provider.log()}")
                    time.sleep(0.05)
                results.append(time.monotonic() - started)
                print(f"run {run + 1}: {args.devices} devices registered and seeded in {results[-1]:.2f} s")
        finally:
            stop_world(workdir, broker, homed, coordinator, provider)
    print(f"median of {len(results)}: {statistics.median(results):.2f} s for {args.devices} devices")


def corpus(args) -> None:
    from homed_z2m.mapping import Unsupported, map_device
    devices = corpus_coverage.corpus_devices()
    expected = corpus_coverage.measure(devices, map_device, Unsupported).registered
    registered, reachable = [], []
    for run in range(args.runs):
        workdir = tempfile.mkdtemp(prefix="homed-bench-z2m-", dir="/tmp")
        broker = homed = coordinator = provider = None
        try:
            # The coordinator starts with no device; the provider follows it.
            broker, homed, coordinator = start_world(workdir, [])
            provider = start_provider(homed, broker, workdir)
            with homed.client() as client:
                deadline = time.monotonic() + 30
                while not any(p.provider_id == "zigbee2mqtt" and p.connected
                              for p in client.call("ListProviders", pb.ListProvidersRequest()).providers):
                    if time.monotonic() > deadline:
                        raise SystemExit(f"the provider did not connect\n{provider.log()}")
                    time.sleep(0.05)
                # The coordinator restarted with every device: one bridge/devices.
                started = time.monotonic()
                coordinator.client.publish(f"{BASE}/bridge/devices", json.dumps([catalog.COORDINATOR] + devices),
                                           qos=1, retain=True)
                deadline = started + 600
                done_registered = None
                while True:
                    found = accessories(client)
                    if done_registered is None and len(found) >= expected:
                        done_registered = time.monotonic() - started
                    if done_registered is not None and all(a.reachable for a in found):
                        break
                    if time.monotonic() > deadline:
                        raise SystemExit(f"{len(found)} of {expected} registered within 600 s\n{provider.log()}")
                    time.sleep(0.05)
                registered.append(done_registered)
                reachable.append(time.monotonic() - started)
                print(f"run {run + 1}: {len(found)} of {len(devices)} corpus devices registered in "
                      f"{registered[-1]:.2f} s, all reachable in {reachable[-1]:.2f} s")
        finally:
            stop_world(workdir, broker, homed, coordinator, provider)
    print(f"median of {len(registered)}: {statistics.median(registered):.2f} s to register {expected} devices, "
          f"{statistics.median(reachable):.2f} s until all are reachable")


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def latency(args) -> None:
    workdir = tempfile.mkdtemp(prefix="homed-bench-z2m-", dir="/tmp")
    broker = homed = coordinator = provider = watch = None
    try:
        broker, homed, coordinator = start_world(workdir, [climate_sensor(1)])
        provider = start_provider(homed, broker, workdir)
        with homed.client() as client:
            deadline = time.monotonic() + 30
            while not seeded(client, 1):
                if time.monotonic() > deadline:
                    raise SystemExit(f"the sensor was not registered\n{provider.log()}")
                time.sleep(0.05)
            sensor = accessories(client)[0]
            cid = next(c.id for s in sensor.services for c in s.characteristics if c.type_name == "CurrentTemperature")
        homectl = str(Path(homed_binary()[0]).with_name("homectl"))
        watch = subprocess.Popen([homectl, "--socket", homed.socket_path, "watch", "--json", "--characteristic",
                                  str(cid), "--kind", "value"], stdout=subprocess.PIPE, bufsize=0)
        # mosquitto's own share: a plain subscriber on the device's topic.
        direct: dict = {}  # message index -> when the plain subscriber had it
        subscriber = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id="bench-sub")
        subscribed = threading.Event()
        subscriber.on_connect = lambda c, *a: c.subscribe(f"{BASE}/sensor 1", qos=0)
        subscriber.on_subscribe = lambda *a: subscribed.set()
        subscriber.on_message = lambda c, u, m: direct.setdefault(json.loads(m.payload).get("bench"), time.monotonic())
        subscriber.connect("127.0.0.1", broker.port)
        subscriber.loop_start()
        subscribed.wait(10)
        time.sleep(1.0)  # the watch's subscription is open (it prints nothing until a change)
        sent, arrived = [], []
        reader = watch.stdout
        for i in range(args.messages):
            value = round(10.0 + (i % 2000) * 0.1, 1)  # a new value each time: each is one event
            sent.append(time.monotonic())
            coordinator.publish("sensor 1", {"temperature": value, "humidity": 50.0, "battery": 90, "bench": i})
            while True:  # skip a line of an earlier change (the seeding's) that came late
                line = reader.readline()
                if not line:
                    raise SystemExit("homectl watch ended")
                if json.loads(line).get("value") == value:
                    break
                if i > 0:
                    raise SystemExit(f"message {i}: expected {value}, watch printed {line!r}")
            arrived.append(time.monotonic())
        subscriber.loop_stop()
        through = [(a - s) * 1000 for s, a in zip(sent, arrived)]
        broker_only = [(direct[i] - s) * 1000 for i, s in enumerate(sent) if i in direct]
        print(f"{args.messages} state messages, one at a time")
        print(f"  broker -> homectl watch line: p50 {percentile(through, 50):.3f} ms, p99 {percentile(through, 99):.3f} ms")
        print(f"  broker -> paho subscriber:    p50 {percentile(broker_only, 50):.3f} ms, "
              f"p99 {percentile(broker_only, 99):.3f} ms ({len(broker_only)} received)")
        print(f"  homed's share at p50: {percentile(through, 50) - percentile(broker_only, 50):.3f} ms")
    finally:
        if watch is not None:
            watch.kill()
            watch.wait()
        stop_world(workdir, broker, homed, coordinator, provider)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    lat = sub.add_parser("latency")
    lat.add_argument("--messages", type=int, default=10000)
    reg = sub.add_parser("register")
    reg.add_argument("--devices", type=int, default=1000)
    reg.add_argument("--runs", type=int, default=3)
    whole = sub.add_parser("corpus")
    whole.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    {"latency": latency, "register": register, "corpus": corpus}[args.command](args)


if __name__ == "__main__":
    main()
