#!/usr/bin/env python3
"""The remote socket's round trip (figures, not assertions).

    HOMED_BIN=.build/debug/homed PATH=.venv/bin:$PATH .venv/bin/python -m Clients.bridges.nats.bench_remote_socket \
        [--calls 500] [--rounds 3]

One homed (in memory) with the tests' devices, a real nats-server with the
tests' accounts (tests/remote_site.py), homed-nats and homed-nats-remote as
processes. In each round, alternately on homed's own socket and on the remote
socket (homed → homed-nats → nats-server → homed-nats-remote), one client makes
`--calls` calls one after another: a cached read (ReadCharacteristics of one
characteristic, homed's cache) and a write (WriteCharacteristics, a new value
each time). Printed: p50 and p99 of each, per round, then the medians over the
rounds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from homed import Client, pb
from homed_testkit import HomedProcess, homed_binary, kill_pid

from .tests.nats_home import Devices, found, make_home
from .tests.remote_site import accounts_server, start_remote, start_site_bridge


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def measure(path, cid, calls, value):
    with Client.connect(path, client_name="bench") as client:
        client.read([cid])  # the connection warmed
        reads, writes = [], []
        for _ in range(calls):
            t = time.perf_counter()
            client.read([cid])
            reads.append((time.perf_counter() - t) * 1000)
        for i in range(calls):
            t = time.perf_counter()
            client.write({cid: pb.Value(int_value=(value + i) % 101)})
            writes.append((time.perf_counter() - t) * 1000)
    return reads, writes


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=500)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="homed-bench-remote-")
    homed = HomedProcess(homed_binary()[0], workdir, in_memory=True)
    server = accounts_server(workdir)
    processes = []
    devices = None
    try:
        homed.start()
        server.start()
        with homed.client() as client:
            make_home(client)
        devices = Devices(homed.socket_path).start()
        start_site_bridge(homed, server, processes, workdir)
        _, remote = start_remote(server.url, processes, workdir, extra=["--log-level", "warning"])
        with homed.client() as client:
            lamp = found(client)["lamp"]
        cid = next(c.id for s in lamp.services for c in s.characteristics if c.type_name == "Brightness")
        figures = {"socket": [], "remote": []}
        for round_ in range(args.rounds):
            order = ("socket", "remote") if round_ % 2 == 0 else ("remote", "socket")
            for name in order:
                reads, writes = measure(homed.socket_path if name == "socket" else remote, cid, args.calls,
                                        round_ * 7)
                row = (percentile(reads, 50), percentile(reads, 99), percentile(writes, 50), percentile(writes, 99))
                figures[name].append(row)
                print(f"round {round_ + 1} {name:7}: cached read p50 {row[0]:.2f} ms p99 {row[1]:.2f} ms; "
                      f"write p50 {row[2]:.2f} ms p99 {row[3]:.2f} ms", flush=True)
        print(f"medians of {args.rounds} rounds, {args.calls} calls each:")
        for name, rows in figures.items():
            m = [statistics.median(r[i] for r in rows) for i in range(4)]
            print(f"  {name:7}: cached read p50 {m[0]:.2f} ms, p99 {m[1]:.2f} ms; write p50 {m[2]:.2f} ms, "
                  f"p99 {m[3]:.2f} ms")
    finally:
        if devices is not None:
            devices.stop()
        for process in processes:
            process.cleanup()
        server.kill()
        kill_pid(homed.proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
