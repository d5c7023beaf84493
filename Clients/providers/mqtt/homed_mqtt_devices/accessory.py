"""A device's entities as one accessory, with no I/O.

Entities whose `device` blocks share an identifier are one device, and one
accessory keyed by that identifier (an entity without a device block is an
accessory of its own, keyed by its unique_id). `assemble(key, entities)` puts
their services together, the attachments onto the services they belong on,
the `device` block's name, manufacturer, model, serial number and firmware into
the accessory, and indexes the bindings by topic for the messages to come.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from homed.refs import Ref

from .bindings import Binding, Command, Message
from .components import ACTUATORS, EntityMap
from .templates import MISSING, RenderError
from .values import object_name, valid_name

__all__ = ["DeviceMap", "assemble", "merge_commands"]

CATEGORIES = {"Lightbulb": "LIGHTBULB", "Switch": "SWITCH", "Outlet": "OUTLET", "WindowCovering": "WINDOW_COVERING",
              "LockMechanism": "DOOR_LOCK", "Thermostat": "THERMOSTAT"}
SENSOR_SERVICES = {"TemperatureSensor", "HumiditySensor", "LightSensor", "CarbonDioxideSensor",
                   "CarbonMonoxideSensor", "AirQualitySensor", "ContactSensor", "MotionSensor", "OccupancySensor",
                   "LeakSensor", "SmokeSensor"}


@dataclass
class DeviceMap:
    key: str
    accessory: dict  # without values (but the constants)
    entities: Dict[str, EntityMap]  # by unique id
    #: The binding that writes (or reads, for a read-only one) each characteristic.
    bindings: Dict[Ref, Binding]
    #: Every binding by the topic filter it reads, in reading order.
    by_topic: Dict[str, List[Binding]] = field(default_factory=dict)
    #: Left out, for the log: (entity uid, what and why).
    dropped: List[Tuple[str, str]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.accessory["name"]

    def constants(self) -> Dict[Ref, Any]:
        return {ref: b.constant for ref, b in self.bindings.items() if b.constant is not MISSING}

    def decode(self, topic: str, message: Message, current: Dict[Ref, Any]):
        """What a message on `topic` (a filter this device reads) says:
        ({ref: value}, [clamped refs], {refs acknowledged}, [(entity uid, error)])."""
        values: Dict[Ref, Any] = {}
        clamped: List[Ref] = []
        acks = set()
        errors: List[Tuple[str, str]] = []
        view = _Overlay(values, current)
        for binding in self.by_topic.get(topic, ()):
            try:
                value, was_clamped = binding.value(message, view)
            except RenderError as error:
                errors.append((binding.entity, str(error)))
                continue
            if value is MISSING:
                continue
            values[binding.ref] = value
            if was_clamped:
                clamped.append(binding.ref)
            if binding.acks is not None and value in binding.ack_values:
                acks.add(binding.acks)
        # One error per entity and message is enough (its characteristics share the payload).
        seen = set()
        errors = [(uid, why) for uid, why in errors if not (uid in seen or seen.add(uid))]
        return values, clamped, acks, errors

    def commands(self, values: Dict[Ref, Any], current: Dict[Ref, Any]) -> List[Tuple[Command, EntityMap]]:
        """The messages that write these values (values of one entity that go
        to one topic as JSON merged into one). Raises KeyError for a ref that
        takes no writes, ValueError for one it cannot write."""
        state = dict(current)
        state.update(values)
        out: List[Tuple[Command, EntityMap]] = []
        for ref in sorted(values, key=lambda r: self.bindings[r].order if r in self.bindings else 0):
            binding = self.bindings[ref]
            if binding.write is None:
                raise KeyError(ref)
            entity = self.entities[binding.entity]
            for command in binding.write(values[ref], state):
                out.append((command, entity))
        return merge_commands(out)


class _Overlay(dict):
    """The values a message decoded so far over the ones known before."""

    def __init__(self, first: Dict, then: Dict):
        super().__init__()
        self.first, self.then = first, then

    def get(self, key, default=None):
        if key in self.first:
            return self.first[key]
        return self.then.get(key, default)


def merge_commands(commands: List[Tuple[Command, Any]]) -> List[Tuple[Command, Any]]:
    """JSON payloads for one topic merged into the first of them, and so are
    payload objects with the same `merge_key` (one Backlog, one RPC call);
    texts kept in order, one message each (a repeated one once)."""
    out: List[Tuple[Command, Any]] = []
    merged_at: Dict[Tuple[str, Any], int] = {}
    seen = set()
    for (topic, payload), entity in commands:
        key = None if isinstance(payload, (dict, str)) else getattr(payload, "merge_key", None)
        if isinstance(payload, dict) or key is not None:
            slot = (topic, key)
            if slot in merged_at:
                into = out[merged_at[slot]][0][1]
                if isinstance(payload, dict):
                    _merge(into, payload)
                else:
                    into.merge(payload)
                continue
            merged_at[slot] = len(out)
            out.append(((topic, copy.deepcopy(payload)), entity))
        elif (topic, payload) not in seen:
            seen.add((topic, payload))
            out.append(((topic, payload), entity))
    return out


def _merge(into: dict, part: dict) -> None:
    for key, value in part.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _info(entities: List[EntityMap], field_name: str) -> Optional[str]:
    for entity in entities:
        value = entity.device.get(field_name)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    return None


def assemble(key: str, entities: List[EntityMap]) -> Optional[DeviceMap]:
    """The accessory of one device, or None when none of its entities brings
    a service (only attachments, say a battery_low alone)."""
    ordered = sorted(entities, key=lambda e: (e.component not in ACTUATORS, ACTUATORS.index(e.component)
                                              if e.component in ACTUATORS else 0, e.uid))
    services: List[dict] = []
    bindings: Dict[Ref, Binding] = {}
    readers: List[Binding] = []
    dropped: List[Tuple[str, str]] = []
    sensor_keys: List[str] = []
    for entity in ordered:
        for service in entity.services:
            services.append(copy.deepcopy(service))
            if entity.sensor:
                sensor_keys.append(service["key"])
        for binding in entity.bindings:
            bindings.setdefault(binding.ref, binding)
            readers.append(binding)
    by_key = {s["key"]: s for s in services}
    battery = next((s for s in services if s["type"] == "BatteryService"), None)
    for entity in ordered:
        for attachment in entity.attachments:
            ctype = attachment.characteristic.get("type_name") or attachment.characteristic["type"]
            if attachment.kind == "low_battery" and battery is not None:
                targets = [battery]
            elif attachment.kind == "pressure":
                targets = [by_key[k] for k in sensor_keys[:1]]
            else:
                targets = [by_key[k] for k in sensor_keys]
            if not targets:
                dropped.append((entity.uid, f"{ctype} has no sensor service of its device to go on"))
                continue
            for service in targets:
                ref = Ref(key, service["key"], ctype)
                if ref in bindings and service is battery:
                    # The battery's own StatusLowBattery (from its level) gives way to the device's battery_low.
                    readers = [b for b in readers if b.ref != ref]
                    service["characteristics"] = [c for c in service["characteristics"] if c["type"] != ctype]
                elif ref in bindings:
                    continue  # two tamper switches: the first one
                binding = attachment.make(ref)
                bindings[ref] = binding
                readers.append(binding)
                service["characteristics"].append(copy.deepcopy(attachment.characteristic))
    if not services:
        return None
    primary = next((s for s in services if s["type"] in CATEGORIES), services[0])
    primary["primary"] = True
    device_name = _info(ordered, "name")
    first_name = next((e.name for e in ordered if e.name), None)
    name = object_name(device_name or first_name or key, key)
    accessory = {"key": key, "name": name, "category": CATEGORIES.get(primary["type"], "SENSOR"),
                 "manufacturer": valid_name(_info(ordered, "manufacturer") or "", "MQTT"),
                 "model": valid_name(_info(ordered, "model") or "", "MQTT device"),
                 "serial_number": valid_name(_info(ordered, "serial_number") or key, "unknown"),
                 "services": services}
    firmware = _info(ordered, "sw_version")
    if firmware:
        accessory["firmware_revision"] = valid_name(firmware, "")
    by_topic: Dict[str, List[Binding]] = {}
    for binding in readers:
        if binding.topic:
            by_topic.setdefault(binding.topic, []).append(binding)
    return DeviceMap(key, accessory, {e.uid: e for e in ordered}, bindings, by_topic, dropped)
