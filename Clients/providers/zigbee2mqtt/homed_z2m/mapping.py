"""Zigbee2MQTT's `definition.exposes` as HAP services, with no I/O.

`map_device(device)` turns one entry of `<base>/bridge/devices` into a
`DeviceMap`: the accessory to register (keyed by the IEEE address), and one
`Binding` per characteristic saying which device properties it reads, how to
decode it from a state message, and what to publish on `<device>/set` to write
it. The table in this folder's README is the same mapping in words; each kind
of expose has a module of its own (lights, covers, climate, sensors, buttons),
on the builder and bindings they share.
"""

from __future__ import annotations

import re
from typing import List

from .binding import MISSING, Binding, DeviceMap, Unsupported
from .builder import CATALOG, Builder
from .buttons import parse_action
from .climate import climate
from .covers import cover, lock
from .lights import light, switch
from .sensors import KNOWN_TYPES, PRESSURE_UUID, attach, generic
from .values import object_name, valid_name

__all__ = ["Binding", "DeviceMap", "Unsupported", "map_device", "parse_action", "CATALOG", "PRESSURE_UUID",
           "KNOWN_TYPES", "MISSING"]


def map_device(device: dict) -> DeviceMap:
    """One entry of bridge/devices as a DeviceMap; raises Unsupported (with
    why) for a device that is not registered at all."""
    if not isinstance(device, dict):
        raise Unsupported("not a JSON object")
    ieee = device.get("ieee_address")
    if not isinstance(ieee, str) or not re.fullmatch(r"0x[0-9a-fA-F]{16}", ieee):
        raise Unsupported(f"no valid ieee_address ({ieee!r})")
    friendly = device.get("friendly_name") if isinstance(device.get("friendly_name"), str) else ieee
    if device.get("type") == "Coordinator":
        raise Unsupported("the coordinator")
    if device.get("interview_completed") is False:
        raise Unsupported("its interview has not completed")
    definition = device.get("definition")
    if not device.get("supported", True) or not isinstance(definition, dict):
        raise Unsupported("Zigbee2MQTT does not support it (no definition)")
    exposes = definition.get("exposes")
    if not isinstance(exposes, list):
        raise Unsupported("its definition has no exposes list")
    name = object_name(friendly, ieee)
    b = Builder(ieee, name)
    b.has_lux = any(isinstance(e, dict) and e.get("name") == "illuminance_lux" for e in exposes)
    ignored: List[str] = []
    unknown: List[str] = []
    later: List[dict] = []
    has_power = next((e.get("property") for e in exposes if isinstance(e, dict) and e.get("name") == "power"
                      and e.get("type") == "numeric"), None)
    text = " ".join(str(definition.get(k, "")) for k in ("description", "model")).lower()
    top = {e.get("name"): e for e in exposes if isinstance(e, dict) and e.get("name")}
    looks_like_plug = bool(has_power) or any(w in text for w in ("plug", "socket", "outlet"))
    for expose in exposes:
        if not isinstance(expose, dict):
            unknown.append(repr(expose)[:40])
            continue
        etype = expose.get("type")
        mark = (len(b.services), set(b.bindings), len(b.sensor_keys), {k: list(v) for k, v in b.actions.items()})
        try:
            if etype == "light":
                light(b, expose, looks_like_plug)
            elif etype == "switch":
                switch(b, expose, looks_like_plug, has_power)
            elif etype == "cover":
                cover(b, expose, top)
            elif etype == "lock":
                lock(b, expose, ignored)
            elif etype == "climate":
                climate(b, expose)
            elif etype == "fan":
                ignored.append("fan")
            else:
                generic(b, expose, ignored, unknown, later)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            # One expose this mapping cannot make sense of: left out whole (its
            # service was not added yet, or is taken out again below).
            unknown.append(f"{expose.get('name') or etype} ({error})")
            b.services = b.services[:mark[0]]
            b.bindings = {r: v for r, v in b.bindings.items() if r in mark[1]}
            b.sensor_keys = b.sensor_keys[:mark[2]]
            b.actions = mark[3]
    try:
        attach(b, later, ignored)
    except (KeyError, TypeError, ValueError) as error:  # checked when collected: not expected here
        unknown.append(f"battery, tamper, pressure or air quality ({error})")
    b.services = [s for s in b.services if s["characteristics"]]
    if not b.services:
        raise Unsupported("none of its exposes maps to a HAP service"
                          + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
    b.services[0]["primary"] = True
    category = _category(b.services[0]["type"])
    accessory = {"key": ieee, "name": name, "category": category,
                 "manufacturer": valid_name(str(definition.get("vendor", "")), "Zigbee"),
                 "model": valid_name(str(definition.get("model", "")), "Zigbee device"),
                 "serial_number": ieee, "services": b.services}
    if isinstance(device.get("software_build_id"), str) and device["software_build_id"]:
        accessory["firmware_revision"] = valid_name(device["software_build_id"], "")
    return DeviceMap(ieee, friendly, accessory, b.bindings, b.actions, ignored, unknown, b.xy_colors)


def _category(service_type: str) -> str:
    return {"Lightbulb": "LIGHTBULB", "Switch": "SWITCH", "Outlet": "OUTLET", "WindowCovering": "WINDOW_COVERING",
            "LockMechanism": "DOOR_LOCK", "Thermostat": "THERMOSTAT",
            "StatelessProgrammableSwitch": "PROGRAMMABLE_SWITCH"}.get(service_type, "SENSOR")
