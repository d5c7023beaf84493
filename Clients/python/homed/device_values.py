"""What providers of real devices do to the values and names devices bring, with
no I/O: a reading fitted to a characteristic's range and step, CIE xy colour as
HAP's hue and saturation, a device's name made one homed takes."""

from __future__ import annotations

import colorsys
import math
import unicodedata
from typing import Optional, Tuple

__all__ = ["NAME_LIMIT", "fit", "xy_to_hs", "valid_name", "object_name"]

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
