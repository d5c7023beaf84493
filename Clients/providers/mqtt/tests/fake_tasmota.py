"""A Tasmota on a real broker, behaving as its firmware does, with the
payloads recorded from real devices (tests/recorded): on every connection it
announces itself on `tasmota/discovery/<MAC>/config` and `…/sensors`
(retained) and says `Online` on `tele/LWT` (retained, its last will
`Offline`); it publishes the recorded states it is given; it answers
`State` and `Status 10|11` with what it last said, and a command
(`Power1 ON`, a Backlog of `Dimmer`, `HsbColor1`, `HsbColor2`, `CT`) by
taking it and saying its new state on `stat/RESULT`, one message per
command — unless told to stay silent."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Dict, List, Optional, Tuple

import paho.mqtt.client as mqtt

PREFIX = "tasmota/discovery"
#: The light fields a Tasmota says in RESULT after a light command.
LIGHT_FIELDS = ("POWER", "Dimmer", "HSBColor", "White", "CT")


class FakeTasmota:
    def __init__(self, port: int, config: dict, sensors: Optional[dict] = None,
                 status_answers: Optional[Dict[str, str]] = None, name: Optional[str] = None):
        self.port = port
        self.config, self.sensors = config, sensors
        self.mac = config["mac"]
        full, tp = config["ft"], config["tp"]
        self.cmnd, self.stat, self.tele = (full.replace("%prefix%", p).replace("%topic%", config["t"]) for p in tp[:3])
        self.off, self.on = config["state"][0], config["state"][1]
        self.not_power_linked = config.get("so", {}).get("20") == 1
        self.state: dict = {}  # what STATE says: the recorded payloads played, merged
        self.status_answers = dict(status_answers or {})  # "10" -> the STATUS10 payload it answers
        self.answering = True
        self.received: List[Tuple[str, str]] = []
        self.cond = threading.Condition()
        self.connected = threading.Event()
        self.client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2,
                                  client_id=name or f"fake-tasmota-{self.mac}")
        self.client.reconnect_delay_set(1, 1)
        self.client.will_set(self.tele + "LWT", config["ofln"], qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = lambda *a: self.connected.clear()
        self.client.on_message = self._on_message

    # -- on the broker --------------------------------------------------------------------

    def start(self) -> "FakeTasmota":
        self.client.connect_async("127.0.0.1", self.port, keepalive=5)
        self.client.loop_start()
        if not self.connected.wait(10):
            raise AssertionError(f"the fake Tasmota {self.mac} did not connect to the broker")
        return self

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def drop_connection(self) -> None:
        """As a device that loses power: no goodbye, so the broker says its
        will; it connects again by itself a second later."""
        self.connected.clear()
        self.client.socket().shutdown(socket.SHUT_RDWR)

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        if reason.is_failure:
            return
        client.subscribe(self.cmnd + "#", qos=1)
        client.publish(f"{PREFIX}/{self.mac}/config", json.dumps(self.config), qos=1, retain=True)
        if self.sensors is not None:
            client.publish(f"{PREFIX}/{self.mac}/sensors", json.dumps(self.sensors), qos=1, retain=True)
        client.publish(self.tele + "LWT", self.config["onln"], qos=1, retain=True)
        self.connected.set()

    def raw(self, topic: str, payload, retain: bool = False) -> None:
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        if threading.current_thread() is not getattr(self.client, "_thread", None):
            info.wait_for_publish(5)

    def play(self, topic: str, payload: str) -> None:
        """A recorded message, sent as the device sent it; what it says is its state from now."""
        if topic.endswith(("/STATE", "/RESULT")):
            self.state.update(json.loads(payload))
        self.raw(topic, payload)

    def lwt(self, online: bool) -> None:
        self.raw(self.tele + "LWT", self.config["onln" if online else "ofln"], retain=True)

    # -- commands ---------------------------------------------------------------------------

    def _on_message(self, client, userdata, message):
        text = message.payload.decode()
        command = message.topic[len(self.cmnd):]
        with self.cond:
            self.received.append((message.topic, text))
            self.cond.notify_all()
        if not self.answering:
            return
        if command.upper() == "STATE":
            self._result(self.state)
        elif command.upper() == "STATUS" and text in self.status_answers:
            self.raw(f"{self.stat}STATUS{text}", self.status_answers[text])
        elif command.upper().startswith("POWER"):
            self._take(f"{command} {text}")
            self._result({"POWER": self.state["POWER"]})
        elif command.upper() == "BACKLOG":
            for part in text.split(";"):
                if part.strip() and part.strip().upper() != "NODELAY":
                    self._take(part.strip())
                    self._result({k: self.state[k] for k in LIGHT_FIELDS if k in self.state})

    def _take(self, command: str) -> None:
        name, _, argument = command.partition(" ")
        name = name.upper()
        if name.startswith("POWER"):
            self.state["POWER"] = self.on if argument.upper() in ("ON", "1", self.on.upper()) else self.off
            return
        if name.startswith("DIMMER"):
            self.state["Dimmer"] = int(argument)
        elif name in ("HSBCOLOR1", "HSBCOLOR2"):
            hue, saturation, brightness = self.state.get("HSBColor", f"0,0,{self.state.get('Dimmer', 100)}").split(",")
            hue, saturation = (argument, saturation) if name == "HSBCOLOR1" else (hue, argument)
            self.state["HSBColor"] = f"{hue},{saturation},{brightness}"
        elif name == "CT":
            self.state["CT"] = int(argument)
        if not self.not_power_linked:
            self.state["POWER"] = self.on  # a light command turns the light on
        self.state.setdefault("POWER", self.off)

    def _result(self, fields: dict) -> None:
        self.raw(self.stat + "RESULT", json.dumps(fields, separators=(",", ":")))

    def wait_received(self, suffix: str, timeout: float = 5.0) -> str:
        """The payload of the next command on `cmnd/<topic>/<suffix>` (taken off the list)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for index, (topic, payload) in enumerate(self.received):
                    if topic == self.cmnd + suffix:
                        del self.received[index]
                        return payload
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"nothing on {self.cmnd + suffix} within {timeout} s; got {self.received}")
                self.cond.wait(remaining)
