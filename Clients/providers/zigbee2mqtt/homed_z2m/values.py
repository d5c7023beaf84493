"""Value conversions between Zigbee2MQTT and HAP, with no I/O: brightness scaled
between the device's range and 0–100; a reading fitted to a characteristic's
step and range, CIE xy and hue/saturation each way and names made valid are
homed.device_values', shared with the other device providers."""

from __future__ import annotations

from homed.device_values import NAME_LIMIT, fit, hs_to_xy, object_name, valid_name, xy_to_hs  # noqa: F401 (this module's API too)

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
