"""Zigbee2MQTT's `definition.exposes` as HAP services, with no I/O.

`map_device(device)` turns one entry of `<base>/bridge/devices` into a
`DeviceMap`: the accessory to register (keyed by the IEEE address), and one
`Binding` per characteristic saying which device properties it reads, how to
decode it from a state message, and what to publish on `<device>/set` to write
it. The table in this folder's README is the same mapping in words.

Every number decoded goes through `values.fit`: the daemon refuses a value off
the characteristic's step or range, so readings are rounded and clamped here
(the caller logs a clamped one once per characteristic).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from homed.refs import Ref

from .values import fit, scale, unscale, valid_name, xy_to_hs

__all__ = ["Binding", "DeviceMap", "Unsupported", "map_device", "CATALOG", "PRESSURE_UUID", "KNOWN_TYPES"]

# The catalog's ranges and steps (homectl types --json) of what is mapped here.
CATALOG: Dict[str, Tuple[Optional[float], Optional[float], Optional[float]]] = {
    "Brightness": (0, 100, 1), "Hue": (0, 360, 1), "Saturation": (0, 100, 1),
    "CurrentPosition": (0, 100, 1), "TargetPosition": (0, 100, 1),
    "CurrentHorizontalTiltAngle": (-90, 90, 1), "TargetHorizontalTiltAngle": (-90, 90, 1),
    "CurrentTemperature": (-273.1, 1000, 0.1), "TargetTemperature": (10, 38, 0.1),
    "CurrentRelativeHumidity": (0, 100, 1), "CurrentAmbientLightLevel": (0.0001, 100000, None),
    "CarbonDioxideLevel": (0, 100000, None), "BatteryLevel": (0, 100, 1),
    "ColorTemperature": (140, 500, 1),
}

#: A custom characteristic for air pressure (HAP has none): a UUID of this
#: provider's own, hPa as Zigbee2MQTT reports it.
PRESSURE_UUID = "5B1E0F6A-3C2D-4E8F-9A7B-6C5D4E3F2A10"
PRESSURE_META = {"format": "float", "unit": "none", "min_value": 0.0, "max_value": 2000.0, "step_value": 0.1}

#: Exposes types this mapping knows (a feature of another type is logged as unknown).
KNOWN_TYPES = {"light", "switch", "cover", "lock", "climate", "fan", "binary", "numeric", "enum", "text",
               "composite", "list"}

#: Above this CO2 level (ppm) CarbonDioxideDetected says abnormal.
CO2_ABNORMAL_PPM = 1000
#: Without battery_low, a battery below this (percent) is low.
LOW_BATTERY_PERCENT = 20

MISSING = object()


@dataclass
class Binding:
    """One HAP characteristic bound to a device's properties."""

    ref: Ref
    #: The top-level state properties it is decoded from (a state message
    #: without any of them leaves it alone).
    props: Tuple[str, ...]
    decode: Callable[[dict], Any]  # state -> HAP value, or MISSING
    encode: Optional[Callable[[Any], dict]] = None  # HAP value -> payload for /set
    #: (min, max, step) every decoded number is fitted to.
    bounds: Tuple[Optional[float], Optional[float], Optional[float]] = (None, None, None)
    #: How far an echoed value may be from the written one and still confirm it
    #: (a colour comes back as xy, a setpoint on the device's own step).
    tolerance: float = 0.0
    #: The properties a /get may ask for (access bit 4).
    gettable: Tuple[str, ...] = ()
    #: Event-only (a button): reported as events, never read.
    event: bool = False

    def value(self, state: dict):
        """(value, clamped) from a state message, or (MISSING, False)."""
        if self.props and not any(p in state for p in self.props):
            return MISSING, False
        if not self.props and state:
            return MISSING, False  # a constant: given once, from decode({})
        try:
            value = self.decode(state)
        except (TypeError, ValueError, KeyError, ZeroDivisionError):
            return MISSING, False
        if value is MISSING or value is None:
            return MISSING, False
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value, False
        low, high, step = self.bounds
        if low is None and high is None and step is None:
            return value, False
        fitted, clamped = fit(float(value), low, high, step)
        if step is not None and step >= 1:
            fitted = int(round(fitted))
        return fitted, clamped


@dataclass
class DeviceMap:
    ieee: str
    friendly_name: str
    accessory: dict  # without values
    bindings: Dict[Ref, Binding] = field(default_factory=dict)
    #: action value -> [(ref, ProgrammableSwitchEvent value)]
    actions: Dict[str, List[Tuple[Ref, int]]] = field(default_factory=dict)
    #: Features that map to nothing ("linkquality", "fan …"), for the log.
    ignored: List[str] = field(default_factory=list)
    #: Expose types this mapping does not know at all.
    unknown: List[str] = field(default_factory=list)

    @functools.cached_property
    def signature(self) -> str:
        """The registration as text, to tell whether homed has it as it is: made
        once per mapping (a map is never changed once made), not at every state
        message of every device."""
        return json.dumps(self.accessory, sort_keys=True)

    @property
    def gettable(self) -> List[str]:
        out: List[str] = []
        for binding in self.bindings.values():
            out.extend(p for p in binding.gettable if p not in out)
        return out

    def decode(self, state: dict) -> Tuple[Dict[Ref, Any], List[Ref]]:
        """({ref: value} for every characteristic the state message speaks of,
        [refs whose value was clamped]). `decode({})` gives the constants (a
        cover's PositionState without "moving", a battery's ChargingState)."""
        values, clamped = {}, []
        for ref, binding in self.bindings.items():
            if binding.event:
                continue
            value, was_clamped = binding.value(state)
            if value is not MISSING:
                values[ref] = value
                if was_clamped:
                    clamped.append(ref)
        return values, clamped

    def events(self, state: dict) -> List[Tuple[Ref, int]]:
        action = state.get("action")
        if not isinstance(action, str) or not action:
            return []
        return list(self.actions.get(action, []))

    def payload(self, values: Dict[Ref, Any], current: Optional[Dict[Ref, Any]] = None) -> dict:
        """The /set payload for these writes (merged: a colour's hue and
        saturation go in one "color" object; a hue written alone takes the
        current saturation along, and the other way round, since a colour is
        set whole). Raises KeyError for a ref that takes no writes."""
        values = dict(values)
        current = current or {}
        for ref in list(values):
            if ref.characteristic in ("Hue", "Saturation"):
                other = Ref(ref.accessory_key, ref.service, "Saturation" if ref.characteristic == "Hue" else "Hue")
                if other not in values and other in current and other in self.bindings:
                    values[other] = current[other]
        out: dict = {}
        for ref, value in values.items():
            binding = self.bindings[ref]
            if binding.encode is None:
                raise KeyError(ref)
            _merge(out, binding.encode(value))
        return out


class Unsupported(Exception):
    """A device that is not registered, and why (for the log)."""


def _merge(into: dict, part: dict) -> None:
    for key, value in part.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _access(feature: dict) -> int:
    access = feature.get("access", 1)
    return access if isinstance(access, int) else 1


def _gettable(feature: dict) -> Tuple[str, ...]:
    return (feature["property"],) if _access(feature) & 4 and feature.get("property") else ()


def _settable(feature: dict) -> bool:
    return bool(_access(feature) & 2)


def _features(expose: dict) -> Dict[str, dict]:
    """A composite's features by name (without the endpoint suffix)."""
    return {f.get("name"): f for f in expose.get("features", []) if isinstance(f, dict) and f.get("name")}


def _num(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(value)
    return value


def _device_range(name: str, low=None, high=None) -> Tuple[Tuple, Optional[dict]]:
    """The catalog's bounds replaced by the device's own range where it gives one
    (bounds, metadata or None). The daemon takes a range narrower or wider than
    the catalog's (a valve's 5 °C setpoint, a bulb's 153..555 mireds), so the
    device's is declared as it is; a range that is not one (min above max) is
    ignored and the catalog's kept."""
    c_low, c_high, c_step = CATALOG[name]
    numbers = [v if isinstance(v, (int, float)) and not isinstance(v, bool) else None for v in (low, high)]
    low, high = numbers
    if low is not None and high is not None and low > high:
        return (c_low, c_high, c_step), None
    meta = {}
    if low is not None and low != c_low:
        c_low = meta["min_value"] = float(low)
    if high is not None and high != c_high:
        c_high = meta["max_value"] = float(high)
    return (c_low, c_high, c_step), (meta or None)


def _characteristic(ctype: str, meta: Optional[dict] = None, writable: bool = True,
                    catalog_writable: bool = True) -> dict:
    entry: dict = {"type": ctype}
    if meta:
        entry["metadata"] = meta
    if catalog_writable and not writable:
        # The catalog's type is writable; this device's property is not.
        entry["properties"] = {"readable": True, "supports_event_notification": True}
    return entry


class _Builder:
    """Collects a device's services and bindings while its exposes are walked."""

    def __init__(self, ieee: str, name: str):
        self.ieee = ieee
        self.name = name
        self.services: List[dict] = []
        self.bindings: Dict[Ref, Binding] = {}
        self.actions: Dict[str, List[Tuple[Ref, int]]] = {}
        self.sensor_keys: List[str] = []
        self.has_lux = False  # illuminance_lux given: illuminance is then a raw reading  # services that may take StatusTampered / StatusLowBattery

    def service(self, stype: str, key: str, name: str, sensor: bool = False) -> dict:
        service = {"type": stype, "key": key, "name": valid_name(name, self.name), "characteristics": []}
        self.services.append(service)
        if sensor:
            self.sensor_keys.append(key)
        return service

    def bind(self, service: dict, ctype: str, binding_kwargs: dict, meta: Optional[dict] = None,
             writable: bool = True, catalog_writable: bool = True) -> Binding:
        ref = Ref(self.ieee, service["key"], ctype)
        binding = Binding(ref=ref, **binding_kwargs)
        if not writable:
            binding.encode = None
        service["characteristics"].append(_characteristic(ctype, meta, writable, catalog_writable))
        self.bindings[ref] = binding
        return binding

    def by_key(self, key: str) -> Optional[dict]:
        return next((s for s in self.services if s["key"] == key), None)


def _suffix(expose: dict) -> str:
    endpoint = expose.get("endpoint")
    return f"_{endpoint}" if isinstance(endpoint, str) and endpoint else ""


def _label(base: str, expose: dict) -> str:
    endpoint = expose.get("endpoint")
    return f"{base} {endpoint.upper()}" if isinstance(endpoint, str) and endpoint else base


def _on_binding(state_f: dict) -> dict:
    prop, on, off = state_f["property"], state_f.get("value_on", "ON"), state_f.get("value_off", "OFF")
    return dict(props=(prop,), decode=lambda s: s[prop] == on if prop in s else MISSING,
                encode=lambda v: {prop: on if v else off}, gettable=_gettable(state_f))


def _light(b: _Builder, expose: dict, looks_like_plug: bool) -> None:
    feats = _features(expose)
    state_f = feats.get("state")
    if not state_f or not state_f.get("property"):
        raise ValueError("a light without a state feature")
    key = "light" + _suffix(expose)
    service = b.service("Lightbulb", key, _label(b.name, expose))
    b.bind(service, "On", _on_binding(state_f), writable=_settable(state_f))
    bright = feats.get("brightness")
    if bright and bright.get("property"):
        bprop = bright["property"]
        low, high = bright.get("value_min", 0), bright.get("value_max", 254)
        b.bind(service, "Brightness", dict(
            props=(bprop,), decode=lambda s: scale(_num(s[bprop]), low, high),
            encode=lambda v: {bprop: unscale(v, low, high)}, bounds=CATALOG["Brightness"], tolerance=1,
            gettable=_gettable(bright)), writable=_settable(bright))
    color = feats.get("color_hs") or feats.get("color_xy")
    if color and color.get("property"):
        cprop = color["property"]

        def hs(state, prop=cprop):
            value = state.get(prop)
            if not isinstance(value, dict):
                return None
            if "hue" in value and "saturation" in value:
                return float(_num(value["hue"])), float(_num(value["saturation"]))
            if "x" in value and "y" in value:
                return xy_to_hs(_num(value["x"]), _num(value["y"]))
            return None

        writable = _settable(color)
        b.bind(service, "Hue", dict(
            props=(cprop,), decode=lambda s: (hs(s) or (MISSING,))[0], encode=lambda v: {cprop: {"hue": v}},
            bounds=CATALOG["Hue"], tolerance=2, gettable=_gettable(color)), writable=writable)
        b.bind(service, "Saturation", dict(
            props=(cprop,), decode=lambda s: (hs(s) or (None, MISSING))[1],
            encode=lambda v: {cprop: {"saturation": v}}, bounds=CATALOG["Saturation"], tolerance=2,
            gettable=_gettable(color)), writable=writable)
    temperature = feats.get("color_temp")
    if temperature and temperature.get("property"):
        # Mireds on both sides, in the bulb's own range (often wider than HAP's
        # 140..500: the daemon takes it as the bulb declares it).
        tprop = temperature["property"]
        bounds, meta = _device_range("ColorTemperature", temperature.get("value_min"), temperature.get("value_max"))
        b.bind(service, "ColorTemperature", dict(
            props=(tprop,), decode=lambda s: _num(s[tprop]), encode=lambda v: {tprop: int(round(v))},
            bounds=bounds, tolerance=1, gettable=_gettable(temperature)), meta=meta,
            writable=_settable(temperature))


def _switch(b: _Builder, expose: dict, looks_like_plug: bool, power_prop: Optional[str]) -> None:
    feats = _features(expose)
    state_f = feats.get("state")
    if not state_f or not state_f.get("property"):
        raise ValueError("a switch without a state feature")
    stype = "Outlet" if looks_like_plug else "Switch"
    key = stype.lower() + _suffix(expose)
    service = b.service(stype, key, _label(b.name, expose))
    on = _on_binding(state_f)
    b.bind(service, "On", on, writable=_settable(state_f))
    if stype == "Outlet":
        if power_prop and not _suffix(expose):
            in_use = dict(props=(power_prop,), decode=lambda s: _num(s[power_prop]) > 0)
        else:  # no power reading: in use while on
            in_use = dict(props=on["props"], decode=on["decode"])
        b.bind(service, "OutletInUse", in_use)


def _cover(b: _Builder, expose: dict, top: Dict[str, dict]) -> None:
    feats = _features(expose)
    key = "cover" + _suffix(expose)
    position, state_f, tilt = feats.get("position"), feats.get("state"), feats.get("tilt")
    if not position and not state_f:
        raise ValueError("a cover with neither position nor state")
    service = b.service("WindowCovering", key, _label(b.name, expose))
    if position and position.get("property"):
        prop = position["property"]
        current = dict(props=(prop,), decode=lambda s: _num(s[prop]), bounds=CATALOG["CurrentPosition"],
                       gettable=_gettable(position))
        target = dict(current, encode=lambda v: {prop: int(v)}, bounds=CATALOG["TargetPosition"])
        writable = _settable(position)
    else:  # open/close only
        prop = state_f["property"]
        opened = state_f.get("value_on", "OPEN") if state_f.get("type") == "binary" else "OPEN"
        current = dict(props=(prop,), decode=lambda s: 100 if str(s[prop]).upper() == opened else 0,
                       gettable=_gettable(state_f))
        target = dict(current, encode=lambda v: {prop: "OPEN" if v >= 50 else "CLOSE"}, tolerance=49)
        writable = _settable(state_f)
    b.bind(service, "CurrentPosition", current)
    b.bind(service, "TargetPosition", target, writable=writable)
    moving = feats.get("moving") or top.get("moving")  # some devices expose it beside the cover
    if moving and moving.get("property"):
        mprop = moving["property"]
        directions = {"DOWN": 0, "UP": 1, "STOP": 2}
        b.bind(service, "PositionState", dict(props=(mprop,), decode=lambda s: directions.get(str(s[mprop]).upper(), 2)))
    else:  # Zigbee2MQTT says where a cover is, not whether it moves
        b.bind(service, "PositionState", dict(props=(), decode=lambda s: 2))
    if tilt and tilt.get("property"):
        tprop = tilt["property"]
        current = dict(props=(tprop,), decode=lambda s: _num(s[tprop]) * 1.8 - 90,
                       bounds=CATALOG["CurrentHorizontalTiltAngle"], tolerance=1, gettable=_gettable(tilt))
        b.bind(service, "CurrentHorizontalTiltAngle", current)
        b.bind(service, "TargetHorizontalTiltAngle",
               dict(current, encode=lambda v: {tprop: int(round((v + 90) / 1.8))},
                    bounds=CATALOG["TargetHorizontalTiltAngle"]), writable=_settable(tilt))


LOCK_CURRENT = {"locked": 1, "unlocked": 0, "not_fully_locked": 2}


def _lock(b: _Builder, expose: dict) -> None:
    feats = _features(expose)
    state_f = feats.get("state")
    if not state_f or not state_f.get("property"):
        raise ValueError("a lock without a state feature")
    prop, on, off = state_f["property"], state_f.get("value_on", "LOCK"), state_f.get("value_off", "UNLOCK")
    service = b.service("LockMechanism", "lock" + _suffix(expose), _label(b.name, expose))
    lock_state = feats.get("lock_state")
    if lock_state and lock_state.get("property"):
        lprop = lock_state["property"]
        b.bind(service, "LockCurrentState", dict(props=(lprop,), decode=lambda s: LOCK_CURRENT.get(s[lprop], 3),
                                                 gettable=_gettable(lock_state)))
    else:
        b.bind(service, "LockCurrentState", dict(props=(prop,), decode=lambda s: 1 if s[prop] == on else 0))
    b.bind(service, "LockTargetState", dict(props=(prop,), decode=lambda s: 1 if s[prop] == on else 0,
                                            encode=lambda v: {prop: on if v else off},
                                            gettable=_gettable(state_f)), writable=_settable(state_f))


MODES = {"off": 0, "heat": 1, "cool": 2, "auto": 3}
RUNNING = {"idle": 0, "heat": 1, "cool": 2}


def _climate(b: _Builder, expose: dict) -> None:
    feats = _features(expose)
    local = feats.get("local_temperature")
    setpoint = feats.get("occupied_heating_setpoint") or feats.get("current_heating_setpoint")
    if not local or not setpoint:
        raise ValueError("a climate without local_temperature and a heating setpoint")
    service = b.service("Thermostat", "thermostat" + _suffix(expose), _label(b.name, expose))
    lprop = local["property"]
    b.bind(service, "CurrentTemperature", dict(props=(lprop,), decode=lambda s: _num(s[lprop]),
                                               bounds=CATALOG["CurrentTemperature"], gettable=_gettable(local)))
    sprop = setpoint["property"]
    bounds, meta = _device_range("TargetTemperature", setpoint.get("value_min"), setpoint.get("value_max"))
    dstep = setpoint.get("value_step") if isinstance(setpoint.get("value_step"), (int, float)) else 0.5

    def to_setpoint(v):
        return {sprop: round(round(v / dstep) * dstep, 2)}

    b.bind(service, "TargetTemperature", dict(props=(sprop,), decode=lambda s: _num(s[sprop]), encode=to_setpoint,
                                              bounds=bounds, tolerance=dstep / 2 + 0.05, gettable=_gettable(setpoint)),
           meta=meta, writable=_settable(setpoint))
    mode = feats.get("system_mode")
    modes = [m for m in (mode or {}).get("values", []) if m in MODES]
    if mode and modes and mode.get("property"):
        mprop = mode["property"]
        names = {v: k for k, v in MODES.items() if k in modes}
        b.bind(service, "TargetHeatingCoolingState",
               dict(props=(mprop,), decode=lambda s: MODES.get(s[mprop], MISSING),
                    encode=lambda v: {mprop: names[int(v)]}, gettable=_gettable(mode)),
               meta={"valid_values": sorted(names)}, writable=_settable(mode))
    else:  # a heating-only thermostat with no mode to choose
        b.bind(service, "TargetHeatingCoolingState", dict(props=(), decode=lambda s: 1),
               meta={"valid_values": [1]}, writable=False)
    running = feats.get("running_state")
    if running and running.get("property"):
        rprop = running["property"]
        b.bind(service, "CurrentHeatingCoolingState",
               dict(props=(rprop,), decode=lambda s: RUNNING.get(s[rprop], 0), gettable=_gettable(running)))
    else:
        b.bind(service, "CurrentHeatingCoolingState", dict(props=(), decode=lambda s: 0))
    # Zigbee2MQTT reports °C; the unit shown is not the device's to choose here.
    b.bind(service, "TemperatureDisplayUnits", dict(props=(), decode=lambda s: 0), writable=False)


# Binary sensors: name -> (service type, characteristic, HAP value when on, when off)
BINARY_SENSORS = {
    "contact": ("ContactSensor", "ContactSensorState", 0, 1),  # contact true: closed, ContactDetected
    "occupancy": ("MotionSensor", "MotionDetected", True, False),
    "vibration": ("MotionSensor", "MotionDetected", True, False),
    "water_leak": ("LeakSensor", "LeakDetected", 1, 0),
    "smoke": ("SmokeSensor", "SmokeDetected", 1, 0),
    "carbon_monoxide": ("CarbonMonoxideSensor", "CarbonMonoxideDetected", 1, 0),
}
# Numeric sensors: name -> (service type, characteristic)
NUMERIC_SENSORS = {
    "temperature": ("TemperatureSensor", "CurrentTemperature"),
    "humidity": ("HumiditySensor", "CurrentRelativeHumidity"),
    "illuminance": ("LightSensor", "CurrentAmbientLightLevel"),
    "illuminance_lux": ("LightSensor", "CurrentAmbientLightLevel"),
}
# Shown by name only in the debug log: diagnostics with no HAP counterpart.
QUIET = {"linkquality", "voltage", "power", "energy", "current", "update", "update_available", "power_on_behavior",
         "effect", "identify", "color_temp_startup", "level_config", "color_options", "child_lock", "local_time"}


def _binary_value(feature: dict, when_on, when_off):
    prop, on = feature["property"], feature.get("value_on", True)
    return dict(props=(prop,), decode=lambda s: when_on if s[prop] == on else when_off, gettable=_gettable(feature))


def _generic(b: _Builder, feature: dict, ignored: List[str], unknown: List[str], later: List[dict]) -> None:
    ftype, name, prop = feature.get("type"), feature.get("name"), feature.get("property")
    if ftype not in KNOWN_TYPES:
        unknown.append(f"{name or prop} (type {ftype!r})")
        return
    if not prop:
        ignored.append(str(name))
        return
    label = name.replace("_", " ").capitalize() if isinstance(name, str) else str(prop)
    key = prop
    if ftype == "binary" and name in BINARY_SENSORS:
        stype, ctype, when_on, when_off = BINARY_SENSORS[name]
        service = b.service(stype, key, f"{b.name} {label}", sensor=True)
        b.bind(service, ctype, _binary_value(feature, when_on, when_off))
    elif name == "moving" and any(s["type"] == "WindowCovering" for s in b.services):
        return  # the cover's PositionState
    elif ftype == "numeric" and name == "illuminance" and b.has_lux:
        ignored.append("illuminance (illuminance_lux is the one in lux)")
    elif ftype == "numeric" and name in NUMERIC_SENSORS:
        stype, ctype = NUMERIC_SENSORS[name]
        service = b.service(stype, key, f"{b.name} {label}", sensor=True)
        b.bind(service, ctype, dict(props=(prop,), decode=lambda s: _num(s[prop]), bounds=CATALOG[ctype],
                                    gettable=_gettable(feature)))
    elif ftype == "numeric" and name == "co2":
        service = b.service("CarbonDioxideSensor", key, f"{b.name} CO2", sensor=True)
        b.bind(service, "CarbonDioxideDetected",
               dict(props=(prop,), decode=lambda s: 1 if _num(s[prop]) > CO2_ABNORMAL_PPM else 0))
        b.bind(service, "CarbonDioxideLevel", dict(props=(prop,), decode=lambda s: _num(s[prop]),
                                                   bounds=CATALOG["CarbonDioxideLevel"], gettable=_gettable(feature)))
    elif name in ("pressure", "tamper", "battery", "battery_low") and ftype in ("numeric", "binary"):
        later.append(feature)  # they join services made by the others
    elif ftype == "enum" and name == "action":
        _action(b, feature, ignored)
    else:
        ignored.append(str(name))


PRESS_PREFIX = (("single_", 0), ("double_", 1), ("hold_", 2), ("long_", 2))
PRESS = (("_single", 0), ("_click", 0), ("_press", 0), ("_double", 1), ("_hold", 2), ("_long", 2))
IGNORED_ACTIONS = ("_release", "_stop", "_hold_release", "_long_release")


def parse_action(value: str) -> Optional[Tuple[str, int]]:
    """An action value as (button, ProgrammableSwitchEvent), or None for the
    ones a stateless switch has no event for (a hold's release)."""
    if value.endswith(IGNORED_ACTIONS) or value in ("release", "stop"):
        return None
    for bare, press in (("single", 0), ("double", 1), ("hold", 2), ("long", 2)):
        if value == bare:
            return "", press
    if value.startswith(("triple", "quadruple", "many")) or value.endswith(("_triple", "_quadruple")):
        return None  # no HAP event for them
    for prefix, press in PRESS_PREFIX:
        if value.startswith(prefix) and len(value) > len(prefix):
            return value[len(prefix):], press
    for suffix, press in PRESS:
        if value.endswith(suffix) and len(value) > len(suffix):
            return value[:-len(suffix)], press
    return value, 0  # "on", "off", "toggle": a button pressed once


def _action(b: _Builder, feature: dict, ignored: List[str]) -> None:
    buttons: Dict[str, Dict[str, int]] = {}
    for value in feature.get("values", []):
        if not isinstance(value, str):
            continue
        parsed = parse_action(value)
        if parsed is None:
            ignored.append(f"action {value}")
            continue
        button, press = parsed
        buttons.setdefault(button, {})[value] = press
    for index, (button, values) in enumerate(buttons.items(), start=1):
        key = "button_" + (button or "main")
        service = b.service("StatelessProgrammableSwitch", key,
                            f"{b.name} {button.replace('_', ' ')}" if button else b.name)
        ref = Ref(b.ieee, key, "ProgrammableSwitchEvent")
        service["characteristics"].append({"type": "ProgrammableSwitchEvent",
                                           "metadata": {"valid_values": sorted(set(values.values()))}})
        if index <= 255:
            service["characteristics"].append({"type": "ServiceLabelIndex", "value": index})
        b.bindings[ref] = Binding(ref=ref, props=("action",), decode=lambda s: MISSING, event=True)
        for value, press in values.items():
            b.actions.setdefault(value, []).append((ref, press))


def _attach(b: _Builder, feature: dict, ignored: List[str]) -> None:
    """pressure, tamper, battery, battery_low: onto the services the others made."""
    name, prop = feature["name"], feature["property"]
    if name == "battery" or name == "battery_low":
        service = b.by_key("battery")
        if service is None:
            if name == "battery_low":
                return _status_low(b, feature)
            service = b.service("BatteryService", "battery", f"{b.name} Battery")
        if name == "battery":
            b.bind(service, "BatteryLevel", dict(props=(prop,), decode=lambda s: _num(s[prop]),
                                                 bounds=CATALOG["BatteryLevel"], gettable=_gettable(feature)))
            b.bind(service, "ChargingState", dict(props=(), decode=lambda s: 2))  # NotChargeable
        return None
    targets = [b.by_key(k) for k in b.sensor_keys]
    if not targets:
        ignored.append(f"{name} (no sensor service to carry it)")
        return None
    if name == "tamper":
        for service in targets:
            b.bind(service, "StatusTampered", _binary_value(feature, 1, 0))
    elif name == "pressure":
        ref = Ref(b.ieee, targets[0]["key"], "AirPressure")
        targets[0]["characteristics"].append({
            "type": PRESSURE_UUID, "type_name": "AirPressure",
            "properties": {"readable": True, "supports_event_notification": True}, "metadata": dict(PRESSURE_META)})
        b.bindings[ref] = Binding(ref=ref, props=(prop,), decode=lambda s: _num(s[prop]),
                                  bounds=(PRESSURE_META["min_value"], PRESSURE_META["max_value"], 0.1),
                                  gettable=_gettable(feature))
    return None


def _status_low(b: _Builder, feature: dict) -> None:
    for key in b.sensor_keys:
        b.bind(b.by_key(key), "StatusLowBattery", _binary_value(feature, 1, 0))


def _finish_battery(b: _Builder, battery_low: Optional[dict]) -> None:
    service = b.by_key("battery")
    if service is None:
        return
    if battery_low and battery_low.get("property"):
        b.bind(service, "StatusLowBattery", _binary_value(battery_low, 1, 0))
    else:
        level = b.bindings[Ref(b.ieee, "battery", "BatteryLevel")]
        prop = level.props[0]
        b.bind(service, "StatusLowBattery",
               dict(props=(prop,), decode=lambda s: 1 if _num(s[prop]) < LOW_BATTERY_PERCENT else 0))


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
    name = valid_name(friendly, ieee)
    b = _Builder(ieee, name)
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
                _light(b, expose, looks_like_plug)
            elif etype == "switch":
                _switch(b, expose, looks_like_plug, has_power)
            elif etype == "cover":
                _cover(b, expose, top)
            elif etype == "lock":
                _lock(b, expose)
            elif etype == "climate":
                _climate(b, expose)
            elif etype == "fan":
                ignored.append("fan")
            else:
                _generic(b, expose, ignored, unknown, later)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            # One expose this mapping cannot make sense of: left out whole (its
            # service was not added yet, or is taken out again below).
            unknown.append(f"{etype} ({error})")
            b.services = b.services[:mark[0]]
            b.bindings = {r: v for r, v in b.bindings.items() if r in mark[1]}
            b.sensor_keys = b.sensor_keys[:mark[2]]
            b.actions = mark[3]
    battery_low = next((f for f in later if f["name"] == "battery_low"), None)
    for feature in sorted(later, key=lambda f: f["name"] == "battery_low"):  # battery before battery_low
        if feature["name"] == "battery_low" and any(f["name"] == "battery" for f in later):
            continue  # goes onto the BatteryService
        _attach(b, feature, ignored)
    _finish_battery(b, battery_low)
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
    return DeviceMap(ieee, friendly, accessory, b.bindings, b.actions, ignored, unknown)


def _category(service_type: str) -> str:
    return {"Lightbulb": "LIGHTBULB", "Switch": "SWITCH", "Outlet": "OUTLET", "WindowCovering": "WINDOW_COVERING",
            "LockMechanism": "DOOR_LOCK", "Thermostat": "THERMOSTAT",
            "StatelessProgrammableSwitch": "PROGRAMMABLE_SWITCH"}.get(service_type, "SENSOR")
