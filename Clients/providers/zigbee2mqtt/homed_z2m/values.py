"""Value conversions between Zigbee2MQTT and HAP, with no I/O: a reading
brought to a characteristic's step and range, brightness scaled between the
device's range and 0–100, tilt between 0–100 and -90–90 degrees, CIE xy to hue
and saturation."""

from __future__ import annotations

import colorsys
import math
import unicodedata
from typing import Optional, Tuple

__all__ = ["fit", "scale", "unscale", "xy_to_hs", "valid_name"]

NAME_LIMIT = 64  # bytes: the daemon's limit for names


def fit(value: float, minimum: Optional[float], maximum: Optional[float],
        step: Optional[float]) -> Tuple[float, bool]:
    """The value rounded to the step (counted from the minimum, as the daemon
    checks it) and clamped to [minimum, maximum]; True when it had to be
    clamped (the caller logs that: the device said something the metadata does
    not admit). The daemon refuses a value off its step or range, so every
    reported number goes through here."""
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


def scale(raw: float, low: float, high: float) -> float:
    """A device value in [low, high] as a percentage."""
    if high <= low:
        return 0.0
    return (raw - low) * 100.0 / (high - low)


def unscale(percent: float, low: float, high: float) -> int:
    """A percentage as a device value in [low, high] (at least one step above
    low when the percentage is above 0, so a dim light stays on)."""
    raw = round(low + percent * (high - low) / 100.0)
    if percent > 0 and raw <= low < high:
        raw = low + 1
    return int(max(low, min(high, raw)))


def xy_to_hs(x: float, y: float) -> Tuple[float, float]:
    """CIE 1931 xy (full brightness) as (hue degrees, saturation percent)."""
    if y <= 0:
        return 0.0, 0.0
    big_y = 1.0
    big_x = big_y / y * x
    big_z = big_y / y * (1.0 - x - y)
    r = big_x * 3.2406 - big_y * 1.5372 - big_z * 0.4986
    g = -big_x * 0.9689 + big_y * 1.8758 + big_z * 0.0415
    b = big_x * 0.0557 - big_y * 0.2040 + big_z * 1.0570
    r, g, b = (max(0.0, c) for c in (r, g, b))
    top = max(r, g, b)
    if top <= 0:
        return 0.0, 0.0
    h, s, _ = colorsys.rgb_to_hsv(r / top, g / top, b / top)
    return h * 360.0, s * 100.0


def valid_name(name: str, fallback: str) -> str:
    """A name the daemon takes: no '/' and no control characters, not blank,
    at most 64 bytes of UTF-8.
    Zigbee2MQTT's friendly names may hold '/' (it groups topics); the original
    stays in the logs and the accessory's key is the IEEE address anyway."""
    text = "".join(" " if ch == "/" or unicodedata.category(ch).startswith("C") else ch for ch in str(name))
    name = " ".join(text.split()) or fallback
    data = name.encode()
    if len(data) > NAME_LIMIT:
        name = data[:NAME_LIMIT].decode(errors="ignore").rstrip()
    return name
