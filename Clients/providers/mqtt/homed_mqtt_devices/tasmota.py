"""Tasmota's own discovery as entities, with no I/O.

A Tasmota (SetOption19 0, the default since 9.x) announces itself on
`<prefix>/<MAC>/config` and its sensors on `<prefix>/<MAC>/sensors`, both
retained. The config says its topics (`ft`, the full topic, with `tp` the
cmnd/stat/tele prefixes and `t` the topic), its relays (`rl`: 1 a relay, 2 a
light, 3 a shutter), its light (`lt_st`: 0 on/off … 5 RGBCW), names (`dn`,
`fn`) and SetOptions (`so`). `map_device` gives the device's entities, one
per relay or light and one per sensor reading, every one reachable while
`tele/LWT` says `onln`, and the commands that ask the device for its state
(it retains none). What it does not map is listed, for one log line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

from .bindings import Availability, AvailabilitySource
from .components import EntityMap, Refused
from .native_entity import Entity, entity
from .tasmota_lights import light
from .tasmota_sensors import battery, sensors
from .tasmota_states import bind_read, power_reader

__all__ = ["VERSION", "TasmotaDevice", "TasmotaConfig", "discovery_topic", "map_device"]

#: The discovery version this provider reads (`ver`): a config of another
#: says things it does not know how to read, and is left out whole.
VERSION = 1
TOPIC = re.compile(r"^(?P<mac>[A-Z0-9_-]+)/(?P<kind>config|sensors)$")
RL_RELAY, RL_LIGHT, RL_SHUTTER = 1, 2, 3
SO_HASS_LIGHT = "30"  # a relay announced as a light
SO_MQTT_RESPONSE = "4"  # answers on stat/<COMMAND> instead of stat/RESULT


@dataclass
class TasmotaDevice:
    mac: str
    name: str
    entities: List[EntityMap]
    #: What the device announced and this provider does not map, for the log.
    left_out: List[str] = field(default_factory=list)
    #: (topic, payload) commands that make the device say its state, sent when it comes online.
    polls: List[Tuple[str, str]] = field(default_factory=list)
    lwt: Optional[AvailabilitySource] = None


def discovery_topic(prefix: str, topic: str) -> Optional[Tuple[str, str]]:
    """(MAC, "config" or "sensors") of a topic under the discovery prefix;
    ("", "") for another topic under it; None for a topic elsewhere."""
    if not topic.startswith(prefix + "/"):
        return None
    match = TOPIC.match(topic[len(prefix) + 1:])
    return (match["mac"], match["kind"]) if match else ("", "")


class TasmotaConfig:
    """A discovery config's values, each checked as it is read (Refused names the key)."""

    def __init__(self, mac: str, config: Any):
        if not isinstance(config, dict):
            raise Refused(f"the config is a JSON {type(config).__name__}, not an object")
        self.raw = config
        version = config.get("ver")
        if version != VERSION:
            raise Refused(f"discovery version {version!r} is not one this provider reads (it reads {VERSION})")
        if self.text("mac") != mac:
            raise Refused(f"its mac {config['mac']!r} is not the {mac!r} of its topic")
        self.mac = mac

    def text(self, key: str) -> str:
        value = self.raw.get(key)
        if not isinstance(value, str):
            raise Refused(f"{key} is {_what(value)}, not a text")
        return value

    def texts(self, key: str, at_least: int) -> List[Optional[str]]:
        value = self.raw.get(key)
        if not isinstance(value, list) or len(value) < at_least or not all(
                v is None or isinstance(v, str) for v in value):
            raise Refused(f"{key} is {_what(value)}, not a list of at least {at_least} texts")
        return value

    def numbers(self, key: str, default: Optional[List[int]] = None) -> List[int]:
        value = self.raw.get(key, default)
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise Refused(f"{key} is {_what(value)}, not a list of numbers")
        return value

    def number(self, key: str, default: int = 0) -> int:
        value = self.raw.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool):
            raise Refused(f"{key} is {_what(value)}, not a number")
        return value

    def option(self, number: str) -> int:
        """SetOption<number>, 0 when the config does not say (an older firmware's)."""
        options = self.raw.get("so", {})
        if not isinstance(options, dict):
            raise Refused(f"so is {_what(options)}, not an object")
        value = options.get(number, 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def topic(self, index: int) -> str:
        """The full topic with the cmnd (0), stat (1) or tele (2) prefix, as the
        device builds it (`%prefix%/%topic%/` by default)."""
        full = self.text("ft")
        topic = full.replace("%prefix%", self.texts("tp", 3)[index] or "").replace("%topic%", self.text("t"))
        topic = topic.replace("%id%", self.mac[-6:])
        if "%hostname%" in topic:
            topic = topic.replace("%hostname%", self.text("hn"))
        if "+" in topic or "#" in topic or "%" in topic:
            raise Refused(f"its full topic {full!r} gives {topic!r}, not a topic to use")
        return topic


def _what(value: Any) -> str:
    return "missing" if value is None else repr(value)[:40]


def map_device(mac: str, config: Any, sensor_config: Any = None) -> TasmotaDevice:
    """A device's entities from its config (and its sensors config, if any);
    raises Refused for a config that cannot be read as it is."""
    c = TasmotaConfig(mac, config)
    cmnd, stat, tele = c.topic(0), c.topic(1), c.topic(2)
    name = c.text("dn")
    states = c.texts("state", 2)
    device = {"identifiers": [mac], "name": name, "manufacturer": "Tasmota", "model": c.raw.get("md"),
              "sw_version": c.raw.get("sw"), "serial_number": mac}
    lwt = AvailabilitySource(tele + "LWT", c.text("onln"), c.text("ofln"))
    out = TasmotaDevice(mac, name, [], lwt=lwt)
    relays = c.numbers("rl")
    names = c.texts("fn", 0)
    for idx, kind in enumerate(relays):
        if kind == RL_SHUTTER:
            out.left_out.append(f"relay {idx + 1} (a shutter)")
        if kind not in (RL_RELAY, RL_LIGHT):
            continue
        as_light = kind == RL_LIGHT or c.option(SO_HASS_LIGHT) == 1
        platform = "light" if as_light else "switch"
        uid = f"{mac}_{platform}_{'light' if kind == RL_LIGHT else 'relay'}_{idx}"
        e = entity(uid, f"tasmota:{mac}#{uid}", platform, _friendly_name(names, idx, name, platform), device)
        readers = (stat + "RESULT", tele + "STATE")
        if kind == RL_LIGHT:
            light(e, c, idx, relays, states, cmnd, readers)
        else:
            _relay(e, idx, states, cmnd, readers, as_light)
        out.entities.append(_result(e, mac, lwt))
    if out.entities:
        out.polls.append((cmnd + "STATE", ""))
    if c.number("bat"):
        e = entity(f"{mac}_status_sensor_battery_level", f"tasmota:{mac}#battery", "sensor", None, device)
        battery(e, tele + "STATE", stat + "STATUS11")
        out.entities.append(_result(e, mac, lwt))
        out.polls.append((cmnd + "STATUS", "11"))
    if sensor_config is not None:
        found = sensors(lambda uid, label: entity(uid, f"tasmota:{mac}#{uid}", "sensor", label, device),
                        mac, sensor_config, tele + "SENSOR", stat + "STATUS10")
        out.entities.extend(_result(e, mac, lwt) for e in found.entities)
        out.left_out.extend(found.left_out)
        if found.entities:
            out.polls.append((cmnd + "STATUS", "10"))
    out.left_out.extend(f"switch input {i + 1}" for i, mode in enumerate(c.numbers("swc", [])) if mode != -1)
    out.left_out.extend(f"button {i + 1}" for i, on in enumerate(c.numbers("btn", [])) if on)
    if c.number("if"):
        out.left_out.append("the iFan's fan")
    if c.option(SO_MQTT_RESPONSE):
        out.left_out.append("its answers on stat/<command> (SetOption4; its states are read from tele/STATE only)")
    return out


def _friendly_name(names: List[Optional[str]], idx: int, device_name: str, platform: str) -> Optional[str]:
    """As Tasmota's own integration names them: its FriendlyName, none (the
    device's name) for the first when it is the device name, else 'Switch 2'."""
    if idx >= len(names) or names[idx] is None:
        return f"{platform.capitalize()} {idx + 1}"
    if idx == 0 and names[idx] == device_name:
        return None
    return names[idx]


def _relay(e: Entity, idx: int, states: List[Optional[str]], cmnd: str, readers: Tuple[str, ...],
           as_light: bool) -> None:
    service = e.service("Lightbulb" if as_light else "Switch")
    off, on = states[0], states[1]
    bind_read(e, service, "On", readers, power_reader(idx, states),
              write=lambda v, cur: [(f"{cmnd}Power{idx + 1}", on if v else off)])


def _result(e: Entity, mac: str, lwt: AvailabilitySource) -> EntityMap:
    return e.result(f"tasmota:{mac}#{e.uid}", Availability([lwt]))
