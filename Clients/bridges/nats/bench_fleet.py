#!/usr/bin/env python3
"""Many simulated sites on one three-node nats-server cluster (figures, not
assertions): what the hub of a fleet carries.

    .venv/bin/python -m Clients.bridges.nats.bench_fleet --sites 1000 --rate 1 --seconds 30 [--replicas 3]

A real homed and its bridge take ~36 + 32 MiB each (bench_sites.py), so 1 000 of
them do not fit on one machine; here each site is what its bridge sends the
server, made in one process: a stream HOMED_s<i> of the bridge's settings
(`--replicas` on the cluster), and every `1/--rate` s (random phase) one value
event as the bridge writes it (its subject, headers and body,
homed_nats.layout.event_record), published with the bridge's expectations
(Nats-Expected-Last-Sequence and Nats-Expected-Last-Msg-Id of the record before)
and its acknowledgement checked (one event per homed message: each record is a
checkpoint). The sites' publishers share `--connections` NATS connections spread
over the three nodes. One reader, in a process of its own, follows every site's
stream (an ordered push consumer each, on one connection) and checks each
site's homed sequence numbers: 1, 2, 3 … with none missing and none twice.
Latency is from the event's time (set when it is published) to its arrival at
the reader (one clock). Printed: sites, events published and read, missing,
duplicates, out of order, publishes refused, latency p50/p99/max, the nodes'
resident memory and CPU during the load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

import nats
from nats.js import api

from homed import pb
from .tests.nats_server import Cluster

from homed_nats import layout as L


def site_names(i: int) -> L.Names:
    return L.Names(f"s{i}")


async def make_streams(urls, sites: int, replicas: int) -> float:
    nc = await nats.connect(urls)
    js = nc.jetstream(timeout=30)
    started = time.monotonic()
    slots = asyncio.Semaphore(64)

    async def one(i):
        names = site_names(i)
        wanted = names.stream_config(replicas=replicas)
        async with slots:
            for attempt in range(20):
                try:
                    await js.add_stream(api.StreamConfig(
                        name=wanted["name"], subjects=wanted["subjects"], storage=api.StorageType.FILE,
                        retention=api.RetentionPolicy.LIMITS, num_replicas=replicas, allow_direct=True,
                        duplicate_window=wanted["duplicate_window"]))
                    return
                except Exception:  # noqa: BLE001 - a cluster busy placing streams: again
                    await asyncio.sleep(0.5)
            raise SystemExit(f"stream {names.stream} could not be made")
    await asyncio.gather(*(one(i) for i in range(sites)))
    await nc.close()
    return time.monotonic() - started


async def publish_main(urls, sites: int, rate: float, seconds: float, connections: int) -> None:
    """The sites' publishers; prints one JSON line of counts at the end."""
    # Each connection prefers a node (spread over the three), and moves to another
    # when its node goes.
    ncs = [await nats.connect(urls[k % len(urls):] + urls[:k % len(urls)], dont_randomize=True,
                              max_reconnect_attempts=-1, reconnect_time_wait=0.5) for k in range(connections)]
    count = int(seconds * rate)
    published, refused = 0, 0
    print(json.dumps({"ready": True}), flush=True)
    start = time.monotonic() + 0.5

    async def site(i):
        nonlocal published, refused
        names = site_names(i)
        nc = ncs[i % connections]
        places = {1000 + i: (1, 2)}
        last, last_id = 0, None
        phase = random.random() / rate
        for k in range(1, count + 1):
            delay = start + phase + (k - 1) / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            event = pb.Event(seq=k, kind=pb.EVENT_VALUE_CHANGED, time_ms=int(time.time() * 1000))
            event.value.characteristic_id = 5000 + i
            event.value.accessory_id = 1000 + i
            event.value.service_id = 3000 + i
            event.value.value.float_value = (k % 1000) / 10
            record = L.event_record(names, "J", event, places, {})
            headers = dict(record.headers)
            headers[L.EXPECTED_LAST_SEQ] = str(last)
            if last_id is not None:
                headers[L.EXPECTED_LAST_MSG_ID] = last_id
            for attempt in range(10):
                try:
                    answer = json.loads((await nc.request(record.subject, record.body, headers=headers,
                                                          timeout=5)).data)
                except Exception:  # noqa: BLE001 - no answer: the bridge would start again from the tail
                    answer = {"error": {"description": "no answer"}}
                if answer.get("seq") == last + 1 and "error" not in answer:
                    last, last_id = last + 1, headers[L.MSG_ID]
                    published += 1
                    break
                refused += 1
                # What the bridge does: the stream's tail says whether it is in.
                try:
                    info = await nc.jetstream(timeout=5).stream_info(names.stream)
                    if info.state.last_seq == last + 1:
                        last, last_id = last + 1, headers[L.MSG_ID]
                        published += 1
                        break
                except Exception:  # noqa: BLE001
                    pass
                await asyncio.sleep(0.2)
    await asyncio.gather(*(site(i) for i in range(sites)))
    print(json.dumps({"published": published, "refused": refused}), flush=True)
    for nc in ncs:
        await nc.close()


async def read_main(url, sites: int, expected: int) -> None:
    """The reader: an ordered push consumer per site; one JSON line at the end."""
    nc = await nats.connect(url, max_reconnect_attempts=-1, reconnect_time_wait=0.5)
    js = nc.jetstream(timeout=30)
    last = [0] * sites
    got = [0] * sites
    missing = duplicates = disorder = 0
    latencies = []
    done = asyncio.Event()
    total = sites * expected
    seen = 0

    def handler(i):
        async def cb(msg):
            nonlocal missing, duplicates, disorder, seen
            now = time.time() * 1000
            event = pb.SubscribeResponse.FromString(msg.data).events[0]
            latencies.append(now - event.time_ms)
            if event.seq == last[i] + 1:
                pass
            elif event.seq <= last[i]:
                duplicates += 1
                return
            else:
                missing += event.seq - last[i] - 1
                disorder += 1
            last[i] = event.seq
            got[i] += 1
            seen += 1
            if seen >= total:
                done.set()
        return cb
    for i in range(sites):
        names = site_names(i)
        await js.subscribe(names.stream_subjects[0], stream=names.stream, cb=handler(i), ordered_consumer=True,
                           idle_heartbeat=5.0, config=api.ConsumerConfig(mem_storage=True))
    print(json.dumps({"ready": True}), flush=True)
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)  # the publishers are done
    try:
        await asyncio.wait_for(done.wait(), 60)
    except asyncio.TimeoutError:
        pass
    latencies.sort()

    def pct(p):
        return latencies[min(len(latencies) - 1, int(len(latencies) * p / 100))] if latencies else float("nan")
    short = sum(1 for g in got if g < expected)
    print(json.dumps({"read": sum(got), "missing": missing + sum(max(0, expected - g) for g in got),
                      "duplicates": duplicates, "disorder": disorder, "sites_short": short,
                      "p50": pct(50), "p99": pct(99), "max": latencies[-1] if latencies else None}), flush=True)
    await nc.close()


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(*args):
    return subprocess.Popen([sys.executable, "-m", "Clients.bridges.nats.bench_fleet", *args], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--publish":
        urls = sys.argv[2].split(",")
        asyncio.run(publish_main(urls, int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--read":
        asyncio.run(read_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=1.0, help="events per second per site")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--connections", type=int, default=12, help="the publishers' NATS connections")
    parser.add_argument("--kill-node", action="store_true",
                        help="kill -9 one node (not the reader's) halfway through the load")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="homed-nats-fleet-")
    cluster = Cluster(work).start()
    publisher = reader = None
    try:
        made = asyncio.run(make_streams(cluster.urls, args.sites, args.replicas))
        print(f"{args.sites} streams ({args.replicas} replicas) made in {made:.1f} s; nodes' RSS "
              f"{', '.join(f'{rss_mib(n.proc.pid):.0f}' for n in cluster.nodes)} MiB", flush=True)
        expected = int(args.seconds * args.rate)
        reader = child("--read", cluster.urls[0], str(args.sites), str(expected))
        json.loads(reader.stdout.readline())
        publisher = child("--publish", ",".join(cluster.urls), str(args.sites), str(args.rate), str(args.seconds),
                          str(args.connections))
        json.loads(publisher.stdout.readline())
        cpu0 = [cpu_seconds(n.proc.pid) for n in cluster.nodes]
        t0 = time.monotonic()
        load0 = os.getloadavg()[0]
        killed = ""
        if args.kill_node:
            time.sleep(args.seconds / 2)
            victim = cluster.nodes[2]
            victim.kill()  # SIGKILL by pid
            killed = f"; node {victim.name} killed (kill -9) after {time.monotonic() - t0:.1f} s"
        counts = json.loads(publisher.stdout.readline())
        elapsed = time.monotonic() - t0
        cpu = [cpu_seconds(n.proc.pid) - c if n.alive else float("nan") for n, c in zip(cluster.nodes, cpu0)]
        reader.stdin.write("done\n")
        reader.stdin.flush()
        result = json.loads(reader.stdout.readline())
        clean = (result["missing"] == 0 and result["duplicates"] == 0 and result["disorder"] == 0
                 and counts["published"] == args.sites * expected)
        print(f"{args.sites} sites × {args.rate:g} event/s for {args.seconds:g} s: published {counts['published']} "
              f"({counts['refused']} refused and retried), read {result['read']}; missing {result['missing']}, "
              f"duplicates {result['duplicates']}, out of order {result['disorder']} -> "
              f"{'clean' if clean else 'NOT clean'}; latency p50 {result['p50']:.1f} ms, p99 {result['p99']:.1f} ms, "
              f"max {result['max']:.1f} ms; nodes' RSS "
              f"{', '.join(f'{rss_mib(n.proc.pid):.0f}' if n.alive else 'killed' for n in cluster.nodes)} MiB, CPU "
              f"{', '.join(f'{c / elapsed:.2f}' for c in cpu)} cores; load average {load0:.1f}{killed}", flush=True)
    finally:
        for proc in (publisher, reader):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(5)
        cluster.kill()


if __name__ == "__main__":
    main()
