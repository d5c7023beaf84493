"""Value conversions between Zigbee2MQTT and HAP, with no I/O: brightness scaled
between the device's range and 0–100, hue and saturation as CIE xy; a reading
fitted to a characteristic's step and range, CIE xy to hue and saturation and
names made valid are homed.device_values', shared with the other device
providers."""

from __future__ import annotations

import colorsys
from typing import Tuple

from homed.device_values import NAME_LIMIT, fit, object_name, valid_name, xy_to_hs  # noqa: F401 (this module's API too)

__all__ = ["fit", "scale", "unscale", "xy_to_hs", "hs_to_xy", "valid_name", "object_name"]


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


def hs_to_xy(hue: float, saturation: float) -> Tuple[float, float]:
    """Hue (degrees) and saturation (percent) at full brightness as CIE 1931
    xy: the inverse of xy_to_hs (linear sRGB, D65), so a colour written as xy
    reads back as the hue and saturation written."""
    r, g, b = colorsys.hsv_to_rgb((hue % 360.0) / 360.0, max(0.0, min(100.0, saturation)) / 100.0, 1.0)
    big_x = r * 0.4124 + g * 0.3576 + b * 0.1805
    big_y = r * 0.2126 + g * 0.7152 + b * 0.0722
    big_z = r * 0.0193 + g * 0.1192 + b * 0.9505
    total = big_x + big_y + big_z
    return big_x / total, big_y / total
