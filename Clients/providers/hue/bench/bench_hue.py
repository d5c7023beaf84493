#!/usr/bin/env python3
"""The Hue provider's benchmark, on the fake bridge (tests/fake_bridge.py) and
a real homed, both started here on loopback and a temporary directory, killed
at the end:

  latency   an event pushed by the fake bridge (a light's brightness, each
            event a new value and its own event id) to a `homectl watch --json`
            line, p50/p99 over --events events sent one at a time, next to a
            plain SSE client's receive time of the same events (an aiohttp
            client on the same event stream, in the same run).

    .venv/bin/python -m Clients.providers.hue.bench.bench_hue latency --events 10000

The benchmark tells the fake bridge to push each event by a line on its stdin
(--stdin-control); both times are from the moment that line is written, so
the difference at p50 is what the provider, homed and homectl add. homed and
homectl are $HOMED_BIN (and homectl beside it), else .build/release/ when
built, else .build/debug/; the one used is printed. Times are wall-clock on
this machine; run it a few times and compare medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import ssl
from pathlib import Path

import aiohttp

from homed_testkit import HomedProcess, ProviderProcess, installed_program
from homed_testkit.mqtt_broker import free_port

from ..tests.hue_helpers import APPLICATION_KEY, FIXTURE, HERE as TESTS, ids_of, make_certificate, \
    provider_accessories

REPO = Path(__file__).resolve().parents[4]
WARM_UP = (0, 100)  # the lamp's brightness before the benchmark's events (1..99)
LAMP = "42b8327b-b7d7-2469-3c45-069a41b4dca8"  # Device 36 of the fixture: a colour light at 81 %


def binaries():
    """(homed, homectl, which): $HOMED_BIN, else release when built, else debug."""
    if os.environ.get("HOMED_BIN"):
        homed = Path(os.environ["HOMED_BIN"])
        which = "$HOMED_BIN"
    else:
        release = REPO / ".build" / "release" / "homed"
        homed = release if release.exists() and release.with_name("homectl").exists() else \
            REPO / ".build" / "debug" / "homed"
        which = homed.parent.name
    return str(homed), str(homed.with_name("homectl")), which


def wait(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: not within {timeout} s")
        time.sleep(0.05)


class Bridge:
    """The fake bridge as a process, pushing the events written to its stdin."""

    def __init__(self, workdir: str):
        self.cert, self.key, self.sha256 = make_certificate(workdir)
        self.port = free_port()
        self.log_path = os.path.join(workdir, "bridge.log")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, str(TESTS / "fake_bridge.py"), "--port", str(self.port),
                                          "--cert", self.cert, "--key", self.key, "--resources", str(FIXTURE),
                                          "--application-key", APPLICATION_KEY, "--stdin-control"],
                                         stdin=subprocess.PIPE, stdout=log, stderr=log)
        self.context = ssl.create_default_context(cafile=self.cert)
        wait(self._listening, 15, "the fake bridge listening")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _listening(self) -> bool:
        if self.proc.poll() is not None:
            raise SystemExit(f"the fake bridge exited\n{Path(self.log_path).read_text()}")
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
            return True
        except OSError:
            return False

    def streams(self) -> int:
        with urllib.request.urlopen(f"https://{self.address}/fake/streams", context=self.context, timeout=10) as r:
            return json.loads(r.read())["streams"]

    def push(self, events: list) -> None:
        self.proc.stdin.write(json.dumps(events).encode() + b"\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


class SseClient:
    """A plain aiohttp client on the bridge's event stream, in a thread: when
    each benchmark event (id `bench-N`) arrived."""

    def __init__(self, bridge: Bridge):
        self.bridge = bridge
        self.arrived: dict = {}
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._run(),), daemon=True)
        self.task = None
        self.thread.start()

    async def _run(self):
        self.task = asyncio.current_task()
        try:
            await self._follow()
        except asyncio.CancelledError:
            pass  # stop()

    async def _follow(self):
        headers = {"hue-application-key": APPLICATION_KEY, "Accept": "text/event-stream"}
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(
                ssl=aiohttp.Fingerprint(bytes.fromhex(self.bridge.sha256)))) as session:
            async with session.get(f"https://{self.bridge.address}/eventstream/clip/v2", headers=headers,
                                   timeout=aiohttp.ClientTimeout(total=None)) as response:
                async for line in response.content:
                    if line.startswith(b"data:"):
                        now = time.monotonic()
                        for event in json.loads(line[5:]):
                            if str(event.get("id", "")).startswith("bench-"):
                                self.arrived.setdefault(int(event["id"][6:]), now)

    def stop(self) -> None:
        if self.task is not None:
            self.loop.call_soon_threadsafe(self.task.cancel)
        self.thread.join(5)


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def latency(args) -> None:
    homed_path, homectl, which = binaries()
    print(f"homed: {homed_path} ({which}), homectl beside it")
    workdir = tempfile.mkdtemp(prefix="homed-bench-hue-", dir="/tmp")
    bridge = homed = provider = watch = client_sse = None
    try:
        bridge = Bridge(workdir)
        homed = HomedProcess(homed_path, workdir, in_memory=True)
        homed.start()
        from homed_hue import keyfile
        key_file = os.path.join(workdir, "hue", "bridge.json")
        keyfile.save(key_file, keyfile.Pairing(bridge.address, APPLICATION_KEY, "", bridge.sha256))
        provider = ProviderProcess([sys.executable, installed_program("homed-hue"), "--socket", homed.socket_path,
                                    "--key-file", key_file, "--log-level", "warning"],
                                   os.path.join(workdir, "hue.log")).start()
        light = next(s["rid"] for r in json.loads(FIXTURE.read_text())["data"] if r["id"] == LAMP
                     for s in r["services"] if s["rtype"] == "light")
        with homed.client() as client:
            def registered():
                found = provider_accessories(client, "hue")
                return LAMP in found and found[LAMP].reachable
            wait(registered, 30, "the lamp registered")
            cid = ids_of(provider_accessories(client, "hue")[LAMP])[(f"light:{light}", "Brightness")]
        client_sse = SseClient(bridge)
        wait(lambda: bridge.streams() == 2, 15, "the provider and the plain client on the event stream")
        watch = subprocess.Popen([homectl, "--socket", homed.socket_path, "watch", "--json", "--characteristic",
                                  str(cid), "--kind", "value"], stdout=subprocess.PIPE, bufsize=0)
        reader = watch.stdout

        def event(i, value):
            return [{"id": f"bench-{i}", "type": "update",
                     "data": [{"id": light, "type": "light", "dimming": {"brightness": float(value)}}]}]

        # The watch prints nothing until a change: warm-up values (0 and 100,
        # which the benchmark's events never are) pushed until the watch
        # prints one (its subscription is then open).
        ready = threading.Event()

        def warm_up():
            n = 0
            while not ready.is_set() and n < 60:
                bridge.push(event(-1 - n, WARM_UP[n % 2]))  # alternating: each a change
                n += 1
                ready.wait(0.5)
        pusher = threading.Thread(target=warm_up, daemon=True)
        pusher.start()
        while True:
            line = reader.readline()
            if not line:
                raise SystemExit("homectl watch ended")
            if json.loads(line).get("value") in WARM_UP:
                ready.set()
                break
        pusher.join()
        sent, arrived = [], []
        for i in range(args.events):
            value = 1 + i % 99  # 1..99, each a new value: each is one change
            sent.append(time.monotonic())
            bridge.push(event(i, value))
            while True:
                line = reader.readline()
                if not line:
                    raise SystemExit("homectl watch ended")
                printed = json.loads(line).get("value")
                if printed == value:
                    break
                if printed not in WARM_UP:  # a late warm-up line is skipped, nothing else
                    raise SystemExit(f"event {i}: expected {value}, watch printed {line!r}")
            arrived.append(time.monotonic())
        wait(lambda: len(client_sse.arrived) >= args.events, 10, "the plain client receiving every event")
        through = [(a - s) * 1000 for s, a in zip(sent, arrived)]
        direct = [(client_sse.arrived[i] - s) * 1000 for i, s in enumerate(sent) if i in client_sse.arrived]
        print(f"{args.events} bridge events, one at a time")
        print(f"  bridge -> homectl watch line: p50 {percentile(through, 50):.3f} ms, p99 {percentile(through, 99):.3f} ms")
        print(f"  bridge -> aiohttp SSE client: p50 {percentile(direct, 50):.3f} ms, "
              f"p99 {percentile(direct, 99):.3f} ms ({len(direct)} received)")
        print(f"  homed's share at p50 (provider, homed, homectl): "
              f"{percentile(through, 50) - percentile(direct, 50):.3f} ms")
    finally:
        if watch is not None:
            watch.kill()
            watch.wait()
        if client_sse is not None:
            client_sse.stop()
        if provider is not None:
            provider.cleanup()
        if homed is not None:
            homed.kill()
        if bridge is not None:
            bridge.kill()
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    lat = sub.add_parser("latency")
    lat.add_argument("--events", type=int, default=10000)
    args = parser.parse_args()
    {"latency": latency}[args.command](args)


if __name__ == "__main__":
    main()
