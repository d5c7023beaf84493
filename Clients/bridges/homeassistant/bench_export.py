#!/usr/bin/env python3
"""Benchmark (not a test): does homed-mqtt keep up with 10 000 changes/s?

Starts a homed (in memory), mosquitto on a free loopback port, a provider in
this process with N temperature sensors, the bridge as a real process and a
paho subscriber on the state topics. The provider reports a new value for
every sensor every 1/rate*N seconds (batches of N values in one ReportValues
call) for the given duration; each value encodes its own number, so the
subscriber knows when it was reported. Prints the rate at which state
messages reached the subscriber, the lag from report to arrival (p50, p99,
max), and whether every sensor's last state on the broker is the last value
reported (homed's subscriber queue may merge values under load — coalescing,
latest wins — so fewer messages than changes can arrive; the last one never
is lost).

    HOMED_BIN=/tmp/homed-bin/homed .venv/bin/python -m Clients.bridges.homeassistant.bench_export \\
        [--rate 10000] [--seconds 10] [--sensors 100]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))

import paho.mqtt.client as mqtt

from homed import pb
from homed.provider import Provider, Ref
from homed_testkit import HomedProcess, ProviderProcess, kill_pid
from homed_testkit.mqtt_broker import Mosquitto, free_port
from homed_testkit import installed_program


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=10000, help="changes per second made through homed")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--sensors", type=int, default=100)
    parser.add_argument("--profile", metavar="FILE", help="run the bridge under cProfile, its stats to FILE")
    args = parser.parse_args()
    binary = os.environ.get("HOMED_BIN", os.path.join(HERE, "..", "..", "..", ".build", "debug", "homed"))
    work = tempfile.mkdtemp(prefix="homed-bench-ha-")
    homed = Mosquitto_ = bridge = provider = None
    try:
        homed = HomedProcess(binary, work, in_memory=True).start()
        broker = Mosquitto_ = Mosquitto(work, free_port()).start()
        sensors = [{"key": f"s{n}", "name": f"Sensor {n}", "category": "SENSOR",
                    "services": [{"type": "TemperatureSensor",
                                  "characteristics": [{"type": "CurrentTemperature", "value": 0.0}]}]}
                   for n in range(args.sensors)]
        provider = Provider("bench", sensors, socket_path=homed.socket_path, on_read=lambda refs: {})
        provider.start()
        if not provider.wait_registered(30):
            raise SystemExit(f"the provider was not registered: {provider.error}")
        with homed.client() as client:
            ids = {a.provider_key: a for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories}
        topic_of = {}
        for key, a in ids.items():
            service = next(s for s in a.services if s.type_name == "TemperatureSensor")
            topic_of[f"homed/a{a.id}_s{service.id}/state"] = key

        arrivals = []  # (monotonic time, key, value)
        lock = threading.Lock()
        ready = threading.Event()

        def on_message(c, u, m):
            now = time.monotonic()
            key = topic_of.get(m.topic)
            if key is not None:
                with lock:
                    arrivals.append((now, key, json.loads(m.payload)["value"]))

        sub = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2)
        sub.on_message = on_message
        sub.on_connect = lambda c, u, f, r, p=None: (c.subscribe("homed/+/state"), ready.set())
        sub.connect("127.0.0.1", broker.port)
        sub.loop_start()
        ready.wait(10)
        profile = ["-m", "cProfile", "-o", os.path.abspath(args.profile)] if args.profile else []
        bridge = ProviderProcess([sys.executable, *profile, installed_program("homed-mqtt"), "--socket",
                                  homed.socket_path, "--broker", broker.url, "--log-level", "warning"],
                                 os.path.join(work, "bridge.log"))
        bridge.start()
        deadline = time.monotonic() + 20
        while len({k for _, k, _ in arrivals}) < args.sensors:
            if time.monotonic() > deadline:
                raise SystemExit("the bridge did not publish every sensor's state")
            time.sleep(0.05)
        # The start-up states may come twice (the home loaded, then the broker's
        # connection republishing): start counting once they have stopped.
        while True:
            with lock:
                seen = len(arrivals)
            time.sleep(0.5)
            with lock:
                if len(arrivals) == seen:
                    arrivals.clear()
                    break

        # Report: value k*0.1 (the catalog's step) for the k-th round, one round every sensors/rate seconds.
        period = args.sensors / args.rate
        rounds = int(args.seconds / period)
        sent_at = {}
        start = time.monotonic()
        for k in range(1, rounds + 1):
            target = start + (k - 1) * period
            delay = target - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            value = round(k * 0.1, 1)
            sent_at[k] = time.monotonic()
            provider.report({Ref(f"s{n}", "TemperatureSensor", "CurrentTemperature"): value
                             for n in range(args.sensors)})
        send_elapsed = time.monotonic() - start
        last_value = round(rounds * 0.1, 1)
        deadline = time.monotonic() + 30
        while True:
            with lock:
                done = {k for _, k, v in arrivals if v == last_value}
            if len(done) == args.sensors or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        end = time.monotonic()
        with lock:
            got = list(arrivals)
        lags = sorted(t - sent_at[round(v * 10)] for t, _, v in got if round(v * 10) in sent_at)
        first, last = got[0][0], max(t for t, _, _ in got)
        changes = rounds * args.sensors
        print(f"changes made through homed: {changes} in {send_elapsed:.2f} s ({changes / send_elapsed:.0f}/s)")
        print(f"state messages received:    {len(got)} in {last - first:.2f} s "
              f"({len(got) / max(last - first, 1e-9):.0f}/s); {changes - len(got)} merged by coalescing")
        print(f"lag report -> subscriber:   p50 {statistics.median(lags) * 1000:.1f} ms, "
              f"p99 {lags[int(len(lags) * 0.99) - 1] * 1000:.1f} ms, max {lags[-1] * 1000:.1f} ms")
        print(f"last value on every sensor: {len(done)}/{args.sensors} (drained {end - start - send_elapsed:.2f} s "
              f"after the last report)")
        return 0 if len(done) == args.sensors else 1
    finally:
        if bridge is not None:
            bridge.proc.terminate()  # a clean stop (and the profile written)
            try:
                bridge.proc.wait(10)
            except Exception:  # noqa: BLE001 - killed below
                pass
            bridge.cleanup()
        if provider is not None:
            provider.stop()
        if Mosquitto_ is not None:
            Mosquitto_.kill()
        if homed is not None:
            kill_pid(homed.proc)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
