"""What the bridge's tests share: the test accessories (a provider in this
process that records every write it is sent), the bridge as a real process,
and reading its state directory."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from pathlib import Path
from typing import List

from homed import pb
from homed.provider import Provider, Ref
from homed_testkit import ProviderProcess
from homed_testkit.providers import wait_log
from homed_testkit import installed_program

BRIDGE_DIR = Path(__file__).resolve().parent.parent
REPO = BRIDGE_DIR.parents[2]
PROGRAM = installed_program("homed-homekit")

CUSTOM_TYPE = "6A1D0001-0000-4000-8000-686F6D656474"
RUNTIME_TYPE = "6A1D0002-0000-4000-8000-686F6D656474"   # readable, no events: homed does not stream it
REPLY_TYPE = "6A1D0003-0000-4000-8000-686F6D656474"     # with the write-response permission ("wr")

LAMP = {"key": "lamp", "name": "Desk Lamp", "category": "LIGHTBULB", "manufacturer": "Acme", "room": "Office",
        "services": [{"type": "Lightbulb", "primary": True, "characteristics": [
            {"type": "On", "value": False}, {"type": "Brightness", "value": 40},
            {"type": CUSTOM_TYPE, "type_name": "Warmth",
             "properties": {"readable": True, "writable": True, "supports_event_notification": True},
             "metadata": {"format": "FORMAT_UINT8", "unit": "UNIT_PERCENTAGE", "min_value": 0, "max_value": 50,
                          "step_value": 5}, "value": 10},
            {"type": RUNTIME_TYPE, "type_name": "Runtime", "properties": {"readable": True},
             "metadata": {"format": "FORMAT_UINT32", "unit": "UNIT_SECONDS"}, "value": 0},
            {"type": REPLY_TYPE, "type_name": "Reply",
             "properties": {"readable": True, "writable": True, "write_response": True},
             "metadata": {"format": "FORMAT_STRING"}, "value": ""}]},
            # The lamp's driver's own sensor: a service homed marks hidden.
            {"type": "TemperatureSensor", "name": "Driver temperature", "hidden": True, "characteristics": [
                {"type": "CurrentTemperature", "value": 41.0}]}]}
BUTTON = {"key": "button", "name": "Wall Button", "category": "PROGRAMMABLE_SWITCH", "room": "Office",
          "services": [{"type": "StatelessProgrammableSwitch", "characteristics": [
              {"type": "ProgrammableSwitchEvent"}]}]}
SENSOR = {"key": "sensor", "name": "Cellar Sensor", "category": "SENSOR", "room": "Cellar",
          "services": [{"type": "TemperatureSensor", "characteristics": [
              {"type": "CurrentTemperature", "value": 12.5}]}]}

ON = Ref("lamp", "Lightbulb", "On")
BRIGHTNESS = Ref("lamp", "Lightbulb", "Brightness")
WARMTH = Ref("lamp", "Lightbulb", "Warmth")
RUNTIME = Ref("lamp", "Lightbulb", "Runtime")
REPLY = Ref("lamp", "Lightbulb", "Reply")
PRESS = Ref("button", "StatelessProgrammableSwitch", "ProgrammableSwitchEvent")
TEMPERATURE = Ref("sensor", "TemperatureSensor", "CurrentTemperature")


class TestDevices:
    """The devices behind the test provider: values, and every write received."""

    __test__ = False

    def __init__(self, socket_path: str, accessories=(LAMP, BUTTON, SENSOR)):
        self.socket_path = socket_path
        self.values = {ON: False, BRIGHTNESS: 40, WARMTH: 10, RUNTIME: 0, REPLY: "", TEMPERATURE: 12.5}
        self.writes: List[tuple] = []
        self.cond = threading.Condition()
        self.refuse = None   # (code, message) to refuse writes with
        self.report_first = False  # report a write's values before answering it (homed's event then comes first)
        self.provider = Provider("testdevices", list(accessories), socket_path=socket_path,
                                 on_read=self.on_read, on_write=self.on_write)

    def start(self) -> "TestDevices":
        self.provider.start()
        assert self.provider.wait_registered(10), "the test provider did not register"
        return self

    def stop(self) -> None:
        self.provider.stop()

    def on_read(self, refs):
        return {ref: self.values.get(ref) for ref in refs if ref in self.values}

    def on_write(self, values, atomic):
        with self.cond:
            for ref, value in values.items():
                self.writes.append((ref, value))
                if self.refuse is None:
                    self.values[ref] = value
            self.cond.notify_all()
        if self.refuse is not None:
            return {ref: self.refuse for ref in values}
        if self.report_first:
            self.provider.report(dict(values))
        return None

    def wait_write(self, ref, value, timeout: float = 10.0):
        with self.cond:
            if not self.cond.wait_for(lambda: (ref, value) in self.writes, timeout):
                raise AssertionError(f"the provider was not sent {ref} = {value!r} within {timeout} s: {self.writes}")

    def id_of(self, ref) -> int:
        return self.provider.id_of(ref)

    def accessory_id(self, key: str) -> int:
        return self.provider.accessory_id(key)


def free_port(count: int = 1) -> int:
    """A free loopback port P, with P + 1 … P + count - 1 free too (bridge N
    listens on P + N)."""
    while True:
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            others = []
            try:
                for n in range(1, count):
                    other = socket.socket()
                    others.append(other)
                    other.bind(("127.0.0.1", port + n))
                return port
            except OSError:
                continue
            finally:
                for other in others:
                    other.close()


class BridgeProcess:
    """homed-homekit as a real process on 127.0.0.1:port, without mDNS."""

    def __init__(self, workdir: str, socket_path: str, port: int = None, extra=(), state_dir: str = None):
        self.workdir = workdir
        self.port = port or free_port(4)
        self.state_dir = state_dir or os.path.join(workdir, "homekit-state")
        self.argv = [sys.executable, PROGRAM, "--state-dir", self.state_dir, "--socket", socket_path,
                     "--address", "127.0.0.1", "--port", str(self.port), "--no-advertise", *extra]
        self.runs = 0
        self.process = None

    def start(self, processes: list, wait_for: str = "home read at seq") -> "BridgeProcess":
        self.runs += 1
        log_path = os.path.join(self.workdir, f"bridge-{self.runs}.log")
        self.process = ProviderProcess(self.argv, log_path).start()
        processes.append(self.process)
        if wait_for:
            wait_log(self.process, wait_for, timeout=15)
        return self

    def stop(self) -> int:
        """SIGTERM, as systemd stops it; returns the exit status."""
        self.process.proc.terminate()
        return self.process.proc.wait(10)

    def log(self) -> str:
        return Path(self.process.log_path).read_text(errors="replace")

    def wait_log(self, text: str, count: int = 1, timeout: float = 10.0) -> str:
        return wait_log(self.process, text, timeout=timeout, count=count)

    def pincode(self, index: int = 0) -> str:
        return json.loads(Path(self.state_dir, "setup.json").read_text())[str(index)]["pincode"]

    def hap_state(self, index: int = 0) -> dict:
        return json.loads(Path(self.state_dir, f"bridge-{index}.state").read_text())

    def ids(self) -> dict:
        return json.loads(Path(self.state_dir, "ids.json").read_text())


def placement(bridge: BridgeProcess, homed_accessory_id: int, homed_char_id: int):
    """(aid, iid) the bridge gave a homed characteristic (from its ids.json)."""
    entry = bridge.ids()["accessories"][str(homed_accessory_id)]
    return entry["aid"], entry["iids"][f"c{homed_char_id}"]


def value_of(client, characteristic_id):
    value = client.read([characteristic_id]).reads[0].value
    kind = value.WhichOneof("kind")
    return None if kind is None else getattr(value, kind)


__all__ = ["TestDevices", "BridgeProcess", "placement", "free_port", "value_of", "pb"]
