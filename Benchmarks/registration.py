#!/usr/bin/env python3
"""Large registrations while another client reads, homed builds side by side.

Each round starts every given `homed` binary in turn on a fresh durable database
(the demo home, no simulator, the stored history on), and one reader client that
reads one cached characteristic over and over. Then PROVIDERS providers connect
one after another, each on its own connection with its command stream open, and
register ACCESSORIES lightbulbs in one `RegisterAccessories` call (the request
encoded ahead). Reported: each registration's time (the call's round trip, from
this process), and the reader's round trips while they ran (p50, p99): medians
over the rounds, and each build's against the first's.

    .venv/bin/python Benchmarks/registration.py OLD/homed NEW/homed [--rounds 5]

Needs the `homed` Python client (the venv `Scripts/bootstrap.sh --python` makes)."""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Dict, List

from homed import Client
from homed import proto as pb
from homed.accessories import accessory_message
from homed_processes import (alternate_rounds, check_binaries, demo_characteristic, percentile, report_medians,
                             running_homed)


def registration_request(provider: int, accessories: int) -> bytes:
    """One provider's lightbulbs, each with On and Brightness, as request bytes."""
    request = pb.RegisterAccessoriesRequest()
    for index in range(accessories):
        request.accessories.append(accessory_message({
            "key": f"lamp-{index}", "name": f"Lamp {provider}-{index}", "category": "LIGHTBULB",
            "services": [{"type": "Lightbulb", "characteristics": [
                {"type": "On", "value": False}, {"type": "Brightness", "value": 0}]}]}))
    return request.SerializeToString()


class Reader(threading.Thread):
    """Reads one characteristic until told to stop, noting each round trip."""

    def __init__(self, socket_path: str, characteristic: int):
        super().__init__(daemon=True)
        self.client = Client.connect(socket_path, client_name="bench-reader")
        self.characteristic = characteristic
        self.round_trips: List[tuple[float, float]] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            start = time.perf_counter()
            self.client.read([self.characteristic])
            self.round_trips.append((start, time.perf_counter() - start))

    def stop(self) -> List[tuple[float, float]]:
        """Each read's start and round trip."""
        self.stopping.set()
        self.join(30)
        self.client.close()
        return self.round_trips


def one_round(binary: str, requests: List[bytes]) -> Dict[str, float]:
    """Milliseconds: the median registration and the reader's p50 and p99."""
    with running_homed(binary) as (_, socket_path):
        reader = Reader(socket_path, demo_characteristic(socket_path, "Brightness"))
        reader.start()
        times: List[float] = []
        providers = []
        began = time.perf_counter()
        try:
            for number, request in enumerate(requests):
                client = Client.connect(socket_path, client_name=f"bench-provider-{number}")
                providers.append(client)
                client.stream("OpenProvider", pb.OpenProviderRequest(provider_id=f"bench-{number}"))
                start = time.perf_counter()
                client.call_raw("RegisterAccessories", request, timeout=120)
                times.append(time.perf_counter() - start)
        finally:
            ended = time.perf_counter()
            reads = [took for start, took in reader.stop() if began <= start < ended]
            for client in providers:
                client.close()
        return {"registration median": 1000 * statistics.median(times),
                "registration slowest": 1000 * max(times),
                "read p50 meanwhile": 1000 * percentile(reads, 0.5),
                "read p99 meanwhile": 1000 * percentile(reads, 0.99)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("homed", nargs="+", help="homed binaries to compare (the first is the reference)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--providers", type=int, default=11, help="registrations, one provider each")
    parser.add_argument("--accessories", type=int, default=1000, help="accessories per registration")
    arguments = parser.parse_args()
    if arguments.rounds < 1 or arguments.providers < 1 or arguments.accessories < 1:
        raise SystemExit("--rounds, --providers and --accessories must be at least 1")
    check_binaries(arguments.homed)
    requests = [registration_request(number, arguments.accessories) for number in range(arguments.providers)]
    figures = alternate_rounds(arguments.homed, arguments.rounds, lambda binary: one_round(binary, requests), " ms")
    print(f"{arguments.providers} registrations of {arguments.accessories} accessories each while one client "
          f"reads, durable, history on; medians of {arguments.rounds} alternating rounds:")
    report_medians(figures, "ms")


if __name__ == "__main__":
    main()
