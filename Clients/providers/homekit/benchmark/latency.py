#!/usr/bin/env python3
"""Write → accessory confirmation, p50/p99, through homed and the provider next to
aiohomekit writing to the same accessory directly, in the same run; and an
accessory's event → a homed subscriber, next to aiohomekit receiving the same
event directly (a benchmark, not a test: nothing here asserts a time).

    HOMED_BIN=/tmp/homed-bin/homed .venv/bin/python -m Clients.providers.homekit.benchmark.latency [-n 500]

It starts a homed (in memory), the test accessory (tests/accessory_server.py,
HAP-python on loopback), pairs with it with the provider's `pair` command, starts
the provider, and then measures, each after a warm-up:

- homed: a Python client's WriteCharacteristics of the lamp's Brightness, which
  returns once the provider's write was confirmed by the accessory's answer
  (client → homed → provider → accessory and back);
- homectl: `homectl set` processes (process start included), fewer of them;
- direct: aiohomekit's put_characteristics of the same characteristic on a
  connection of its own (with the provider's pairing keys), the floor;
- events: a button press on the accessory (stamped with CLOCK_MONOTONIC, which the
  processes share) to its arrival at a homed subscriber (accessory → provider →
  homed → subscriber) and, for the same press, at an aiohomekit connection
  subscribed directly (the floor).
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

from homed import pb
from homed_testkit import HomedProcess, homectl_binary, require_binary
from ..tests.hk_helpers import (CODE, KEYS, Accessory, ids_of, key, run_cli, start_provider,
                        wait_accessories)


def percentiles(samples):
    ordered = sorted(samples)
    p = lambda q: ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]  # noqa: E731
    return {"n": len(ordered), "p50_ms": p(0.50) * 1e3, "p99_ms": p(0.99) * 1e3,
            "mean_ms": statistics.fmean(ordered) * 1e3}


def through_homed(client, cid, n):
    samples = []
    for i in range(n):
        value = pb.Value(int_value=10 + i % 80)
        start = time.perf_counter()
        result = client.write({cid: value}).results[0]
        samples.append(time.perf_counter() - start)
        if result.code != 0:
            raise SystemExit(f"write failed: {result.message}")
    return samples


def through_homectl(socket_path, n):
    env = dict(os.environ, HOMED_SOCKET=socket_path)
    samples = []
    for i in range(n):
        start = time.perf_counter()
        done = subprocess.run([homectl_binary(), "set", "Desk lamp/Brightness", str(10 + i % 80)], env=env,
                              capture_output=True)
        samples.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"homectl failed: {done.stderr.decode()}")
    return samples


async def direct(state_dir, n):
    from aiohomekit.controller.ip.pairing import IpPairing
    from homed_hap.pairing import controller
    from homed_hap.store import Store
    [record] = Store(state_dir).load_all()
    pairing = IpPairing(controller(), record.pairing)
    try:
        await pairing.list_accessories_and_characteristics()
        samples = []
        for i in range(n):
            start = time.perf_counter()
            await pairing.put_characteristics([(2, 10, 10 + i % 80)])
            samples.append(time.perf_counter() - start)
        return samples
    finally:
        await pairing.close()


class DirectEvents:
    """An aiohomekit connection of its own, subscribed to the button, on a
    loop in a thread; records each event's arrival (CLOCK_MONOTONIC)."""

    def __init__(self, state_dir):
        import threading
        self.state_dir = state_dir
        self.arrivals = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        if not self.ready.wait(20):
            raise SystemExit("the direct aiohomekit connection did not subscribe")

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._open())
        self.loop.run_forever()

    async def _open(self):
        from aiohomekit.controller.ip.pairing import IpPairing
        from homed_hap.pairing import controller
        from homed_hap.store import Store
        [record] = Store(self.state_dir).load_all()
        self.pairing = IpPairing(controller(), record.pairing)
        self.pairing.dispatcher_connect(lambda event: event and self.arrivals.append(time.monotonic()))
        await self.pairing.list_accessories_and_characteristics()
        await self.pairing.subscribe([(5, 9)])
        self.ready.set()

    def close(self):
        async def close():
            await self.pairing.close()
        asyncio.run_coroutine_threadsafe(close(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)


def events(daemon, accessory, state, cid, n):
    """(through homed, direct) latencies of n presses, each waited for on both."""
    from homed_testkit import EventLog, is_value
    direct_events = DirectEvents(state)
    request = pb.SubscribeRequest()
    request.filter.characteristic_ids.append(cid)
    log = EventLog(daemon.socket_path, request)
    log.wait_subscribed()
    through, direct_samples = [], []
    try:
        for i in range(n):
            accessory.send({"press_timed": [5, i % 3]})
            pressed = accessory.process.expect("pressed", 10)["at"]
            [(arrived, _)] = log.wait_for(is_value(cid), timeout=10, count=i + 1)[i:i + 1]
            deadline = time.monotonic() + 10
            while len(direct_events.arrivals) <= i and time.monotonic() < deadline:
                time.sleep(0.001)
            through.append(arrived - pressed)
            direct_samples.append(direct_events.arrivals[i] - pressed)
    finally:
        log.close()
        direct_events.close()
    return through, direct_samples


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=500, help="writes per path (homectl: n/10)")
    parser.add_argument("--warmup", type=int, default=50)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="homed-hk-bench-", dir="/tmp")
    processes = []
    daemon = HomedProcess(require_binary(), workdir, in_memory=True).start()
    try:
        accessory = Accessory(workdir, processes).start()
        state = os.path.join(workdir, "provider-state")
        result = run_cli(state, "pair", accessory.address, stdin=CODE + "\n")
        if result.returncode != 0:
            raise SystemExit(result.stderr)
        # (info, not the tests' debug: logging costs here what it costs in a service)
        provider = start_provider(daemon, state, processes, "--log-level", "info")
        with daemon.client("bench") as client:
            found = wait_accessories(client, KEYS, provider)
            cid = ids_of(found[key(2)])[("Lightbulb", "Brightness")]
            through_homed(client, cid, args.warmup)
            homed_samples = through_homed(client, cid, args.n)
            homectl_samples = through_homectl(daemon.socket_path, max(10, args.n // 10))
            asyncio.run(direct(state, args.warmup))
            direct_samples = asyncio.run(direct(state, args.n))
            homed_again = through_homed(client, cid, args.n)
            button = ids_of(found[key(5)])[("StatelessProgrammableSwitch", "ProgrammableSwitchEvent")]
            events(daemon, accessory, state, button, args.warmup // 5)
            event_homed, event_direct = events(daemon, accessory, state, button, max(20, args.n // 5))
        rows = [("python client → homed → provider → accessory", homed_samples),
                ("  the same, again after the direct run", homed_again),
                ("homectl set (process start included)", homectl_samples),
                ("aiohomekit → accessory (direct, the floor)", direct_samples)]
        print(f"write → accessory confirmation, {os.cpu_count()} cores, HAP-python accessory on loopback")
        for name, samples in rows:
            s = percentiles(samples)
            print(f"  {name:48s} n={s['n']:4d}  p50 {s['p50_ms']:7.2f} ms  p99 {s['p99_ms']:7.2f} ms  "
                  f"mean {s['mean_ms']:7.2f} ms")
        added = percentiles(homed_samples)["p50_ms"] - percentiles(direct_samples)["p50_ms"]
        print(f"  homed + provider add {added:.2f} ms at p50")
        print("accessory event (a button press) → arrival")
        for name, samples in (("→ provider → homed → a homed subscriber", event_homed),
                              ("→ aiohomekit subscribed directly (the floor)", event_direct)):
            s = percentiles(samples)
            print(f"  {name:48s} n={s['n']:4d}  p50 {s['p50_ms']:7.2f} ms  p99 {s['p99_ms']:7.2f} ms  "
                  f"mean {s['mean_ms']:7.2f} ms")
        added = percentiles(event_homed)["p50_ms"] - percentiles(event_direct)["p50_ms"]
        print(f"  homed + provider add {added:.2f} ms at p50")
    finally:
        for process in processes:
            process.cleanup()
        daemon.kill()


if __name__ == "__main__":
    main()
