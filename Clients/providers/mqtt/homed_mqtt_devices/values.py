"""Numbers and names brought to what the daemon takes, with no I/O: a reading
fitted to a characteristic's step and range, colours between the forms devices
speak (hue/saturation, CIE xy, RGB), temperatures and pressures in HAP's units,
names the daemon accepts.

`fit`, `xy_to_hs` and `valid_name` started in the Zigbee2MQTT provider
(homed_z2m/values.py); they are here rather than imported from it so that the
two providers can change apart."""

from __future__ import annotations

import colorsys
import math
import unicodedata
from typing import Optional, Tuple

__all__ = ["fit", "xy_to_hs", "hs_to_xy", "rgb_to_hs", "hs_to_rgb", "valid_name", "to_celsius",
           "from_celsius", "to_hpa", "finite"]

NAME_LIMIT = 64  # bytes: the daemon's limit for names


def finite(value) -> Optional[float]:
    """A finite float from an int or float (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def fit(value: float, minimum: Optional[float], maximum: Optional[float],
        step: Optional[float]) -> Tuple[float, bool]:
    """The value clamped to [minimum, maximum] and rounded to the step (counted
    from the minimum, as the daemon checks it); True when it had to be clamped
    (the caller logs that once: the device said something the metadata does
    not admit)."""
    clamped = False
    if minimum is not None and value < minimum:
        value, clamped = minimum, True
    if maximum is not None and value > maximum:
        value, clamped = maximum, True
    if step:
        base = minimum if minimum is not None else 0.0
        value = base + round((value - base) / step) * step
        if maximum is not None and value > maximum + 1e-9:
            value -= step
        decimals = max(0, -int(math.floor(math.log10(step)))) if step < 1 else 0
        value = round(value, decimals + 1) if decimals else float(round(value))
    return value, clamped


def xy_to_hs(x: float, y: float) -> Tuple[float, float]:
    """CIE 1931 xy (full brightness) as (hue degrees, saturation percent)."""
    if y <= 0:
        return 0.0, 0.0
    big_x = x / y
    big_z = (1.0 - x - y) / y
    r = big_x * 3.2406 - 1.5372 - big_z * 0.4986
    g = -big_x * 0.9689 + 1.8758 + big_z * 0.0415
    b = big_x * 0.0557 - 0.2040 + big_z * 1.0570
    r, g, b = (max(0.0, c) for c in (r, g, b))
    top = max(r, g, b)
    if top <= 0:
        return 0.0, 0.0
    h, s, _ = colorsys.rgb_to_hsv(r / top, g / top, b / top)
    return h * 360.0, s * 100.0


def hs_to_xy(hue: float, saturation: float) -> Tuple[float, float]:
    """(hue degrees, saturation percent) as CIE 1931 xy, to 4 decimals."""
    r, g, b = colorsys.hsv_to_rgb((hue % 360) / 360.0, max(0.0, min(100.0, saturation)) / 100.0, 1.0)
    big_x = r * 0.4124 + g * 0.3576 + b * 0.1805
    big_y = r * 0.2126 + g * 0.7152 + b * 0.0722
    big_z = r * 0.0193 + g * 0.1192 + b * 0.9505
    total = big_x + big_y + big_z
    if total <= 0:
        return 0.3127, 0.3290  # white
    return round(big_x / total, 4), round(big_y / total, 4)


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


def valid_name(name: str, fallback: str) -> str:
    """A name the daemon takes: no '/' and no control characters, not blank,
    at most 64 bytes of UTF-8."""
    text = "".join(" " if ch == "/" or unicodedata.category(ch).startswith("C") else ch for ch in str(name))
    name = " ".join(text.split()) or fallback
    data = name.encode()
    if len(data) > NAME_LIMIT:
        name = data[:NAME_LIMIT].decode(errors="ignore").rstrip()
    return name
