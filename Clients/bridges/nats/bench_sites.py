#!/usr/bin/env python3
"""N homeds on one NATS server, one remote reader following all of them
(issue 28, item 6: "past this machine, in simulation"). Figures, not assertions.

    HOMED_BIN=.build/debug/homed .venv/bin/python -m Clients.bridges.nats.bench_sites --homeds 1 5 10 [--rate 50 --seconds 5]

For each N: N homeds (each its own socket and in-memory database), each with a
provider (a thread of this process) reporting `--rate` values per second for
`--seconds`, and its own homed-nats process (site s0 … sN-1) publishing to one
nats-server; one remote reader (homed_nats.remote.RemoteReader per site, all in
one asyncio loop of this process, one NATS connection) follows every stream.
It waits until the reader has taken every site's snapshot, then loads. Printed
per N: the value events the reader got against those each homed committed
(ReadHistory; the sites short, if any), events/s at the reader, end-to-end
latency (homed's commit time in the event to its arrival at the reader, same
clock) p50/p99, resident memory per homed and per bridge, the server's and this
process's (the providers and the reader), the set-up time and the load average;
reports a provider could not make (a provider starved of CPU loses homed) are
counted, not fatal. Run it on a quiet machine, once: it is heavy at N = 100.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

import nats

from homed import pb
from homed.provider import Provider, Ref
from homed_testkit import HomedProcess, ProviderProcess, homed_binary
from .tests.nats_server import NatsServer

from homed_nats.layout import Names
from homed_nats.remote import RemoteReader
from homed_testkit import installed_program

ACCESSORIES = [{"key": f"t{i}", "name": f"Thermometer {i}", "category": "SENSOR",
                "services": [{"type": "TemperatureSensor",
                              "characteristics": [{"type": "CurrentTemperature", "value": 0.0}]}]}
               for i in range(4)]


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/PID/stat, clock ticks)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def machine_busy() -> tuple:
    """(busy, total) clock ticks of every CPU since boot (/proc/stat): the machine's use."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:]]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return sum(ticks) - idle, sum(ticks)


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))] if values else float("nan")


async def follow_all(url, sites, target, latencies, stop, last, ready, failures, after):
    nc = await nats.connect(url, max_reconnect_attempts=-1)
    counts = {site: 0 for site in sites}

    async def one(site):
        try:
            await follow(site)
        except Exception as error:  # noqa: BLE001 - said in the figures
            failures.append(f"{site}: {error!r}")

    async def follow(site):
        async for item in RemoteReader(nc, Names(site), kind="value"):
            if item.kind == "snapshot":
                ready.add(site)
            # Only the load's events: a bridge behind homed when the reader took the
            # bucket's snapshot delivers some committed before the load after it.
            if item.kind == "event" and item.event.seq > after[site]:
                latencies.append(time.time() * 1000 - item.event.time_ms)
                counts[site] += 1
                last[0] = time.monotonic()
                if target and sum(counts.values()) >= target[0] or stop.is_set():
                    stop.set()
                    return
            if stop.is_set():
                return
    tasks = [asyncio.ensure_future(one(site)) for site in sites]
    while not stop.is_set():
        # Every event may be in before the target is known (the loaders' end).
        if target and sum(counts.values()) >= target[0]:
            stop.set()
        await asyncio.sleep(0.05)
    for task in tasks:
        task.cancel()
    await nc.close()
    return counts


def run(n, args, binary, work, python=None):
    """One run of N sites; `python`: that of a venv holding another homed-nats to run (default: this one's)."""
    program = installed_program("homed-nats") if python is None else os.path.join(os.path.dirname(python),
                                                                                 "homed-nats")
    python = python or sys.executable
    os.makedirs(work, exist_ok=True)
    server = NatsServer(work, f"nats{n}").start()
    homeds, providers, bridges = [], [], []
    began = time.monotonic()
    try:
        for i in range(n):
            directory = os.path.join(work, f"n{n}-h{i}")
            os.makedirs(directory)
            extra = ["--provider-ping-timeout-ms", str(args.ping_timeout_ms)] if args.ping_timeout_ms else []
            homed = HomedProcess(binary, directory, in_memory=True, extra_args=extra).start()
            homeds.append(homed)
            with homed.client() as client:
                client.call("ChangeLayout", pb.LayoutRequest(add_home=pb.AddHome(name=f"Home {i}")))
            provider = Provider("sim", ACCESSORIES, socket_path=homed.socket_path)
            provider.start()
            provider.wait_registered(30)
            providers.append(provider)
            bridges.append(ProviderProcess([python, program, "--socket",
                                            homed.socket_path, "--server", server.url, "--site", f"s{i}",
                                            "--log-level", "warning"], os.path.join(directory, "bridge.log")).start())
        sites = [f"s{i}" for i in range(n)]
        per_site = int(args.rate * args.seconds)
        latencies = []
        stop = threading.Event()
        result = {}
        target, last = [], [0.0]
        ready, failures = set(), []

        def seqs():
            out = []
            for homed in homeds:
                with homed.client() as client:
                    out.append(client.get_home().seq)
            return out

        def value_events(after):
            """Per homed, its value events after `after` (ReadHistory): what the reader must get.
            (A provider's connection dropped under load adds reachability events, not counted.)"""
            out = []
            for homed, seq in zip(homeds, after):
                count, cursor = 0, seq
                with homed.client() as client:
                    while True:
                        page = client.call("ReadHistory", pb.ReadHistoryRequest(
                            after_seq=cursor, limit=10000, filter=pb.SubscriptionFilter(kinds=[pb.EVENT_VALUE_CHANGED])))
                        count += len(page.events)
                        if not page.next_seq:
                            break
                        cursor = page.next_seq
                out.append(count)
            return out
        before = seqs()
        failed_reports = []

        def reader():
            result["counts"] = asyncio.run(follow_all(server.url, sites, target, latencies, stop, last, ready,
                                                      failures, dict(zip(sites, before))))
        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        # Every bridge up and every site's snapshot taken by the reader before the load.
        deadline = time.monotonic() + 300
        while len(ready) < n and time.monotonic() < deadline and len(ready) + len(failures) < n:
            time.sleep(0.2)
        setup = time.monotonic() - began

        def load(provider, offset):
            refs = [Ref(f"t{k}", "TemperatureSensor", "CurrentTemperature") for k in range(len(ACCESSORIES))]
            start = time.monotonic()
            for j in range(per_site):
                due = start + j / args.rate
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                # CurrentTemperature: 0 to 100 in steps of 0.1; each report a change.
                try:
                    provider.report({refs[j % len(refs)]: round(((j // len(refs)) % 900 + 1) * 0.1, 1)})
                except Exception as error:  # noqa: BLE001 - counted: a provider starved of CPU loses homed
                    failed_reports.append(repr(error))
        groups = {"homeds": [h.proc.pid for h in homeds], "bridges": [b.pid for b in bridges],
                  "nats-server": [server.proc.pid], "bench (providers, reader)": [os.getpid()]}
        cpu_before = {k: sum(cpu_seconds(p) for p in pids) for k, pids in groups.items()}
        busy_before = machine_busy()
        started = time.monotonic()
        loaders = [threading.Thread(target=load, args=(p, i * 1000.0), daemon=True) for i, p in enumerate(providers)]
        for t in loaders:
            t.start()
        for t in loaders:
            t.join()
        # homed may merge a provider's reports not yet sent: count what it committed.
        committed = value_events(before)
        expected = sum(committed)
        target.append(expected)
        stop.wait(60)
        elapsed = last[0] - started
        window = time.monotonic() - started
        cpu = {k: (sum(cpu_seconds(p) for p in pids) - cpu_before[k]) / window for k, pids in groups.items()}
        busy_after = machine_busy()
        machine = (busy_after[0] - busy_before[0]) / max(1, busy_after[1] - busy_before[1])
        stop.set()
        thread.join(10)
        got = sum((result.get("counts") or {}).values()) or len(latencies)
        homed_mem = sum(rss_kb(h.proc.pid) for h in homeds) / n / 1024
        bridge_mem = sum(rss_kb(b.pid) for b in bridges) / n / 1024
        print(f"N={n:3d}: {got}/{expected} events at the reader ({len(ready)}/{n} sites followed), "
              f"{got / elapsed:,.0f} events/s (offered {n * args.rate:,.0f}/s), latency p50 "
              f"{pct(latencies, 50):.1f} ms p99 {pct(latencies, 99):.1f} ms; RSS per homed {homed_mem:.0f} MiB, "
              f"per bridge {bridge_mem:.0f} MiB, nats-server {rss_kb(server.proc.pid) / 1024:.0f} MiB, "
              f"this process (providers, reader) {rss_kb(os.getpid()) / 1024:.0f} MiB; "
              f"set-up {setup:.0f} s, load average {os.getloadavg()[0]:.1f}", flush=True)
        print("   CPU during the load, in cores: " + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
              + f"; the machine {machine * 100:.0f}% busy of {os.cpu_count()} cores", flush=True)
        counts = result.get("counts") or {}
        short = {f"s{i}": (counts.get(f"s{i}", 0), c) for i, c in enumerate(committed) if counts.get(f"s{i}", 0) != c}
        if short:
            print(f"   sites whose events the reader did not all get (got, committed): {short}", flush=True)
        if failed_reports:
            print(f"   {len(failed_reports)} of {n * per_site} reports not made (the provider lost homed under "
                  f"load): {sorted(set(failed_reports))[:3]}", flush=True)
        for failure in failures:
            print(f"   reader failed: {failure}", flush=True)
        return {"clean": got == expected and not short and not failed_reports and not failures,
                "got": got, "expected": expected, "rate": got / elapsed, "p50": pct(latencies, 50),
                "p99": pct(latencies, 99), "homed": homed_mem, "bridge": bridge_mem,
                "server": rss_kb(server.proc.pid) / 1024, "cpu": cpu, "machine": machine}
    finally:
        for provider in providers:
            provider.stop()
        for bridge in bridges:
            bridge.cleanup()
        for homed in homeds:
            homed.kill()
        server.kill()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--homeds", type=int, nargs="+", default=[1, 5, 10])
    parser.add_argument("--rate", type=float, default=50.0, help="values per second per homed")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--ping-timeout-ms", type=int, default=0,
                        help="homed's --provider-ping-timeout-ms (default: homed's, 600): the bench's providers "
                             "share one Python process, which a starved machine may keep from answering in time")
    parser.add_argument("--runs", type=int, default=1, help="runs of each N; with more than one, their medians")
    parser.add_argument("--old-python", help="the python of a venv holding another homed-nats: each run is made "
                                             "with both bridges, alternately")
    args = parser.parse_args()
    binary, _ = homed_binary()
    work = tempfile.mkdtemp(prefix="homed-nats-sites-")
    try:
        variants = [("new", None)] + ([("old", args.old_python)] if args.old_python else [])
        for n in args.homeds:
            by_variant = {name: [] for name, _ in variants}
            for k in range(args.runs):
                for name, python in (variants if k % 2 == 0 else variants[::-1]):
                    if len(variants) > 1:
                        print(f"run {k + 1}, {name} bridge:", flush=True)
                    by_variant[name].append(run(n, args, binary, os.path.join(work, f"run{k}-{name}"), python))
            for name, results in by_variant.items():
                if args.runs < 2 and len(variants) < 2:
                    continue
                med = lambda key: statistics.median(r[key] for r in results)  # noqa: E731
                cpu = {k: statistics.median(r["cpu"][k] for r in results) for k in results[0]["cpu"]}
                print(f"N={n:3d} {name} bridge, median of {len(results)}: {sum(r['clean'] for r in results)}/"
                      f"{len(results)} runs clean (every committed event at the reader); {med('rate'):,.0f} events/s, "
                      f"latency p50 {med('p50'):.1f} ms p99 {med('p99'):.1f} ms; RSS per homed {med('homed'):.0f} MiB, "
                      f"per bridge {med('bridge'):.0f} MiB, nats-server {med('server'):.0f} MiB; CPU in cores: "
                      + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
                      + f"; the machine {med('machine') * 100:.0f}% busy", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
