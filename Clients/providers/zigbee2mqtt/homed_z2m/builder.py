"""Reading an exposes entry and collecting a device's services, with no I/O:
the access bits, a composite's features, the catalog's ranges replaced by a
device's own, and the `Builder` every expose kind adds its services and
bindings to."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from homed.refs import Ref

from .binding import Binding
from .values import valid_name

__all__ = ["CATALOG", "Builder", "access", "gettable", "settable", "features", "num", "device_range", "suffix",
           "label"]

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


def suffix(expose: dict) -> str:
    endpoint = expose.get("endpoint")
    return f"_{endpoint}" if isinstance(endpoint, str) and endpoint else ""


def label(base: str, expose: dict) -> str:
    endpoint = expose.get("endpoint")
    return f"{base} {endpoint.upper()}" if isinstance(endpoint, str) and endpoint else base
