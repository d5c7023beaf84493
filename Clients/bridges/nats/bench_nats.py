#!/usr/bin/env python3
"""homed-nats benchmarks (not a test: figures, not assertions).

    HOMED_BIN=.build/debug/homed .venv/bin/python -m Clients.bridges.nats.bench_nats \
        [--events 20000] [--per-report 1 50] [--rounds 3] [--old-python /tmp/venv-old/bin/python] [--writes 300]

In one run, on one machine, with a real nats-server and homed, rounds of:
1. nats-server's own rate: nats-py's asynchronous publish (`publish_async`, as
   many in flight as the bridge's window) of the messages the bridge would write
   for those events (subjects, headers, bodies), into a stream of their own,
   without homed; and a pull consumer reading them back;
2. homed → homed-nats → JetStream → a remote reader, for each bridge (this
   tree's, and with --old-python another install's, e.g. an older commit's, in
   its own venv) in alternating order: a provider in this process reports
   `--events` values, `--per-report` to a ReportValues call, up to `--depth`
   calls in flight; a remote reader in a process of its own, of the bridge's
   install (homed_nats.remote.RemoteReader), counts them, checking that homed's
   sequence numbers only rise. End to end: from the first report to the reader's last
   event (one clock: CLOCK_MONOTONIC is the machine's). Each bridge gets a site
   (stream and bucket) of its own in each round.
Medians over the rounds are printed last. Then (unless --writes 0) a write's
round trip over request/reply next to the same write over homed's socket.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

import nats
from nats.js import api

from homed import pb
from homed.provider import Provider, Ref
from homed_testkit import HomedProcess, ProviderProcess, homed_binary, kill_pid
from .tests.nats_server import NatsServer

from homed_nats import layout as L
from homed_nats.remote import RemoteReader, remote_write
from homed_testkit import installed_program

SENSORS = 100  # at least the most values of one report: a report names each characteristic once
WINDOW = 1024  # the bridge's default window, and the raw publisher's


def accessories():
    return [{"key": f"s{i}", "name": f"Sensor {i}", "category": "SENSOR",
             "services": [{"type": "TemperatureSensor",
                           "characteristics": [{"type": "CurrentTemperature", "value": 0.0}]}]}
            for i in range(SENSORS)] + [
        {"key": "lamp", "name": "Lamp", "category": "LIGHTBULB",
         "services": [{"type": "Lightbulb", "characteristics": [{"type": "On", "value": False},
                                                                {"type": "Brightness", "value": 0}]}]}]


def records_like_the_bridge(count: int, site: str) -> list:
    """The records the bridge writes for `count` value events (one home, one room)."""
    names = L.Names(site)
    places = {100 + i: (1, 2) for i in range(SENSORS)}
    records = []
    for n in range(count):
        event = pb.Event(seq=n + 1, kind=pb.EVENT_VALUE_CHANGED, time_ms=1_764_000_000_000 + n)
        event.value.characteristic_id = 1000 + n % SENSORS
        event.value.accessory_id = 100 + n % SENSORS
        event.value.service_id = 500 + n % SENSORS
        event.value.value.float_value = (n % 1000) / 10
        records.append(L.event_record(names, "J", event, places, {}))
    return records


async def raw_jetstream(url: str, count: int, round_no: int) -> tuple:
    """nats-py's asynchronous publish of the bridge's messages (expected last
    sequence and all), then a pull consumer reading them: (publish/s, consume/s)."""
    site = f"raw{round_no}"
    records = records_like_the_bridge(count, site)
    nc = await nats.connect(url)
    js = nc.jetstream(timeout=10, publish_async_max_pending=WINDOW)
    names = L.Names(site)
    await js.add_stream(name=names.stream, subjects=names.stream_subjects)
    started = time.perf_counter()
    for i, record in enumerate(records):
        headers = dict(record.headers)
        headers[L.EXPECTED_LAST_SEQ] = str(i)
        await js.publish_async(record.subject, record.body, headers=headers)
    await asyncio.wait_for(js.publish_async_completed(), 60)
    published = count / (time.perf_counter() - started)
    config = api.ConsumerConfig(deliver_policy=api.DeliverPolicy.ALL, ack_policy=api.AckPolicy.NONE)
    sub = await js.pull_subscribe(names.journal + ".>", stream=names.stream, config=config)
    started, got = time.perf_counter(), 0
    while got < count:
        got += len(await sub.fetch(1024, timeout=5))
    consumed = count / (time.perf_counter() - started)
    await js.delete_stream(names.stream)
    await nc.close()
    return published, consumed


async def reader_main(url: str, site: str, count: int) -> None:
    """The remote reader's process: 'ready' once it holds the bucket's snapshot,
    then 'done' with the time of the `count`th value event."""
    nc = await nats.connect(url)
    reader = RemoteReader(nc, L.Names(site), kind="value", batch=1024)
    got, last_seq, disorder = 0, 0, 0
    async for item in reader:
        if item.kind == "snapshot":
            print(json.dumps({"ready": True}), flush=True)
            continue
        if item.kind == "event":
            got += 1
            if item.event.seq <= last_seq:
                disorder += 1
            last_seq = item.event.seq
            if got >= count:
                break
    print(json.dumps({"done": time.monotonic(), "got": got, "disorder": disorder}), flush=True)
    await reader.close()
    await nc.close()


async def _line(proc, timeout):
    line = await asyncio.wait_for(proc.stdout.readline(), timeout)
    if not line:
        raise SystemExit(f"the remote reader ended: {(await proc.stderr.read()).decode()[-2000:]}")
    return json.loads(line)


class Load:
    """An asyncio provider of this process reporting distinct values."""

    def __init__(self, socket_path: str):
        from homed.aio.provider import Provider as AioProvider
        self.provider = AioProvider("bench", accessories(), socket_path=socket_path, on_write=lambda v, a: None)
        self.refs = [Ref(f"s{i}", "TemperatureSensor", "CurrentTemperature") for i in range(SENSORS)]
        self.counter = 0

    async def start(self):
        await self.provider.start()
        if not await self.provider.wait_registered(15):
            raise SystemExit(f"the bench provider was not registered: {self.provider.error}")

    async def report(self, count: int, per_report: int, depth: int) -> None:
        slots = asyncio.Semaphore(depth)
        failures = []

        async def one(values):
            try:
                await self.provider.report(values)
            except Exception as error:  # noqa: BLE001 - counted, the run then said not clean
                failures.append(error)
            finally:
                slots.release()
        tasks = []
        for _ in range(count // per_report):
            values = {}
            for _ in range(per_report):
                # Sensor i gets values i + 1, i + 101, i + 201 … (mod 1000, in tenths;
                # never its first value, 0): each differs from the one before it, so
                # every value reported is an event.
                values[self.refs[self.counter % SENSORS]] = (self.counter % 1000 + 1) / 10
                self.counter += 1
            await slots.acquire()
            tasks.append(asyncio.ensure_future(one(values)))
        await asyncio.gather(*tasks)
        if failures:
            raise SystemExit(f"{len(failures)} reports failed: {failures[0]!r}")


async def end_to_end(python: str, url: str, homed, site: str, load: Load, count: int, per_report: int, depth: int,
                     work: str) -> tuple:
    """(reports/s into homed, events/s at the reader), one bridge run by `python`."""
    program = os.path.join(os.path.dirname(python), "homed-nats")
    bridge = ProviderProcess([python, program, "--socket", homed.socket_path, "--server", url, "--site", site,
                              "--log-level", "warning"], os.path.join(work, f"bridge-{site}.log")).start()
    # The reader is the same install's as the bridge: old and new are compared whole.
    reader = await asyncio.create_subprocess_exec(
        python, "-m", "Clients.bridges.nats.bench_nats", "--reader", url, site, str(count),
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    nc = await nats.connect(url)
    try:
        await _line(reader, 60)
        js = nc.jetstream(timeout=10)
        base = (await js.stream_info(L.Names(site).stream)).state.last_seq
        started = time.monotonic()
        await load.report(count, per_report, depth)
        reported = time.monotonic()
        # When the stream holds them all: the bridge's part, apart from the reader's.
        while (await js.stream_info(L.Names(site).stream)).state.last_seq < base + count:
            await asyncio.sleep(0.005)
        stored = time.monotonic()
        done = await _line(reader, 300)
        if done["disorder"]:
            raise SystemExit(f"{site}: {done['disorder']} events out of order at the reader")
        return count / (reported - started), count / (stored - started), count / (done["done"] - started)
    finally:
        if reader.returncode is None:
            reader.kill()
            await reader.wait()
        bridge.cleanup()
        await nc.close()


def median(values):
    return statistics.median(values) if values else float("nan")


async def rounds(args, server, homed, work) -> None:
    variants = [("new", sys.executable)]
    if args.old_python:
        variants.append(("old", args.old_python))
    load = Load(homed.socket_path)
    await load.start()
    figures = {}
    for r in range(args.rounds):
        published, consumed = await raw_jetstream(server.url, args.events, r)
        figures.setdefault("raw publish", []).append(published)
        figures.setdefault("raw consume", []).append(consumed)
        print(f"round {r + 1}: nats-py publish_async of the bridge's {args.events} messages: {published:,.0f}/s; "
              f"pull consumer: {consumed:,.0f}/s", flush=True)
        order = variants if r % 2 == 0 else variants[::-1]
        for per in args.per_report:
            for name, python in order:
                reported, stored, delivered = await end_to_end(python, server.url, homed, f"{name}{r}p{per}", load,
                                                       args.events, per, args.depth, work)
                figures.setdefault((name, per, "reported"), []).append(reported)
                figures.setdefault((name, per, "delivered"), []).append(delivered)
                figures.setdefault((name, per, "stored"), []).append(stored)
                print(f"round {r + 1}: {name} bridge, {per} value(s) per report: reported {reported:,.0f}/s, "
                      f"in the stream {stored:,.0f}/s, at the remote reader {delivered:,.0f} events/s (end to end)",
                      flush=True)
    await load.provider.stop()
    print(f"\nmedians of {args.rounds} round(s), {args.events} events each:")
    print(f"  nats-py publish_async (nats-server's own rate, no homed): {median(figures['raw publish']):,.0f}/s; "
          f"pull consumer {median(figures['raw consume']):,.0f}/s")
    for per in args.per_report:
        for name, _ in variants:
            print(f"  {name} bridge, {per} per report: at the reader {median(figures[(name, per, 'delivered')]):,.0f}"
                  f" events/s; in the stream {median(figures[(name, per, 'stored')]):,.0f}/s; homed took "
                  f"{median(figures[(name, per, 'reported')]):,.0f}/s")


def writes(args, server, homed, work, home_id) -> None:
    names = L.Names("bench")
    # Writes need a caller the bridge gives the user role: a server with two accounts.
    config = """
listen: 127.0.0.1:{port}
jetstream: {store_dir: "{store}"}
accounts: {
  HOMED: { jetstream: enabled, users: [{user: bridge, password: b}], exports: [{service: "homed.*.write.*"}] }
  REMOTE: { users: [{user: alice, password: a}],
            imports: [{service: {account: HOMED, subject: "homed.*.write.*"}, share: true}] }
}
"""
    server.kill()
    server = NatsServer(work, "acc", config=config).start()
    with open(os.path.join(work, "w.ini"), "w") as f:
        f.write("[roles]\nREMOTE/alice = user\n")
    with open(os.path.join(work, "bridge.user"), "w") as f:
        f.write("username=bridge\npassword=b\n")
    provider = Provider("bench", accessories(), socket_path=homed.socket_path, on_write=lambda v, a: None)
    provider.start()
    provider.wait_registered(15)
    bridge = ProviderProcess([sys.executable, installed_program("homed-nats"), "--socket", homed.socket_path,
                              "--server", server.url, "--site", "bench", "--config", os.path.join(work, "w.ini"),
                              "--user-file", os.path.join(work, "bridge.user"), "--log-level", "warning"],
                             os.path.join(work, "bridge-writes.log")).start()
    try:
        with homed.client() as client:
            lamp = next(a for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories
                        if a.provider_key == "lamp")
            cid = next(c.id for s in lamp.services for c in s.characteristics if c.type_name == "Brightness")

            async def ready():
                nc = await nats.connect(server.url.replace("nats://", "nats://alice:a@"))
                for _ in range(100):
                    try:
                        await remote_write(nc, names, home_id, {cid: pb.Value(int_value=1)}, timeout=1)
                        break
                    except Exception:  # noqa: BLE001
                        await asyncio.sleep(0.1)
                await nc.close()
            asyncio.run(ready())
            over_nats, over_socket = asyncio.run(write_round_trips(server.url.replace("nats://", "nats://alice:a@"),
                                                                   names, home_id, cid, client, args.writes))
        print(f"a write's round trip, {args.writes} writes to a provider's characteristic: over NATS request/reply "
              f"p50 {pct(over_nats, 50):.2f} ms, p99 {pct(over_nats, 99):.2f} ms; over homed's socket "
              f"p50 {pct(over_socket, 50):.2f} ms, p99 {pct(over_socket, 99):.2f} ms")
    finally:
        provider.stop()
        bridge.cleanup()
        server.kill()


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--reader":
        asyncio.run(reader_main(sys.argv[2], sys.argv[3], int(sys.argv[4])))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--per-report", type=int, nargs="+", default=[1, 50],
                        help=f"values per ReportValues call (at most {SENSORS})")
    parser.add_argument("--depth", type=int, default=16, help="ReportValues calls in flight")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--old-python", help="the python of a venv holding another homed-nats, run alternately")
    parser.add_argument("--writes", type=int, default=300)
    args = parser.parse_args()
    if any(not 1 <= p <= SENSORS for p in args.per_report):
        parser.error(f"--per-report: 1 to {SENSORS}")
    binary, _ = homed_binary()
    work = tempfile.mkdtemp(prefix="homed-nats-bench-")
    server = NatsServer(work).start()
    homed = HomedProcess(binary, work, in_memory=True).start()
    try:
        with homed.client() as client:
            home_id = client.call("ChangeLayout", pb.LayoutRequest(add_home=pb.AddHome(name="Bench"))).created_id
        print(f"homed {binary}, nats-server {server.url}, {os.cpu_count()} CPUs, load average "
              f"{os.getloadavg()[0]:.1f}", flush=True)
        asyncio.run(rounds(args, server, homed, work))
        if args.writes:
            writes(args, server, homed, work, home_id)
    finally:
        homed.kill()
        server.kill()


if __name__ == "__main__":
    main()
