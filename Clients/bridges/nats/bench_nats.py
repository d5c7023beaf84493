#!/usr/bin/env python3
"""homed-nats benchmarks (not a test: figures, not assertions).

    HOMED_BIN=.build/debug/homed .venv/bin/python -m Clients.bridges.nats.bench_nats [--events 3000]

In one run, on one machine, with a real nats-server, homed and the bridge:
1. raw JetStream: publish (pipelined, with Nats-Msg-Id, as the bridge does) and
   consume (a pull consumer) N messages of an event's size: the ceiling;
2. homed → homed-nats → JetStream → a remote reader (homed_nats.remote), events
   one by one (one value per ReportValues call) and batched (20 values per call);
3. a write's round trip over request/reply (homed_nats.remote.remote_write)
   next to the same write over homed's socket.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

import nats
from nats.js import api

from homed import pb
from homed.provider import Provider, Ref
from homed_testkit import HomedProcess, ProviderProcess, homed_binary
from .tests.nats_server import NatsServer

from homed_nats import layout as L
from homed_nats.remote import RemoteReader, remote_write
from homed_testkit import installed_program

SENSORS = 20


def accessories():
    return [{"key": f"s{i}", "name": f"Sensor {i}", "category": "SENSOR",
             "services": [{"type": "TemperatureSensor",
                           "characteristics": [{"type": "CurrentTemperature", "value": 0.0}]}]}
            for i in range(SENSORS)] + [
        {"key": "lamp", "name": "Lamp", "category": "LIGHTBULB",
         "services": [{"type": "Lightbulb", "characteristics": [{"type": "On", "value": False},
                                                                {"type": "Brightness", "value": 0}]}]}]


async def raw_jetstream(url: str, count: int, size: int) -> tuple:
    nc = await nats.connect(url)
    js = nc.jetstream(timeout=10)
    await js.add_stream(name="BENCH", subjects=["bench.>"])
    payload = os.urandom(size)
    started = time.perf_counter()
    futures = []
    for i in range(count):
        futures.append(await js.publish_async(f"bench.ev.{i % 20}", payload, headers={"Nats-Msg-Id": f"b:{i}"}))
    for future in futures:
        await future
    published = count / (time.perf_counter() - started)
    config = api.ConsumerConfig(deliver_policy=api.DeliverPolicy.ALL, ack_policy=api.AckPolicy.NONE)
    sub = await js.pull_subscribe("bench.>", stream="BENCH", config=config)
    started, got = time.perf_counter(), 0
    while got < count:
        got += len(await sub.fetch(1024, timeout=5))
    consumed = count / (time.perf_counter() - started)
    await nc.close()
    return published, consumed


async def follow(url: str, names, count: int, go, done):
    """A remote reader: the time from `go` until `count` events came."""
    nc = await nats.connect(url)
    reader = RemoteReader(nc, names, kind="value")
    got = 0
    async for item in reader:
        if item.kind == "snapshot":
            go.set()
            continue
        if item.kind == "event":
            got += 1
            if got >= count:
                break
    done.append(time.perf_counter())
    await reader.close()
    await nc.close()


def through_homed(url, homed, names, provider, count, batch):
    refs = [Ref(f"s{i}", "TemperatureSensor", "CurrentTemperature") for i in range(SENSORS)]
    done = []

    async def main():
        go = asyncio.Event()
        task = asyncio.ensure_future(follow(url, names, count, go, done))
        waiting = asyncio.ensure_future(go.wait())
        await asyncio.wait([task, waiting], timeout=30, return_when=asyncio.FIRST_COMPLETED)
        if not go.is_set():
            raise SystemExit(f"the remote reader never took its snapshot: {task.exception() if task.done() else 'hung'}")
        loop = asyncio.get_running_loop()
        started = time.perf_counter()

        def report():
            value = 0.0
            for n in range(count // batch):
                value += 0.5
                provider.report({refs[(n * batch + k) % SENSORS]: value + k for k in range(batch)})
        await loop.run_in_executor(None, report)
        reported = time.perf_counter()
        await asyncio.wait_for(task, 120)
        return started, reported
    started, reported = asyncio.run(main())
    return count / (reported - started), count / (done[0] - started)


async def write_round_trips(url, names, home_id, cid, socket_client, count):
    nc = await nats.connect(url)
    over_nats, over_socket = [], []
    for i in range(count):
        value = pb.Value(int_value=i % 100)
        t = time.perf_counter()
        await remote_write(nc, names, home_id, {cid: value})
        over_nats.append(time.perf_counter() - t)
        t = time.perf_counter()
        socket_client.write({cid: pb.Value(int_value=(i + 50) % 100)})
        over_socket.append(time.perf_counter() - t)
    await nc.close()
    return over_nats, over_socket


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))] * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--writes", type=int, default=300)
    args = parser.parse_args()
    binary, _ = homed_binary()
    work = tempfile.mkdtemp(prefix="homed-nats-bench-")
    server = NatsServer(work).start()
    homed = HomedProcess(binary, work, in_memory=True).start()
    names = L.Names("bench")
    bridge = None
    provider = None
    try:
        published, consumed = asyncio.run(raw_jetstream(server.url, args.events, 120))
        print(f"raw JetStream, {args.events} messages of 120 bytes: publish {published:,.0f}/s (pipelined, "
              f"Nats-Msg-Id), consume {consumed:,.0f}/s (pull, batches of 1024)")
        with homed.client() as client:
            home_id = client.call("ChangeLayout", pb.LayoutRequest(add_home=pb.AddHome(name="Bench"))).created_id
        provider = Provider("bench", accessories(), socket_path=homed.socket_path, on_write=lambda v, a: None)
        provider.start()
        provider.wait_registered(15)
        roles = os.path.join(work, "roles.ini")
        with open(roles, "w") as f:
            f.write("[roles]\n")
        bridge = ProviderProcess([sys.executable, installed_program("homed-nats"), "--socket", homed.socket_path,
                                  "--server", server.url, "--site", "bench", "--log-level", "warning"],
                                 os.path.join(work, "bridge.log")).start()
        for batch in (1, SENSORS):
            reported, delivered = through_homed(server.url, homed, names, provider, args.events, batch)
            print(f"homed → homed-nats → JetStream → remote reader, {args.events} value events, {batch} per report: "
                  f"reported {reported:,.0f}/s, at the remote reader {delivered:,.0f}/s (end to end)")
    finally:
        if provider is not None:
            provider.stop()
        if bridge is not None:
            bridge.cleanup()
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
                             os.path.join(work, "bridge-2.log")).start()
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
        homed.kill()
        server.kill()


if __name__ == "__main__":
    main()
