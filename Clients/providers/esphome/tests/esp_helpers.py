"""Helpers of the end-to-end tests: the fake device and the provider as
processes, the provider's configuration, and what homed holds of its
accessories (the shared parts are homed_testkit.providers'). Every wait is
bounded."""

import copy
import json
import os
import sys

from homed_testkit import ProviderProcess, installed_program
from homed_testkit.mqtt_broker import free_port
from homed_testkit.providers import (ids_of, provider_accessories, start_program, value_of,  # noqa: F401 (tests import them here)
                                     wait_for, wait_log, wait_provider_accessories, wait_value)

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = installed_program("homed-esphome")
PROVIDER = "esphome"
MAC = "AA:BB:CC:DD:EE:FF"
FAKE = os.path.join(HERE, "fake_device.py")


def definition() -> dict:
    with open(os.path.join(HERE, "devices.json"), encoding="utf-8") as f:
        return json.load(f)


class FakeDevice:
    """The fake device on one port, killed (SIGKILL) and started again there,
    with the definition given (devices.json unless told)."""

    def __init__(self, workdir, processes, noise_psk=None, extra=()):
        self.workdir, self.processes, self.noise_psk, self.extra = workdir, processes, noise_psk, list(extra)
        self.port = free_port()
        self.process = None
        self.starts = 0

    def start(self, data=None):
        self.starts += 1
        path = os.path.join(self.workdir, f"device-{self.starts}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data if data is not None else definition(), f)
        argv = [sys.executable, FAKE, "--definition", path, "--port", str(self.port)]
        if self.noise_psk:
            argv += ["--noise-psk", self.noise_psk]
        argv += self.extra
        process = ProviderProcess(argv, os.path.join(self.workdir, f"device-{self.starts}.log"))
        self.processes.append(process)
        self.process = process.start()
        self.process.expect("listening", timeout=15)
        return self

    def kill(self):
        self.process.kill()

    def commands(self, kind):
        return [e["fields"] for e in self.process.history if e["event"] == "command" and e["type"] == kind]

    def wait_command(self, kind, timeout=10.0):
        return self.process.expect("command", timeout, where=lambda e: e["type"] == kind)["fields"]

    def send(self, order):
        self.process.send(order)
        self.process.expect("done", 10)


def with_state(data, object_id, **fields):
    """A copy of a definition whose entity starts with other state fields."""
    data = copy.deepcopy(data)
    for entity in data["entities"]:
        if entity["fields"]["object_id"] == object_id:
            entity["state"]["fields"].update(fields)
    return data


def without(data, object_id):
    data = copy.deepcopy(data)
    data["entities"] = [e for e in data["entities"] if e["fields"]["object_id"] != object_id]
    return data


def write_config(workdir, devices, credentials=None):
    path = os.path.join(workdir, "esphome.toml")
    with open(path, "w", encoding="utf-8") as f:
        for name, port, *rest in devices:
            f.write(f'[[device]]\nname = "{name}"\nhost = "127.0.0.1"\nport = {port}\n')
            if rest:
                f.write(f"encryption = {'true' if rest[0] else 'false'}\n")
    argv = ["--config", path]
    if credentials is not None:
        secret = os.path.join(workdir, "esphome.credentials")
        fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("".join(f"{name} = {key}\n" for name, key in credentials.items()))
        argv += ["--credentials", secret]
    return argv


def start_provider(homed, workdir, processes, config_argv, *extra, write_timeout=3.0):
    argv = [sys.executable, PROGRAM, "--socket", homed.socket_path, *config_argv,
            "--state-dir", os.path.join(workdir, "state"), "--write-timeout", str(write_timeout),
            "--keepalive", "2", "--log-level", "debug", *extra]
    return start_program(homed, argv, "esphome.log", processes)


def accessories(client):
    return provider_accessories(client, PROVIDER)


def wait_accessories(client, keys, process, timeout=20.0, reachable=True):
    return wait_provider_accessories(client, PROVIDER, keys, process, timeout, reachable)
