"""A fleet of fake devices on a real broker, behaving as their firmware does:
on every connection each publishes its discovery configs (retained), says
it is online on its availability topic (retained, with a last will saying
offline) and publishes its state; a command changes its state and it
publishes the new one — promptly, late, or never, per device."""

from __future__ import annotations

import copy
import json
import threading
import time
from typing import Dict, List, Optional

import paho.mqtt.client as mqtt

from . import discovered_devices as catalog


class Fleet:
    def __init__(self, port: int, fleet: Optional[List[catalog.Device]] = None, username: Optional[str] = None,
                 password: Optional[str] = None):
        self.port = port
        self.devices = list(fleet if fleet is not None else catalog.DEVICES)
        self.states: Dict[str, dict] = {d.name: copy.deepcopy(d.initial) for d in self.devices}
        self.modes: Dict[str, tuple] = {}  # device name -> ("late", seconds) | ("never",)
        self.received: List[tuple] = []  # (topic, payload text) of every command
        self.cond = threading.Condition()
        self.connected = threading.Event()
        self.timers: List[threading.Timer] = []
        self.commands = {topic: device for device in self.devices for topic in device.commands}
        self.client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id="fake-fleet")
        self.client.reconnect_delay_set(1, 1)
        if username is not None:
            self.client.username_pw_set(username, password)
        # One connection stands for every device: its will takes the first
        # availability topic offline (the tests take the others offline by hand).
        first = next(d for d in self.devices if d.availability)
        self.client.will_set(first.availability[0], first.availability[2], qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = lambda *a: self.connected.clear()
        self.client.on_message = self._on_message

    def start(self) -> "Fleet":
        self.client.connect_async("127.0.0.1", self.port, keepalive=5)
        self.client.loop_start()
        if not self.connected.wait(10):
            raise AssertionError("the fake fleet did not connect to the broker")
        return self

    def stop(self) -> None:
        for timer in self.timers:
            timer.cancel()
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        if reason.is_failure:
            return
        for topic in self.commands:
            client.subscribe(topic, qos=1)
        for device in self.devices:
            self.announce(device)
        self.connected.set()

    def device(self, name: str) -> catalog.Device:
        return next(d for d in self.devices if d.name == name)

    def announce(self, device: catalog.Device) -> None:
        for topic, config in device.configs.items():
            self.raw(topic, json.dumps(config), retain=True)
        if device.availability:
            self.raw(device.availability[0], device.availability[1], retain=True)
        self.publish_state(device)

    def publish_state(self, device: catalog.Device) -> None:
        for topic, payload in device.publish(self.states[device.name]):
            self.raw(topic, payload, retain=device.retain_state)

    def raw(self, topic: str, payload, retain: bool = False) -> None:
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        if threading.current_thread() is not getattr(self.client, "_thread", None):
            info.wait_for_publish(5)  # never on paho's own thread, which does the publishing

    def change(self, name: str, **fields) -> None:
        """The device changed by itself (a button pressed on it) and says so."""
        self.states[name].update(fields)
        self.publish_state(self.device(name))

    def _on_message(self, client, userdata, message):
        text = message.payload.decode()
        with self.cond:
            self.received.append((message.topic, text))
            self.cond.notify_all()
        device = self.commands.get(message.topic)
        if device is None:
            return
        device.commands[message.topic](self.states[device.name], text)
        mode = self.modes.get(device.name, ("echo",))
        if mode[0] == "never":
            return
        if mode[0] == "late":
            timer = threading.Timer(mode[1], self.publish_state, args=(device,))
            self.timers.append(timer)
            timer.start()
            return
        self.publish_state(device)

    def wait_received(self, topic: str, timeout: float = 5.0) -> str:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for index, (t, payload) in enumerate(self.received):
                    if t == topic:
                        del self.received[index]
                        return payload
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"nothing on {topic} within {timeout} s; got {self.received}")
                self.cond.wait(remaining)
