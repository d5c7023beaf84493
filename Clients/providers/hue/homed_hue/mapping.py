"""The bridge's CLIP v2 resources as homed accessories, with no I/O.

One accessory per Hue `device`, keyed by its id; its services come from the
resources the device lists (`light`, `button`, `motion`, `temperature`,
`light_level`, `device_power`), each service keyed by the resource's type and
id. `zigbee_connectivity` is the accessory's reachability. Each characteristic
has a `Binding` saying how to read it from its resource and what a write of it
puts. Resource types this mapping does not know are left out and named in
`DeviceMap.unknown` (the service logs one line per device); the table in this
folder's README is the same mapping in words."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from homed.device_values import object_name, valid_name, xy_to_hs
from homed.refs import Ref

from .resources import Resources

__all__ = ["MISSING", "Binding", "DeviceMap", "BridgeMap", "map_bridge", "press_of", "reachable_of", "hs_of",
           "lux", "IGNORED", "MAPPED", "service_groups"]

MISSING = object()  # the resource does not say (a colour light in white mode has no valid mirek)

SINGLE, DOUBLE, LONG = 0, 1, 2  # ProgrammableSwitchEvent
# Hue's button events: a short press is initial_press then short_release, a
# held one initial_press, long_press, repeat… and long_release. One HAP event
# per press: short_release is the single press and long_press the long one
# (it comes once, when the hold is long enough; a release after it is not
# another press); initial_press comes before both and is not reported, nor
# are repeat and long_release.
PRESSES = {"short_release": SINGLE, "double_short_release": DOUBLE, "long_press": LONG}

MAPPED = ("light", "button", "motion", "temperature", "light_level", "device_power", "zigbee_connectivity")
# Known and left out on purpose (README: what is left out and why); not logged.
IGNORED = {
    "device_software_update": "firmware updates are the Hue app's",
    "entertainment": "streaming areas have no HAP service",
    "motion_area_candidate": "MotionAware areas are the bridge's own",
    "zigbee_device_discovery": "pairing new Zigbee devices is the Hue app's",
    "bridge": "the bridge itself is the connection, not an accessory",
    "matter": "the bridge's Matter bridge is not homed's",
    "homekit": "the bridge's own HomeKit bridge is not homed's",
}
LOW_BATTERY = ("low", "critical")


@dataclass
class Binding:
    ref: Ref
    rid: str  # the resource it is read from and written to
    rtype: str
    decode: Callable[[dict], Any]  # the resource -> value, or MISSING
    fields: Tuple[str, ...] = ()  # the resource's fields a write of it changes (the confirming event has them)
    tolerance: float = 0.0
    event: bool = False  # a button: no value, presses only


@dataclass
class DeviceMap:
    device_id: str
    name: str
    accessory: dict  # the ProvidedAccessory, without values and reachability
    bindings: Dict[Ref, Binding]
    connectivity: Optional[str]  # the zigbee_connectivity resource's id
    unknown: List[str] = field(default_factory=list)  # resource types not known here


@dataclass
class BridgeMap:
    devices: Dict[str, DeviceMap]
    left_out: List[Tuple[str, str, str]]  # (device name, id, why) of devices not registered
    by_rid: Dict[str, List[Binding]] = field(default_factory=dict)
    by_ref: Dict[Ref, Binding] = field(default_factory=dict)
    connectivity: Dict[str, str] = field(default_factory=dict)  # zigbee_connectivity id -> device id

    def accessories(self, resources: Resources, bridge_up: bool = True) -> List[dict]:
        """The accessories with the values the resources hold and reachability."""
        out = []
        for device in self.devices.values():
            accessory = dict(device.accessory)
            services = []
            for service in accessory["services"]:
                service = dict(service, characteristics=[dict(c) for c in service["characteristics"]])
                for c in service["characteristics"]:
                    binding = device.bindings.get(Ref(device.device_id, service["key"], c["type"]))
                    if binding is None or binding.event:
                        continue
                    value = self.value(binding, resources)
                    if value is not MISSING:
                        c["value"] = value
                services.append(service)
            accessory["services"] = services
            accessory["unreachable"] = not (bridge_up and reachable_of(device, resources))
            out.append(accessory)
        return out

    @staticmethod
    def value(binding: Binding, resources: Resources):
        resource = resources.get(binding.rid)
        if resource is None:
            return MISSING
        try:
            return binding.decode(resource)
        except (KeyError, TypeError, ValueError):
            return MISSING

    def values_of(self, rid: str, resources: Resources) -> Dict[Ref, Any]:
        """Every value a resource now gives (a button gives none)."""
        out = {}
        for binding in self.by_rid.get(rid, ()):
            if not binding.event:
                value = self.value(binding, resources)
                if value is not MISSING:
                    out[binding.ref] = value
        return out


def reachable_of(device: DeviceMap, resources: Resources) -> bool:
    """A Zigbee device is reachable while the bridge says it is connected;
    one with no zigbee_connectivity (the bridge, a Wi-Fi device) always."""
    if device.connectivity is None:
        return True
    resource = resources.get(device.connectivity)
    return resource is None or resource.get("status") == "connected"


def press_of(item: dict) -> Optional[int]:
    """A button's update as a ProgrammableSwitchEvent, or None (not a press)."""
    button = item.get("button")
    if not isinstance(button, dict):
        return None
    report = button.get("button_report")
    event = report.get("event") if isinstance(report, dict) else button.get("last_event")
    return PRESSES.get(event)


def lux(light_level: float) -> float:
    """Hue's light level (10000 × log10(lux) + 1) in lux; 0 is darkness."""
    if light_level <= 0:
        return 0.0
    return round(10 ** ((light_level - 1) / 10000), 4)


def _report(resource: dict, section: str, name: str):
    """A sensor's reading: the newer `<name>_report` when the bridge gives it,
    else the older flat field."""
    part = resource[section]
    report = part.get(f"{name}_report")
    if isinstance(report, dict) and name in report:
        return report[name]
    value = part.get(name)
    if value is None:
        return MISSING
    return value


def _reading(section: str, name: str, convert):
    """A sensor's decoder: MISSING while the sensor has no reading (an invalid one is null)."""
    def decode(resource: dict):
        value = _report(resource, section, name)
        return MISSING if value is MISSING or value is None else convert(value)
    return decode


def _brightness(resource: dict):
    value = float(resource["dimming"]["brightness"])
    # A light at its lowest dim level (0.2 %) is on, not at 0 %.
    return 0 if value <= 0 else max(1, int(round(value)))


def _mirek(resource: dict):
    ct = resource["color_temperature"]
    if ct.get("mirek") is None or ct.get("mirek_valid") is False:
        return MISSING
    return int(ct["mirek"])


def hs_of(resource: dict):
    xy = resource["color"]["xy"]
    return xy_to_hs(float(xy["x"]), float(xy["y"]))


class _Builder:
    def __init__(self, device_id: str, name: str):
        self.device_id = device_id
        self.name = name
        self.services: List[dict] = []
        self.bindings: Dict[Ref, Binding] = {}

    def service(self, stype: str, resource: dict, name: str) -> dict:
        service = {"type": stype, "key": f"{resource['type']}:{resource['id']}",
                   "name": object_name(name, self.name), "characteristics": []}
        self.services.append(service)
        return service

    def bind(self, service: dict, resource: dict, ctype: str, decode, fields=(), tolerance=0.0, meta=None,
             event=False, writable=False, value=None) -> None:
        ref = Ref(self.device_id, service["key"], ctype)
        characteristic: Dict[str, Any] = {"type": ctype}
        if meta:
            characteristic["metadata"] = meta
        if value is not None:
            characteristic["value"] = value
        service["characteristics"].append(characteristic)
        if decode is not None:
            self.bindings[ref] = Binding(ref, resource["id"], resource["type"], decode, tuple(fields), tolerance,
                                         event)


def _light(b: _Builder, resource: dict, name: str, several: bool) -> None:
    own = resource.get("metadata", {}).get("name") if several else None
    if not isinstance(resource.get("on"), dict):
        raise ValueError("a light without on")
    service = b.service("Lightbulb", resource, own or name)
    b.bind(service, resource, "On", lambda r: bool(r["on"]["on"]), ("on",))
    if isinstance(resource.get("dimming"), dict):
        b.bind(service, resource, "Brightness", _brightness, ("dimming",), 1)
    ct = resource.get("color_temperature")
    if isinstance(ct, dict) and isinstance(ct.get("mirek_schema"), dict):
        schema = ct["mirek_schema"]
        # The bulb's own range (Hue's 153–500, or 50–1000 for some), which the
        # daemon takes in place of HAP's 140–500.
        meta = {"min_value": float(schema["mirek_minimum"]), "max_value": float(schema["mirek_maximum"])}
        b.bind(service, resource, "ColorTemperature", _mirek, ("color_temperature",), 1, meta)
    color = resource.get("color")
    if isinstance(color, dict) and isinstance(color.get("xy"), dict):
        # Read back through the bridge's 4-decimal xy (and its gamut), a hue
        # is within a few degrees of the one written.
        b.bind(service, resource, "Hue", lambda r: round(hs_of(r)[0], 1), ("color",), 6)
        b.bind(service, resource, "Saturation", lambda r: round(hs_of(r)[1], 1), ("color",), 3)


def _button(b: _Builder, resource: dict, name: str) -> None:
    index = resource.get("metadata", {}).get("control_id")
    values = resource.get("button", {}).get("event_values") or list(PRESSES)
    presses = sorted({PRESSES[v] for v in values if v in PRESSES})
    if not presses:
        raise ValueError(f"its events {values} have no press")
    label = f"{name} Button {index}" if isinstance(index, int) else f"{name} Button"
    service = b.service("StatelessProgrammableSwitch", resource, label)
    b.bind(service, resource, "ProgrammableSwitchEvent", lambda r: MISSING, meta={"valid_values": presses},
           event=True)
    if isinstance(index, int) and 1 <= index <= 255:
        service["characteristics"].append({"type": "ServiceLabelIndex", "value": index})


def _motion(b, resource, name):
    service = b.service("MotionSensor", resource, f"{name} Motion")
    b.bind(service, resource, "MotionDetected", _reading("motion", "motion", bool))


def _temperature(b, resource, name):
    service = b.service("TemperatureSensor", resource, f"{name} Temperature")
    b.bind(service, resource, "CurrentTemperature",
           _reading("temperature", "temperature", lambda v: round(float(v), 2)),
           meta={"min_value": -50.0, "max_value": 100.0})


def _light_level(b, resource, name):
    service = b.service("LightSensor", resource, f"{name} Light Level")
    b.bind(service, resource, "CurrentAmbientLightLevel", _reading("light", "light_level", lambda v: lux(float(v))))


def _power(b, resource, name):
    service = b.service("BatteryService", resource, f"{name} Battery")
    b.bind(service, resource, "BatteryLevel", lambda r: int(r["power_state"]["battery_level"]))
    b.bind(service, resource, "ChargingState", None, value=2)  # not chargeable: Hue sensors run on cells
    b.bind(service, resource, "StatusLowBattery",
           lambda r: 1 if r["power_state"].get("battery_state") in LOW_BATTERY else 0)


BUILDERS = {"motion": _motion, "temperature": _temperature, "light_level": _light_level, "device_power": _power}
CATEGORIES = {"Lightbulb": "LIGHTBULB", "StatelessProgrammableSwitch": "PROGRAMMABLE_SWITCH"}


def rooms_of(resources: Resources) -> Dict[str, str]:
    """{device id: the name of the Hue room it is in}: a new accessory goes to
    the homed room of that name, when the home has one."""
    out: Dict[str, str] = {}
    for room in sorted(resources.of_type("room"), key=lambda r: r["id"]):
        name = (room.get("metadata") or {}).get("name")
        for child in room.get("children") or ():
            if isinstance(child, dict) and child.get("rtype") == "device" and name:
                out.setdefault(child.get("rid"), valid_name(str(name), "Room"))
    return out


def map_device(device: dict, resources: Resources, room: Optional[str] = None) -> DeviceMap:
    """One `device` and the resources it lists; raises ValueError (why) when
    none of them makes a service."""
    device_id = device["id"]
    product = device.get("product_data") if isinstance(device.get("product_data"), dict) else {}
    given = (device.get("metadata") or {}).get("name") or product.get("product_name") or "Hue device"
    name = object_name(given, "Hue device")
    b = _Builder(device_id, name)
    unknown: List[str] = []
    connectivity = None
    listed = [s for s in device.get("services", []) if isinstance(s, dict)]
    lights = [s for s in listed if s.get("rtype") == "light"]
    for service_ref in listed:
        rtype, rid = service_ref.get("rtype"), service_ref.get("rid")
        resource = resources.get(rid) if isinstance(rid, str) else None
        if rtype in IGNORED:
            continue
        if resource is None:
            continue  # listed but not served (a resource the bridge no longer has)
        mark = (len(b.services), dict(b.bindings))
        try:
            if rtype == "zigbee_connectivity":
                connectivity = rid
            elif rtype == "light":
                _light(b, resource, name, len(lights) > 1)
            elif rtype == "button":
                _button(b, resource, name)
            elif rtype in BUILDERS:
                BUILDERS[rtype](b, resource, name)
            else:
                unknown.append(str(rtype))
            for ref, binding in b.bindings.items():
                if ref not in mark[1]:
                    binding.decode(resource)  # a resource that cannot be read is found now, not at each event
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            # One resource this mapping cannot read: left out whole, the others kept.
            unknown.append(f"{rtype} ({error})")
            b.services, b.bindings = b.services[:mark[0]], mark[1]
    if not b.services:
        raise ValueError("no resource of it maps to a HAP service"
                         + (f"; left out: {', '.join(unknown)}" if unknown else ""))
    b.services[0]["primary"] = True
    accessory = {"key": device_id, "name": name, "category": CATEGORIES.get(b.services[0]["type"], "SENSOR"),
                 "manufacturer": valid_name(product.get("manufacturer_name") or "Signify", "Signify"),
                 "model": valid_name(product.get("model_id") or "Hue", "Hue"),
                 "serial_number": device_id, "services": b.services}
    if room:
        accessory["room"] = room
    if product.get("software_version"):
        accessory["firmware_revision"] = valid_name(str(product["software_version"]), "")
    return DeviceMap(device_id, name, accessory, b.bindings, connectivity, unknown)


def map_bridge(resources: Resources) -> BridgeMap:
    devices: Dict[str, DeviceMap] = {}
    left_out: List[Tuple[str, str, str]] = []
    rooms = rooms_of(resources)
    for device in sorted(resources.of_type("device"), key=lambda d: d["id"]):
        given = str((device.get("metadata") or {}).get("name") or "")
        try:
            devices[device["id"]] = map_device(device, resources, rooms.get(device["id"]))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            left_out.append((given, device.get("id", "?"), str(error)))
    result = BridgeMap(devices, left_out)
    for device in devices.values():
        for binding in device.bindings.values():
            result.by_rid.setdefault(binding.rid, []).append(binding)
            result.by_ref[binding.ref] = binding
        if device.connectivity:
            result.connectivity[device.connectivity] = device.device_id
    return result


def service_groups(resources: Resources, mapped: BridgeMap) -> Dict[str, List[Tuple[str, str]]]:
    """{group name: [(accessory key, service key)]}: the lights of each Hue
    room and zone, as homed service groups (what the bridge's grouped_light of
    that room or zone switches together). A room lists devices, a zone lights
    or devices; a room or zone with none of the mapped lights makes no group,
    and two of one name make one."""
    light_service = {}  # light id -> (device id, service key)
    for device in mapped.devices.values():
        for service in device.accessory["services"]:
            if service["type"] == "Lightbulb":
                light_service[service["key"].split(":", 1)[1]] = (device.device_id, service["key"])
    groups: Dict[str, List[Tuple[str, str]]] = {}
    for kind in ("room", "zone"):
        for group in sorted(resources.of_type(kind), key=lambda r: r["id"]):
            name = object_name(str((group.get("metadata") or {}).get("name") or ""), kind.capitalize())
            members: List[Tuple[str, str]] = []
            for child in group.get("children") or ():
                if not isinstance(child, dict):
                    continue
                if child.get("rtype") == "light" and child.get("rid") in light_service:
                    members.append(light_service[child["rid"]])
                elif child.get("rtype") == "device" and child.get("rid") in mapped.devices:
                    members.extend(light_service[k] for k, v in light_service.items() if v[0] == child["rid"])
            if members:
                into = groups.setdefault(name, [])
                into.extend(m for m in members if m not in into)
    return groups
