"""What the Python benchmarks share: a `homed` binary started on a fresh durable
database and stopped by its pid, raw connections past their hello, a socket
drained in a thread, and the alternating rounds and their medians. No figures
are made here; each benchmark script measures its own."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable, Dict, Iterator, List

from homed import Client
from homed.client_core import Call, Connection
from homed.framing import FrameDecoder

READ_SIZE = 1 << 20


def process_cpu_ns(pid: int) -> int:
    """Run time of every thread of `pid` so far, in nanoseconds."""
    total = 0
    base = f"/proc/{pid}/task"
    for task in os.listdir(base):
        try:
            with open(f"{base}/{task}/schedstat") as file:
                total += int(file.read().split()[0])
        except FileNotFoundError:  # a thread that ended meanwhile
            pass
    return total


def wait_for_socket(path: str, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"homed exited with status {process.returncode} before listening on {path}")
        try:
            with Client.connect(path, client_name="bench-probe") as client:
                client.get_status()
                return
        except Exception:  # not listening yet
            time.sleep(0.05)
    raise SystemExit(f"homed did not listen on {path} within {timeout:.0f} s")


@contextlib.contextmanager
def running_homed(binary: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """`binary` on a fresh durable database of the demo home (no simulator, the
    stored history on: a service's defaults); yields the process and its socket,
    and stops it (by its pid) and removes its files afterwards."""
    directory = tempfile.mkdtemp(prefix="homed-bench-")
    socket_path = f"{directory}/homed.sock"
    process = subprocess.Popen(
        [binary, "--socket", socket_path, "--db", f"{directory}/homed.sqlite", "--demo", "--no-simulator",
         "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_socket(socket_path, process)
        yield process, socket_path
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(directory, ignore_errors=True)


def demo_characteristic(path: str, type_name: str, writable: bool = True) -> int:
    """The first characteristic of `type_name` in the demo home (writable if asked)."""
    with Client.connect(path, client_name="bench-probe") as client:
        for listed in client.get_home().homes:
            for accessory in listed.accessories:
                for service in accessory.services:
                    for characteristic in service.characteristics:
                        if characteristic.type_name == type_name and (
                                characteristic.properties.writable or not writable):
                            return characteristic.id
    raise SystemExit(f"the demo home has no {'writable ' if writable else ''}{type_name}")


def raw_connection(path: str, name: str) -> tuple[socket.socket, Connection]:
    """A connected socket past its hello, and the frame codec to open calls with."""
    core = Connection(name, path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall(core.hello())
    while core.receive_hello(sock.recv(READ_SIZE)) is None:
        pass
    return sock, core


def untracked_call(call_id: int, method: str) -> Call:
    """A call whose answers are counted or decoded by the caller, not by the codec."""
    return Call(call_id, method, None)


class Drain(threading.Thread):
    """Reads a socket until it closes, counting frames; `on_frame`, if given, sees
    each frame's body as it comes."""

    def __init__(self, sock: socket.socket, on_frame: Callable[[object], None] | None = None):
        super().__init__(daemon=True)
        self.sock = sock
        self.frames = 0
        self.on_frame = on_frame
        self.decoder = FrameDecoder()

    def run(self) -> None:
        while True:
            try:
                data = self.sock.recv(READ_SIZE)
            except OSError:
                return
            if not data:
                return
            frames = self.decoder.feed(data)
            self.frames += len(frames)
            if self.on_frame is not None:
                for frame in frames:
                    self.on_frame(frame)


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    """Polls `condition` until it holds; a benchmark that never gets there says so."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.01)


def check_binaries(binaries: List[str]) -> None:
    for binary in binaries:
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"{binary}: not an executable homed")


def percentile(values: List[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def alternate_rounds(binaries: List[str], rounds: int, one_round: Callable[[str], Dict[str, float]],
                     unit: str) -> Dict[str, Dict[str, List[float]]]:
    """`one_round` of each build in turn, `rounds` times (the machine's drift hits
    them alike), each round's figures said on stderr; every build's figures by name."""
    figures: Dict[str, Dict[str, List[float]]] = {binary: {} for binary in binaries}
    for round_number in range(1, rounds + 1):
        for binary in binaries:
            measured = one_round(binary)
            for name, value in measured.items():
                figures[binary].setdefault(name, []).append(value)
            print(f"round {round_number}: {binary}: "
                  + ", ".join(f"{name} {value:.2f}{unit}" for name, value in measured.items()),
                  file=sys.stderr, flush=True)
    return figures


def report_medians(figures: Dict[str, Dict[str, List[float]]], unit: str) -> None:
    """Each build's median of each figure over the rounds, and its ratio to the
    first build's."""
    binaries = list(figures)
    reference = binaries[0]
    for name in figures[reference]:
        base = statistics.median(figures[reference][name])
        print(f"  {name}:")
        for binary in binaries:
            median = statistics.median(figures[binary][name])
            ratio = median / base if base else float("nan")
            print(f"    {binary}: {median:.2f} {unit}  ({ratio:.2f}x)")
