"""Numbers and names brought to what the daemon takes, with no I/O: a reading
fitted to a characteristic's step and range, colours between the forms devices
speak (hue/saturation, CIE xy, RGB), temperatures and pressures in HAP's units,
names the daemon accepts.

`fit`, `xy_to_hs` and `valid_name` are homed.device_values', shared with the
Zigbee2MQTT provider (and exported from here as well)."""

from __future__ import annotations

import colorsys
import math
from typing import Optional, Tuple

from homed.device_values import fit, object_name, valid_name, xy_to_hs  # noqa: F401 (this module's API too)
from homed.device_values import hs_to_xy as shared_hs_to_xy

__all__ = ["fit", "xy_to_hs", "hs_to_xy", "rgb_to_hs", "hs_to_rgb", "valid_name", "object_name", "to_celsius",
           "from_celsius", "to_hpa", "finite"]


def finite(value) -> Optional[float]:
    """A finite float from an int or float (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def hs_to_xy(hue: float, saturation: float) -> Tuple[float, float]:
    """(hue degrees, saturation percent) as CIE 1931 xy, to 4 decimals (what
    an MQTT light's JSON carries)."""
    x, y = shared_hs_to_xy(hue, saturation)
    return round(x, 4), round(y, 4)


def rgb_to_hs(r: float, g: float, b: float) -> Tuple[float, float]:
    """0–255 RGB as (hue degrees, saturation percent); brightness is apart."""
    top = max(r, g, b)
    if top <= 0:
        return 0.0, 0.0
    h, s, _ = colorsys.rgb_to_hsv(r / top, g / top, b / top)
    return h * 360.0, s * 100.0


def hs_to_rgb(hue: float, saturation: float) -> Tuple[int, int, int]:
    """(hue degrees, saturation percent) as 0–255 RGB at full value."""
    r, g, b = colorsys.hsv_to_rgb((hue % 360) / 360.0, max(0.0, min(100.0, saturation)) / 100.0, 1.0)
    return round(r * 255), round(g * 255), round(b * 255)


def to_celsius(value: float, unit: str) -> float:
    """A temperature in the entity's unit ("°C", "C", "°F", "F", "K") in °C."""
    unit = unit.replace("°", "").strip().upper()
    if unit == "F":
        return (value - 32.0) * 5.0 / 9.0
    if unit == "K":
        return value - 273.15
    return value


def from_celsius(value: float, unit: str) -> float:
    unit = unit.replace("°", "").strip().upper()
    if unit == "F":
        return value * 9.0 / 5.0 + 32.0
    if unit == "K":
        return value + 273.15
    return value


#: Factors to hPa of the pressure units Home Assistant's sensors report.
PRESSURE_UNITS = {"hpa": 1.0, "mbar": 1.0, "pa": 0.01, "kpa": 10.0, "bar": 1000.0, "cbar": 100.0,
                  "inhg": 33.8639, "mmhg": 1.33322, "psi": 68.9476}


def to_hpa(value: float, unit: str) -> Optional[float]:
    """A pressure in hPa, or None for a unit not known here."""
    factor = PRESSURE_UNITS.get(unit.strip().lower() or "hpa")
    return None if factor is None else value * factor

