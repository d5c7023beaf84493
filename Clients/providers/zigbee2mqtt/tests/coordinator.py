"""A fake Zigbee2MQTT coordinator on a real broker: it publishes
`bridge/state` and `bridge/devices` (retained, again on every connection, as
Zigbee2MQTT does), each device's state on `<base>/<name>`, answers `/get` with
the state, and answers `/set` by echoing the new state — promptly, late,
partially (only the first property written), or never — per device."""

from __future__ import annotations

import copy
import json
import threading
import time
from typing import Dict, List, Optional

import paho.mqtt.client as mqtt

from . import devices as catalog

BASE = "zigbee2mqtt"

#: The state each device starts in (what /get answers).
INITIAL: Dict[str, dict] = {
    "kitchen/ceiling": {"state": "ON", "brightness": 127, "color_temp": 300},
    "Living Hue": {"state": "OFF", "brightness": 254, "color": {"x": 0.3, "y": 0.3}},
    "Desk strip": {"state": "ON", "brightness": 200, "color": {"hue": 240, "saturation": 80}},
    "Hall dimmer": {"state": "OFF", "brightness": 50},
    "Porch light": {"state": "OFF"},
    "Coffee plug": {"state": "OFF"},
    "Washer plug": {"state": "ON", "power": 320.5, "energy": 12.3},
    "Stairs 2-gang": {"state_l1": "ON", "state_l2": "OFF"},
    "Garage 3-gang": {"state_l1": "OFF", "state_l2": "OFF", "state_l3": "ON"},
    "Fan relay": {"state": "OFF"},
    "Bedroom blind": {"position": 40, "state": "OPEN", "battery": 88},
    "Office venetian": {"position": 100, "tilt": 50, "moving": "STOP"},
    "Front door": {"state": "LOCK", "lock_state": "locked", "battery": 67},
    "Radiator": {"occupied_heating_setpoint": 20.5, "local_temperature": 19.37, "system_mode": "heat",
                 "running_state": "heat", "battery": 90},
    "Window contact": {"contact": True, "battery": 100},
    "Door contact": {"contact": False, "battery_low": False, "tamper": False, "battery": 95},
    "Hall motion": {"occupancy": False, "illuminance_lux": 120, "illuminance": 3000, "battery": 80},
    "Attic motion": {"occupancy": False, "battery_low": True, "tamper": False},
    "Sink leak": {"water_leak": False, "battery_low": False, "battery": 70},
    "Kitchen smoke": {"smoke": False, "battery_low": False, "battery": 99},
    "Boiler CO": {"carbon_monoxide": False, "battery_low": False, "battery": 60},
    "Bedroom climate": {"temperature": 21.37, "humidity": 51.92, "pressure": 1012.4, "battery": 91},
    "Office air": {"temperature": 22.1, "humidity": 40.0, "co2": 650},
    "Shelf vibration": {"vibration": False, "battery": 50},
    "Living remote": {"battery": 74},
    "Bedside button": {"battery": 33},
    "Wall remote": {"battery": 81},
}


def _merge(into: dict, part: dict) -> None:
    for key, value in part.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


class FakeCoordinator:
    def __init__(self, port: int, base: str = BASE, username: Optional[str] = None, password: Optional[str] = None):
        self.port = port
        self.base = base
        self.devices: List[dict] = catalog.bridge_devices()
        self.states: Dict[str, dict] = copy.deepcopy(INITIAL)
        self.modes: Dict[str, tuple] = {}  # name -> ("late", seconds) | ("partial",) | ("never",)
        self.received: List[tuple] = []  # (topic, payload dict) of every /set and /get
        self.cond = threading.Condition()
        self.connected = threading.Event()
        self.client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id="fake-z2m")
        self.client.reconnect_delay_set(1, 1)
        if username is not None:
            self.client.username_pw_set(username, password)
        self.client.will_set(f"{base}/bridge/state", json.dumps({"state": "offline"}), qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = lambda *a: self.connected.clear()
        self.client.on_message = self._on_message
        self.timers: List[threading.Timer] = []

    def start(self) -> "FakeCoordinator":
        self.client.connect_async("127.0.0.1", self.port, keepalive=5)
        self.client.loop_start()
        if not self.connected.wait(10):
            raise AssertionError("the fake coordinator could not connect to the broker")
        return self

    def stop(self) -> None:
        for timer in self.timers:
            timer.cancel()
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        if reason.is_failure:
            return
        client.subscribe(f"{self.base}/#", qos=1)
        self.publish_bridge()
        self.connected.set()

    def publish_bridge(self, online: bool = True) -> None:
        self.client.publish(f"{self.base}/bridge/state", json.dumps({"state": "online" if online else "offline"}),
                            qos=1, retain=True)
        self.publish_devices()
        if online:
            # As Zigbee2MQTT does on start (cache_state_send_on_startup): every
            # device's last state, not retained.
            for name, state in self.states.items():
                self.publish(name, state)

    def publish_devices(self, devices: Optional[List[dict]] = None) -> None:
        if devices is not None:
            self.devices = devices
        self.client.publish(f"{self.base}/bridge/devices", json.dumps(self.devices), qos=1, retain=True)

    def publish(self, name: str, state: dict) -> None:
        """A device's report (a sensor's reading, a button's action)."""
        self.client.publish(f"{self.base}/{name}", json.dumps(state), qos=1)

    def raw(self, topic: str, payload: bytes, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain)

    def change(self, name: str, state: dict) -> None:
        """The device changed by itself (a switch pressed on the wall)."""
        _merge(self.states.setdefault(name, {}), state)
        self.publish(name, self.states[name])

    def _on_message(self, client, userdata, message):
        topic = message.topic
        if not topic.startswith(self.base + "/") or topic.startswith(self.base + "/bridge/"):
            return
        rest = topic[len(self.base) + 1:]
        for suffix in ("/set", "/get"):
            if rest.endswith(suffix):
                name = rest[:-len(suffix)]
                try:
                    payload = json.loads(message.payload)
                except ValueError:
                    return
                with self.cond:
                    self.received.append((topic, payload))
                    self.cond.notify_all()
                if suffix == "/get":
                    self.publish(name, self.states.get(name, {}))
                else:
                    self._set(name, payload)

    def _set(self, name: str, payload: dict) -> None:
        mode = self.modes.get(name, ("prompt",))
        if mode[0] == "never":
            return
        if mode[0] == "partial":
            first = next(iter(payload))
            payload = {first: payload[first]}
        _merge(self.states.setdefault(name, {}), payload)
        state = copy.deepcopy(self.states[name])
        if mode[0] == "late":
            timer = threading.Timer(mode[1], self.publish, (name, state))
            self.timers.append(timer)
            timer.start()
        else:
            self.publish(name, state)

    def wait_received(self, topic: str, timeout: float = 10.0) -> dict:
        """The first /set or /get payload on `topic` (removed from the list)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for item in self.received:
                    if item[0] == topic:
                        self.received.remove(item)
                        return item[1]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"nothing on {topic} within {timeout} s; got {self.received}")
                self.cond.wait(remaining)
