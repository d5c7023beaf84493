"""Helpers of the HomeKit provider's tests: the HAP-python accessory process,
the provider's commands and process, homectl, and what homed holds. Every
wait is bounded."""

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

from homed import pb
from homed_testkit import ProviderProcess, plain
from homed_testkit import homectl as run_homectl
from homed_testkit.providers import wait_for, wait_log  # noqa: F401 (the tests import them from here too)
from homed_testkit import installed_program

HERE = Path(__file__).resolve().parent
PROGRAM = installed_program("homed-homekit-provider")
SERVER = str(HERE / "accessory_server.py")
PROVIDER = "homekit"
CODE = "031-45-154"
DEVICE = "aa:bb:cc:dd:ee:01"


def key(aid):
    return f"{DEVICE}/{aid}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Accessory:
    """The HAP-python accessory process: started, killed (SIGKILL, by pid),
    started again on the same pairing state, maybe with another layout."""

    def __init__(self, workdir, processes, port=None, mac=None, mdns=False):
        self.workdir = workdir
        self.processes = processes
        self.port = port or free_port()
        self.mac = mac or DEVICE.upper()
        self.mdns = mdns
        self.state = os.path.join(workdir, "accessory.state")
        self.process = None
        self.runs = 0

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def start(self, layout=1):
        self.runs += 1
        argv = [sys.executable, SERVER, "--port", str(self.port), "--state", self.state, "--pincode", CODE,
                "--layout", str(layout), "--mac", self.mac] + (["--mdns"] if self.mdns else [])
        self.process = ProviderProcess(argv, os.path.join(self.workdir, f"accessory-{self.runs}.log"))
        self.processes.append(self.process)
        self.process.start()
        self.process.expect("ready", timeout=15)
        return self

    def kill(self):
        self.process.kill()

    def send(self, command):
        self.process.send(command)

    def expect_set(self, characteristic, value, timeout=5.0):
        return self.process.expect("set", timeout, lambda e: e["characteristic"] == characteristic
                                   and e["value"] == value)


def run_cli(state_dir, *args, stdin=None, timeout=40):
    return subprocess.run([sys.executable, PROGRAM, *args, "--state-dir", state_dir], input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def pairing_files(state_dir):
    directory = os.path.join(state_dir, "pairings")
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else []


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def start_provider(homed, state_dir, processes, *extra, name="provider", mdns=False):
    argv = [sys.executable, PROGRAM, "run", "--state-dir", state_dir, "--socket", homed.socket_path,
            "--write-timeout", "3", "--read-timeout", "3", "--log-level", "debug", *extra]
    if not mdns:
        argv.append("--no-mdns")
    process = ProviderProcess(argv, os.path.join(homed.directory, f"{name}.log"))
    processes.append(process)
    return process.start()


def accessories(client):
    return {a.provider_key: a for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories
            if a.provider == PROVIDER}


def wait_accessories(client, keys, process, timeout=20.0, reachable=True):
    def ready():
        found = accessories(client)
        if set(keys) <= set(found) and all(found[k].reachable == reachable for k in keys):
            return found
        return None
    return wait_for(ready, timeout, f"accessories {sorted(keys)} reachable={reachable}", process)


def ids_of(accessory):
    """{(service type name, characteristic type name): id}."""
    return {(s.type_name, c.type_name): c.id for s in accessory.services for c in s.characteristics}


def value_of(client, cid, fresh=False):
    read = client.read([cid], fresh=fresh).reads[0]
    return plain(read.value) if read.code == 0 else (read.code, read.message)


def homectl(homed, *args, timeout=20):
    return run_homectl(homed, *args, timeout=timeout)


KEYS = [key(aid) for aid in range(1, 7)]


class Setup:
    """An accessory paired by the provider's `pair` command, the provider
    running, its accessories reachable in homed."""

    def __init__(self, homed, accessory, workdir, processes):
        self.homed = homed
        self.accessory = accessory
        self.state_dir = os.path.join(workdir, "provider-state")
        self.processes = processes
        self.provider = None
        self.client = None
        self.found = None

    def pair(self):
        result = run_cli(self.state_dir, "pair", self.accessory.address, stdin=CODE + "\n")
        assert result.returncode == 0, result.stderr
        return result

    def ready(self, keys=KEYS):
        self.pair()
        self.provider = start_provider(self.homed, self.state_dir, self.processes)
        self.client = self.homed.client()
        self.found = wait_accessories(self.client, keys, self.provider)
        return self

    def ids(self, aid):
        return ids_of(self.found[key(aid)])
