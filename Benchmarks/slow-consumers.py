#!/usr/bin/env python3
"""A fast subscriber's latency during a burst, with and without subscribers that
never read, homed builds side by side.

Each round starts every given `homed` binary in turn on a fresh durable database
(the demo home, no simulator, the stored history on), opens SLOW subscribers that
never read their sockets and one fast subscriber that reads and decodes every
event, then writes BURST values to one Brightness at RATE per second from one
connection, TOGETHER calls per write to the socket (the calls encoded ahead,
their replies counted). A value event's latency is from the write that made it
being sent to the event's arrival (each write is one change, so an event's
sequence number says which write made it; a merged event counts from the newest
write it carries).
The same burst is run with no slow subscribers first, in the same daemon.
Reported: the fast subscriber's p50 and p99 with the slow ones and without, and
their ratio: medians over the rounds, and each build's against the first's.

    .venv/bin/python Benchmarks/slow-consumers.py OLD/homed NEW/homed [--rounds 5]
        [--burst 50000 --rate 50000 --together 250]

Needs the `homed` Python client (the venv `Scripts/bootstrap.sh --python` makes)."""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import threading
import time
from typing import Dict, List

from homed import Client
from homed import proto as pb
from homed.client_core import write_request
from homed_processes import (Drain, alternate_rounds, check_binaries, demo_characteristic, percentile,
                             raw_connection, report_medians, running_homed, untracked_call, wait_until)


class FastSubscriber:
    """A subscriber that reads every frame at once and notes each value event of
    one characteristic: its arrival time, sequence number and value."""

    def __init__(self, socket_path: str, characteristic: int):
        self.characteristic = characteristic
        self.arrivals: List[tuple[float, int, int]] = []
        sock, core = raw_connection(socket_path, "bench-fast")
        _, opening = core.open(untracked_call, "Subscribe", pb.SubscribeRequest().SerializeToString(), None)
        self.subscribed = threading.Event()
        self.drain = Drain(sock, self._frame)
        self.drain.start()
        sock.sendall(opening)
        self.sock = sock

    def _frame(self, body: bytes) -> None:
        now = time.perf_counter()
        frame = pb.Frame.FromString(body)
        if not frame.HasField("message"):
            return
        response = pb.SubscribeResponse.FromString(frame.message.payload)
        self.subscribed.set()
        for event in response.events:
            if event.HasField("value") and event.value.characteristic_id == self.characteristic:
                self.arrivals.append((now, event.seq, event.value.value.int_value))

    def close(self) -> None:
        self.sock.close()


def never_reading_subscriber(socket_path: str, number: int) -> socket.socket:
    """A subscriber whose socket is never read: its queue in the daemon fills."""
    sock, core = raw_connection(socket_path, f"bench-slow-{number}")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    _, opening = core.open(untracked_call, "Subscribe", pb.SubscribeRequest().SerializeToString(), None)
    sock.sendall(opening)
    return sock


def burst_latencies(socket_path: str, target: int, fast: FastSubscriber, burst: int, rate: int,
                    together: int) -> List[float]:
    """Each of the burst's value events' latency at the fast subscriber, in seconds."""
    writer, core = raw_connection(socket_path, "bench-writer")
    replies = Drain(writer)
    replies.start()
    calls = [core.open(untracked_call, "WriteCharacteristics",
                       write_request({target: pb.Value(int_value=index % 100)}).SerializeToString(), None)[1]
             for index in range(burst)]
    first_arrival = len(fast.arrivals)
    with Client.connect(socket_path, client_name="bench-probe") as probe:
        first_seq = probe.get_status().seq + 1
    sent: List[float] = []
    start = time.perf_counter()
    for first in range(0, burst, together):
        delay = start + first / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        chunk = calls[first:first + together]
        sent.extend([time.perf_counter()] * len(chunk))
        writer.sendall(b"".join(chunk))
    wait_until(lambda: replies.frames >= 2 * burst, f"{burst} writes answered")
    last_seq = first_seq + burst - 1
    wait_until(lambda: any(seq == last_seq for _, seq, _ in fast.arrivals[-3:]),
               "the burst's last value at the fast subscriber")
    writer.close()
    latencies = []
    for at, seq, value in fast.arrivals[first_arrival:]:
        # Each write is one change, numbered in order; a merged event carries its newest.
        index = seq - first_seq
        if not 0 <= index < burst or value != index % 100:
            raise SystemExit(f"event {seq} (value {value}) is not write {index}'s: something else wrote")
        latencies.append(at - sent[index])
    return latencies


def one_round(binary: str, slow: int, burst: int, rate: int, together: int) -> Dict[str, float]:
    with running_homed(binary) as (_, socket_path):
        target = demo_characteristic(socket_path, "Brightness")
        fast = FastSubscriber(socket_path, target)
        wait_until(fast.subscribed.is_set, "the fast subscriber's snapshot")
        alone = burst_latencies(socket_path, target, fast, burst, rate, together)
        slow_ones = [never_reading_subscriber(socket_path, number) for number in range(slow)]
        try:
            crowded = burst_latencies(socket_path, target, fast, burst, rate, together)
        finally:
            for sock in slow_ones:
                sock.close()
            fast.close()
        alone_p99, crowded_p99 = percentile(alone, 0.99), percentile(crowded, 0.99)
        return {"p50 alone": 1000 * statistics.median(alone), "p99 alone": 1000 * alone_p99,
                "p50 with the slow ones": 1000 * statistics.median(crowded),
                "p99 with the slow ones": 1000 * crowded_p99,
                "p99 with / alone (x)": crowded_p99 / alone_p99}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("homed", nargs="+", help="homed binaries to compare (the first is the reference)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--slow", type=int, default=3, help="subscribers that never read")
    parser.add_argument("--burst", type=int, default=20_000, help="writes per burst")
    parser.add_argument("--rate", type=int, default=5_000, help="writes per second")
    parser.add_argument("--together", type=int, default=1, help="calls sent in one write to the socket")
    arguments = parser.parse_args()
    if min(arguments.rounds, arguments.burst, arguments.rate, arguments.together) < 1 or arguments.slow < 0:
        raise SystemExit("--rounds, --burst, --rate and --together must be at least 1, --slow at least 0")
    check_binaries(arguments.homed)
    # This process's threads take turns quickly, so that the fast subscriber's
    # reader is not held up by the writer for the interpreter's default 5 ms.
    sys.setswitchinterval(0.0001)
    figures = alternate_rounds(
        arguments.homed, arguments.rounds,
        lambda binary: one_round(binary, arguments.slow, arguments.burst, arguments.rate, arguments.together), "")
    print(f"A fast subscriber during {arguments.burst} writes at {arguments.rate}/s, {arguments.together} per send, "
          f"with {arguments.slow} subscribers that never read and without, durable, history on; latencies in ms, "
          f"medians of {arguments.rounds} alternating rounds:")
    report_medians(figures, "")


if __name__ == "__main__":
    main()
