"""What providers of real devices do to the values and names devices bring, with
no I/O: a reading fitted to a characteristic's range and step, CIE xy colour as
HAP's hue and saturation, a device's name made one homed takes."""

from __future__ import annotations

import colorsys
import math
import unicodedata
from typing import Optional, Tuple

__all__ = ["NAME_LIMIT", "fit", "xy_to_hs", "hs_to_xy", "valid_name", "object_name"]

NAME_LIMIT = 64  # bytes: the daemon's limit for names


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
        # Python floats: 0.1 steps are not exact; keep as many decimals as the step has.
        decimals = max(0, -int(math.floor(math.log10(step)))) if step < 1 else 0
        value = round(value, decimals + 1) if decimals else float(round(value))
    return value, clamped


# CIE xy and HAP's hue and saturation meet through RGB. Colour bulbs (Philips
# Hue's "wide gamut", which Zigbee lights and Home Assistant's colour helpers
# follow) use the D65 wide-gamut primaries below with sRGB's companding curve:
# leaving the curve out turns a pure red into orange and blues a few dozen
# degrees apart. Written from the formulas; the matrices are each other's inverse.
_RGB_TO_XYZ = ((0.664511, 0.154324, 0.162028),
               (0.283881, 0.668433, 0.047685),
               (0.000088, 0.072310, 0.986039))
_XYZ_TO_RGB = ((1.656492, -0.354851, -0.255038),
               (-0.707196, 1.655397, 0.036152),
               (0.051713, -0.121364, 1.011530))
WHITE_XY = (0.3127, 0.3290)  # D65: what a colour of no saturation is


def _to_linear(c: float) -> float:
    return ((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92


def _from_linear(c: float) -> float:
    return 1.055 * c ** (1.0 / 2.4) - 0.055 if c > 0.0031308 else 12.92 * c


def xy_to_hs(x: float, y: float) -> Tuple[float, float]:
    """CIE 1931 xy (full brightness) as (hue degrees, saturation percent)."""
    if y <= 0:
        return 0.0, 0.0
    xyz = (x / y, 1.0, (1.0 - x - y) / y)
    linear = [max(0.0, sum(m * v for m, v in zip(row, xyz))) for row in _XYZ_TO_RGB]
    # At the colour's own luminance (Y = 1), as bulbs and Home Assistant read
    # it, then brought to full brightness.
    rgb = [_from_linear(c) for c in linear]
    top = max(rgb)
    if top <= 0:
        return 0.0, 0.0
    h, s, _ = colorsys.rgb_to_hsv(*(c / top for c in rgb))
    return h * 360.0, s * 100.0


def hs_to_xy(hue: float, saturation: float) -> Tuple[float, float]:
    """(hue degrees, saturation percent) at full brightness as CIE 1931 xy. Read
    back with xy_to_hs it gives the hue written and the saturation within a
    point or two (the curve is applied at different luminances each way)."""
    rgb = colorsys.hsv_to_rgb((hue % 360.0) / 360.0, max(0.0, min(100.0, saturation)) / 100.0, 1.0)
    linear = [_to_linear(c) for c in rgb]
    big_x, big_y, big_z = (sum(m * c for m, c in zip(row, linear)) for row in _RGB_TO_XYZ)
    total = big_x + big_y + big_z
    if total <= 0:
        return WHITE_XY
    return big_x / total, big_y / total


def valid_name(name: str, fallback: str) -> str:
    """A name the daemon takes: no '/' (topics group by it; homed's paths too)
    and no control characters, not blank, at most 64 bytes of UTF-8. The
    device's own name stays in the provider's logs, and its key is its address."""
    text = "".join(" " if ch == "/" or unicodedata.category(ch).startswith("C") else ch for ch in str(name))
    name = " ".join(text.split()) or fallback
    data = name.encode()
    if len(data) > NAME_LIMIT:
        name = data[:NAME_LIMIT].decode(errors="ignore").rstrip()
    return name


def object_name(name: str, fallback: str) -> str:
    """An accessory's or service's name: `valid_name`, and never digits alone,
    which homed refuses there (a PATH of digits is an id). A device named "12"
    (a room number, or a model number left as its name) is "Device 12"."""
    name = valid_name(name, fallback)
    if name.isdigit():
        name = valid_name(f"Device {name}", fallback)
    return name
