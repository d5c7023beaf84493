#!/usr/bin/env python3
"""The ESPHome provider's benchmarks, on the fake ESPHome device
(tests/fake_device.py, aioesphomeapi's own messages) and a real homed, both
started here on loopback and a temporary directory, killed by pid at the end:

  latency   a state pushed by the fake device (on an order on its stdin, the
            send timestamped by the device) to a `homectl watch --json` line,
            p50/p99 over --states states, one at a time, next to the library's
            own receive time in the same run: an aioesphomeapi APIClient
            connected to the same device (it takes several API clients),
            timing when each state reaches it;
  fleet     --devices fake devices (one process serving them on as many
            ports) started at once, the provider configured for all of them:
            seconds from the provider's start until all are registered and
            reachable in homed, and the provider's RSS (VmRSS) once settled.

    .venv/bin/python -m Clients.providers.esphome.bench.bench_esphome latency --states 10000
    .venv/bin/python -m Clients.providers.esphome.bench.bench_esphome fleet --devices 50

homed and homectl: .build/release's if built, else .build/debug's ($HOMED_BIN
wins); the one used is printed. Times are wall-clock on this machine (both
clocks are CLOCK_MONOTONIC, the machine's); run each a few times and compare
medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from homed import pb
from homed_testkit import HomedProcess, ProviderProcess, installed_program, repository

from ..tests.esp_helpers import FAKE, MAC, accessories, definition, ids_of, write_config

PROVIDER = "esphome"
SENSOR = "living_room_temperature"


def binaries():
    if os.environ.get("HOMED_BIN"):
        homed = Path(os.environ["HOMED_BIN"])
    else:
        build = repository() / ".build"
        homed = build / "release" / "homed"
        if not os.access(homed, os.X_OK):
            homed = build / "debug" / "homed"
    homectl = Path(os.environ.get("HOMECTL_BIN") or homed.with_name("homectl"))
    for path in (homed, homectl):
        if not os.access(path, os.X_OK):
            raise SystemExit(f"no {path}: build homed first")
    print(f"homed: {homed}\nhomectl: {homectl}")
    return str(homed), str(homectl)


def start_fake(workdir, count=1):
    path = os.path.join(workdir, "device.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(definition(), f)
    argv = [sys.executable, FAKE, "--definition", path, "--devices", str(count)]
    fake = ProviderProcess(argv, os.path.join(workdir, "device.log")).start()
    return fake, fake.expect("listening", timeout=30)["ports"]


def start_provider(homed, workdir, devices):
    argv = [sys.executable, installed_program("homed-esphome"), "--socket", homed.socket_path,
            *write_config(workdir, devices), "--state-dir", os.path.join(workdir, "state"), "--log-level", "warning"]
    return ProviderProcess(argv, os.path.join(workdir, "esphome.log")).start()


def wait_all(client, count, provider, timeout):
    deadline = time.monotonic() + timeout
    while True:
        found = accessories(client)
        if len(found) >= count and all(a.reachable for a in found.values()):
            return found
        if provider.proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{sum(a.reachable for a in found.values())} of {count} reachable within {timeout} s\n"
                             f"{provider.log()}")
        time.sleep(0.02)


def stop(*parts):
    for part in parts:
        if part is None:
            continue
        if isinstance(part, HomedProcess):
            part.kill()
        elif isinstance(part, ProviderProcess):
            part.cleanup()
        else:  # a Popen
            part.kill()
            part.wait()


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Library:
    """An aioesphomeapi APIClient on its own event loop in a thread, timing
    the sensor's states as they reach it."""

    def __init__(self, port, key):
        self.key, self.times = key, queue.Queue()
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(self._start(port), self.loop).result(15)

    async def _start(self, port):
        from aioesphomeapi import APIClient
        self.client = APIClient("127.0.0.1", port, None, client_info="bench-esphome")
        await self.client.connect(login=True)
        await self.client.device_info_and_list_entities()
        self.client.subscribe_states(self._on_state)

    def _on_state(self, state):
        if state.key == self.key:
            self.times.put((time.monotonic(), state.state))

    def close(self):
        asyncio.run_coroutine_threadsafe(self.client.disconnect(force=True), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)


class Watch:
    """homectl watch --json on one characteristic's values."""

    def __init__(self, homectl, socket_path, cid):
        self.proc = subprocess.Popen([homectl, "--socket", socket_path, "watch", "--json", "--characteristic",
                                      str(cid), "--kind", "value"], stdout=subprocess.PIPE, bufsize=0)
        self.buffer = b""

    def line(self, timeout):
        """The next line, or None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.proc.stdout], [], [], remaining)[0]:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise SystemExit("homectl watch ended")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def value(self, expected, timeout=10.0):
        """Reads until a line with the value: its arrival time."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.line(deadline - time.monotonic())
            if found is None:
                raise SystemExit(f"no watch line with {expected} within {timeout} s")
            if abs(float(found.get("value", float("nan"))) - expected) < 1e-6:
                return time.monotonic()


def latency_run(args, homed_bin, homectl):
    workdir = tempfile.mkdtemp(prefix="homed-bench-esphome-", dir="/tmp")
    homed = fake = provider = watch = library = None
    try:
        homed = HomedProcess(homed_bin, workdir, in_memory=True).start()
        fake, ports = start_fake(workdir)
        provider = start_provider(homed, workdir, [("bench", ports[0])])
        with homed.client() as client:
            found = wait_all(client, 1, provider, 30)
            cid = ids_of(found[MAC])[("sensor_" + SENSOR, "CurrentTemperature")]
        key = next(e["fields"]["key"] for e in definition()["entities"] if e["fields"]["object_id"] == SENSOR)
        library = Library(ports[0], key)
        watch = Watch(homectl, homed.socket_path, cid)
        # The watch prints nothing until a change: states until one shows it subscribed.
        deadline, warm = time.monotonic() + 20, 0
        while True:
            warm += 1
            value = 90.0 + warm % 2
            fake.send({"state": SENSOR, "fields": {"state": value}})
            fake.expect("done", 10)
            line = watch.line(0.5)
            if line is not None:
                break
            if time.monotonic() > deadline:
                raise SystemExit("homectl watch printed nothing within 20 s")
        while watch.line(0.3) is not None:  # the rest of the warm-up
            pass
        while not library.times.empty():
            library.times.get()
        through, direct = [], []
        for i in range(args.states):
            value = 10.0 + (i % 160) * 0.5  # exact in float32, on the 0.1 step; a new value each time: one event each
            fake.send({"state": SENSOR, "fields": {"state": value}})
            arrived = watch.value(value)
            received, got = library.times.get(timeout=10)
            if got != value:
                raise SystemExit(f"state {i}: the library had {got}, expected {value}")
            sent = fake.expect("done", 10)["sent"]
            through.append((arrived - sent) * 1000)
            direct.append((received - sent) * 1000)
        return through, direct
    finally:
        if library is not None:
            library.close()
        stop(watch.proc if watch else None, provider, fake, homed)
        shutil.rmtree(workdir, ignore_errors=True)


def latency(args):
    homed_bin, homectl = binaries()
    rows = []
    for run in range(args.runs):
        through, direct = latency_run(args, homed_bin, homectl)
        row = (percentile(through, 50), percentile(through, 99), percentile(direct, 50), percentile(direct, 99))
        rows.append(row)
        print(f"run {run + 1}: {args.states} states, one at a time")
        print(f"  device -> homectl watch line:  p50 {row[0]:.3f} ms, p99 {row[1]:.3f} ms")
        print(f"  device -> aioesphomeapi client: p50 {row[2]:.3f} ms, p99 {row[3]:.3f} ms")
        print(f"  homed's share (with the provider) at p50: {row[0] - row[2]:.3f} ms")
    if args.runs > 1:
        med = [statistics.median(r[i] for r in rows) for i in range(4)]
        print(f"median of {args.runs} runs: watch p50 {med[0]:.3f} ms, p99 {med[1]:.3f} ms; library p50 "
              f"{med[2]:.3f} ms, p99 {med[3]:.3f} ms; share at p50 "
              f"{statistics.median(r[0] - r[2] for r in rows):.3f} ms")


def rss_kib(pid):
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit(f"no VmRSS for {pid}")


def fleet(args):
    homed_bin, _ = binaries()
    times, rsses = [], []
    for run in range(args.runs):
        workdir = tempfile.mkdtemp(prefix="homed-bench-esphome-", dir="/tmp")
        homed = fake = provider = None
        try:
            homed = HomedProcess(homed_bin, workdir, in_memory=True).start()
            fake, ports = start_fake(workdir, args.devices)
            with homed.client() as client:
                started = time.monotonic()
                provider = start_provider(homed, workdir, [(f"device-{n}", port) for n, port in enumerate(ports)])
                wait_all(client, args.devices, provider, 120)
                times.append(time.monotonic() - started)
                # Settled: the RSS of three samples 0.5 s apart the same within 1 %, 15 s at most.
                samples, deadline = [rss_kib(provider.pid)], time.monotonic() + 15
                while time.monotonic() < deadline:
                    time.sleep(0.5)
                    samples.append(rss_kib(provider.pid))
                    last = samples[-3:]
                    if len(last) == 3 and max(last) - min(last) <= max(last) / 100:
                        break
                rsses.append(samples[-1] / 1024)
                print(f"run {run + 1}: {args.devices} devices registered and reachable in {times[-1]:.2f} s; "
                      f"provider RSS {rsses[-1]:.1f} MiB")
        finally:
            stop(provider, fake, homed)
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"median of {len(times)}: {statistics.median(times):.2f} s for {args.devices} devices, "
          f"provider RSS {statistics.median(rsses):.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    lat = sub.add_parser("latency")
    lat.add_argument("--states", type=int, default=10000)
    lat.add_argument("--runs", type=int, default=1)
    many = sub.add_parser("fleet")
    many.add_argument("--devices", type=int, default=50)
    many.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    {"latency": latency, "fleet": fleet}[args.command](args)


if __name__ == "__main__":
    main()
