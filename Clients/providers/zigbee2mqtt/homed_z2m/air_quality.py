"""Air quality exposes as one HAP AirQualitySensor, with no I/O: `voc`, `pm25`
and `pm10` readings as VOCDensity, PM2.5Density and PM10Density, and the
AirQuality HAP requires: the device's own `air_quality` verdict where it gives
one (the device knows its sensor), else the worst of what its readings say on
the scale below (the README's), the one Homebridge users of Zigbee2MQTT
already read their sensors on."""

from __future__ import annotations

from typing import Dict, List, Optional

from .binding import MISSING
from .builder import Builder, device_range, gettable, num

__all__ = ["AIR_READINGS", "air_quality"]

#: Zigbee2MQTT reading -> HAP characteristic.
AIR_READINGS = {"voc": "VOCDensity", "pm25": "PM2.5Density", "pm10": "PM10Density"}

#: Upper bounds of Excellent (1), Good (2), Fair (3) and Inferior (4); above the last is Poor (5).
THRESHOLDS = {"voc": (333, 1000, 3333, 8332), "pm10": (25, 50, 100, 300), "pm25": (15, 35, 55, 75)}

#: The device's own verdict (`air_quality` enum) -> AirQuality. "unknown" and
#: "out_of_range" are the device saying it cannot tell: HAP's Unknown.
VERDICTS = {"excellent": 1, "good": 2, "moderate": 3, "poor": 4, "unhealthy": 5, "hazardous": 5, "unknown": 0,
            "out_of_range": 0}


def _level(name: str, value: float) -> int:
    for quality, bound in enumerate(THRESHOLDS[name], start=1):
        if value <= bound:
            return quality
    return 5


def air_quality(b: Builder, readings: List[dict], verdict: Optional[dict]) -> None:
    """One AirQualitySensor for a device's air readings (and its verdict)."""
    readings = [f for f in readings if f.get("property")]
    if not readings and not (verdict and verdict.get("property")):
        return
    service = b.service("AirQualitySensor", "air_quality", f"{b.name} Air quality", sensor=True)
    if verdict and verdict.get("property") and any(v in VERDICTS for v in verdict.get("values", [])):
        vprop = verdict["property"]
        b.bind(service, "AirQuality", dict(props=(vprop,), decode=lambda s: VERDICTS.get(s[vprop], MISSING),
                                           gettable=gettable(verdict)))
    else:
        scaled: Dict[str, tuple] = {}
        for feature in readings:
            # A voc in ppm is the same reading a thousand times smaller than in ppb.
            factor = 1000.0 if feature["name"] == "voc" and feature.get("unit") == "ppm" else 1.0
            scaled[feature["property"]] = (feature["name"], factor)

        def worst(state):
            levels = [_level(name, num(state[p]) * factor) for p, (name, factor) in scaled.items() if p in state]
            return max(levels) if levels else MISSING

        b.bind(service, "AirQuality", dict(props=tuple(scaled), decode=worst))
    for feature in readings:
        prop, ctype = feature["property"], AIR_READINGS[feature["name"]]
        # The reading as the device gives it, in its own range when it has one
        # (a Bosch Twinguard's voc goes to 50 000, HAP's to 1 000).
        bounds, meta = device_range(ctype, feature.get("value_min"), feature.get("value_max"))
        b.bind(service, ctype, dict(props=(prop,), decode=lambda s, p=prop: num(s[p]), bounds=bounds,
                                    gettable=gettable(feature)), meta=meta)
