#!/usr/bin/env python3
"""The daemon's CPU for a burst of single-value writes, homed builds side by side.

Each round starts every given `homed` binary in turn on a fresh durable database
(the demo home, no simulator, the stored history on: a service's defaults), opens
one subscriber that drains its events, and sends BURST single-value
WriteCharacteristics calls to one Brightness at RATE calls per second from one
connection, pipelined, TOGETHER calls per write to the socket (a bridge relaying a
burst). What is reported is the CPU the daemon's process spent (every thread's run
time, from /proc/PID/task/*/schedstat) from the first call until every reply is in
and the daemon has gone quiet: medians over the rounds, and each build's against
the first's.

    .venv/bin/python Benchmarks/burst-cpu.py OLD/homed NEW/homed [--rounds 5]

Needs the `homed` Python client (the venv `Scripts/bootstrap.sh --python` makes)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from homed import proto as pb
from homed.client_core import write_request
from homed_processes import (Drain, check_binaries, demo_characteristic, process_cpu_ns, raw_connection,
                             running_homed, untracked_call)


def one_burst(binary: str, burst: int, rate: int, together: int) -> float:
    """Milliseconds of the daemon's CPU for one burst."""
    with running_homed(binary) as (process, socket_path):
        target = demo_characteristic(socket_path, "Brightness")
        subscriber, subscriber_core = raw_connection(socket_path, "burst-subscriber")
        _, opening = subscriber_core.open(untracked_call, "Subscribe",
                                          pb.SubscribeRequest().SerializeToString(), None)
        subscriber.sendall(opening)
        drain = Drain(subscriber)
        drain.start()
        writer, writer_core = raw_connection(socket_path, "burst-writer")
        replies = Drain(writer)
        replies.start()
        # Every call encoded ahead: what is measured is the daemon, not this script.
        calls = [
            writer_core.open(untracked_call, "WriteCharacteristics",
                             write_request({target: pb.Value(int_value=index % 100)}).SerializeToString(),
                             None)[1]
            for index in range(burst)]
        chunk = together
        before = process_cpu_ns(process.pid)
        start = time.monotonic()
        for first in range(0, burst, chunk):
            due = start + first / rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            writer.sendall(b"".join(calls[first:first + chunk]))
        # Each call is answered with its response and its status.
        deadline = time.monotonic() + 120
        while replies.frames < 2 * burst:
            if time.monotonic() > deadline:
                raise SystemExit(f"{binary}: {replies.frames // 2} of {burst} calls answered in 120 s")
            time.sleep(0.01)
        # The subscriber's events may still be on their way: until the daemon is quiet.
        quiet, last = 0, process_cpu_ns(process.pid)
        while quiet < 3:
            time.sleep(0.05)
            now = process_cpu_ns(process.pid)
            quiet = quiet + 1 if now - last < 1_000_000 else 0
            last = now
        spent = last - before
        writer.close()
        subscriber.close()
        return spent / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("homed", nargs="+", help="homed binaries to compare (the first is the reference)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--burst", type=int, default=100_000, help="single-value writes per burst")
    parser.add_argument("--rate", type=int, default=50_000, help="writes per second")
    parser.add_argument("--together", type=int, default=250,
                        help="calls sent in one write to the socket (250 at 50 000/s: every 5 ms)")
    arguments = parser.parse_args()
    if arguments.rounds < 1 or arguments.burst < 1 or arguments.rate < 1 or arguments.together < 1:
        raise SystemExit("--rounds, --burst, --rate and --together must be at least 1")
    check_binaries(arguments.homed)
    figures: dict[str, list[float]] = {binary: [] for binary in arguments.homed}
    for round_number in range(1, arguments.rounds + 1):
        for binary in arguments.homed:
            spent = one_burst(binary, arguments.burst, arguments.rate, arguments.together)
            figures[binary].append(spent)
            print(f"round {round_number}: {binary}: {spent:.0f} ms", file=sys.stderr, flush=True)
    reference = statistics.median(figures[arguments.homed[0]])
    print(f"Daemon CPU for {arguments.burst} single-value writes at {arguments.rate}/s, {arguments.together} "
          f"per send, durable, history on, one subscriber; medians of {arguments.rounds} alternating rounds:")
    for binary, spent in figures.items():
        median = statistics.median(spent)
        print(f"  {binary}: {median:.0f} ms  ({median / reference:.2f}x)")


if __name__ == "__main__":
    main()
