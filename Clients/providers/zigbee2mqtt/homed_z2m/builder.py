"""Reading an exposes entry and collecting a device's services, with no I/O:
the access bits, a composite's features, the catalog's ranges replaced by a
device's own, and the `Builder` every expose kind adds its services and
bindings to."""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

from homed.refs import Ref

from .binding import MISSING, Binding
from .values import object_name

__all__ = ["CATALOG", "Builder", "access", "gettable", "settable", "features", "num", "device_range", "suffix",
           "label", "binary_values", "two_way"]

# The catalog's ranges and steps (homectl types --json) of what is mapped here.
CATALOG: Dict[str, Tuple[Optional[float], Optional[float], Optional[float]]] = {
    "Brightness": (0, 100, 1), "Hue": (0, 360, 1), "Saturation": (0, 100, 1),
    "CurrentPosition": (0, 100, 1), "TargetPosition": (0, 100, 1),
    "CurrentHorizontalTiltAngle": (-90, 90, 1), "TargetHorizontalTiltAngle": (-90, 90, 1),
    "CurrentTemperature": (-273.1, 1000, 0.1), "TargetTemperature": (10, 38, 0.1),
    "CurrentRelativeHumidity": (0, 100, 1), "CurrentAmbientLightLevel": (0.0001, 100000, None),
    "CarbonDioxideLevel": (0, 100000, None), "BatteryLevel": (0, 100, 1),
    "ColorTemperature": (140, 500, 1),
    "VOCDensity": (0, 1000, 1), "PM2.5Density": (0, 1000, 1), "PM10Density": (0, 1000, 1),
}


def access(feature: dict) -> int:
    value = feature.get("access", 1)
    return value if isinstance(value, int) else 1


def gettable(feature: dict) -> Tuple[str, ...]:
    return (feature["property"],) if access(feature) & 4 and feature.get("property") else ()


def settable(feature: dict) -> bool:
    return bool(access(feature) & 2)


def features(expose: dict) -> Dict[str, dict]:
    """A composite's features by name (without the endpoint suffix)."""
    return {f.get("name"): f for f in expose.get("features", []) if isinstance(f, dict) and f.get("name")}


def num(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(value)
    return value


def binary_values(feature: dict, on_default, off_default) -> Tuple:
    """A binary feature's (value_on, value_off) as the definition gives them:
    Zigbee2MQTT's own say which reading is "on" (a door contact's `value_on`
    is false: open), so nothing here assumes true is on. A value that is
    neither a bool nor a string, or the same for both, makes the feature one
    this mapping cannot read (ValueError, for the log)."""
    values = []
    for key, default in (("value_on", on_default), ("value_off", off_default)):
        value = feature.get(key, default)
        if not isinstance(value, (bool, str)):
            raise ValueError(f"{key} {value!r} is neither a bool nor a string")
        values.append(value)
    if values[0] == values[1]:
        raise ValueError(f"value_on and value_off are both {values[0]!r}")
    return values[0], values[1]


def two_way(prop: str, on, off, when_on, when_off):
    """A decoder of a binary property: `when_on` for value_on, `when_off` for
    value_off, MISSING for anything else (a reading the device does not define
    is no reading)."""
    def decode(state: dict):
        value = state[prop]
        # True == 1 in Python: a bool value_on must not take a number's reading.
        if type(value) is type(on) and value == on:
            return when_on
        if type(value) is type(off) and value == off:
            return when_off
        return MISSING
    return decode


def device_range(name: str, low=None, high=None) -> Tuple[Tuple, Optional[dict]]:
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


class Builder:
    """Collects a device's services and bindings while its exposes are walked."""

    def __init__(self, ieee: str, name: str):
        self.ieee = ieee
        self.name = name
        self.services: List[dict] = []
        self.bindings: Dict[Ref, Binding] = {}
        self.actions: Dict[str, List[Tuple[Ref, int]]] = {}
        self.sensor_keys: List[str] = []  # services that may take StatusTampered / StatusLowBattery
        self.has_lux = False  # illuminance_lux given: illuminance is then a raw reading
        self.xy_colors: Set[str] = set()  # colour properties set as x and y

    def service(self, stype: str, key: str, name: str, sensor: bool = False) -> dict:
        taken = {s["key"] for s in self.services}
        if key in taken:  # two exposes of one kind without endpoints: homed takes one key once
            key = next(f"{key}_{n}" for n in range(2, len(taken) + 3) if f"{key}_{n}" not in taken)
        service = {"type": stype, "key": key, "name": object_name(name, self.name), "characteristics": []}
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

    def has(self, service: dict, ctype: str) -> bool:
        return Ref(self.ieee, service["key"], ctype) in self.bindings


def suffix(expose: dict) -> str:
    endpoint = expose.get("endpoint")
    return f"_{endpoint}" if isinstance(endpoint, str) and endpoint else ""


def label(base: str, expose: dict) -> str:
    endpoint = expose.get("endpoint")
    return f"{base} {endpoint.upper()}" if isinstance(endpoint, str) and endpoint else base
