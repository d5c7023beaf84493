"""Writes to the bridge, with no I/O: the PUT body for the values written to
one light, which of its fields the bridge's confirming event will carry, and
the writes waiting for that event. A field the light already has is not
waited for (the bridge sends no event for what did not change)."""

from __future__ import annotations

from typing import Any, Dict, List

from homed.device_values import hs_to_xy

from .mapping import hs_of

__all__ = ["light_body", "changes", "Pending", "Confirmations"]


def light_body(values: Dict[str, Any], resource: dict) -> dict:
    """The PUT body for values written to one light, by characteristic type
    name. Hue and saturation go as one xy colour: the one not written is the
    light's own."""
    body: dict = {}
    if "On" in values:
        body["on"] = {"on": bool(values["On"])}
    if "Brightness" in values:
        # The bridge takes nothing under the light's lowest dim level: 0 % is that level.
        lowest = (resource.get("dimming") or {}).get("min_dim_level")
        brightness = float(values["Brightness"])
        if isinstance(lowest, (int, float)) and brightness < lowest:
            brightness = float(lowest)
        body["dimming"] = {"brightness": brightness}
    if "ColorTemperature" in values:
        body["color_temperature"] = {"mirek": int(values["ColorTemperature"])}
    if "Hue" in values or "Saturation" in values:
        try:
            hue, saturation = hs_of(resource)
        except (KeyError, TypeError, ValueError):
            hue, saturation = 0.0, 0.0
        x, y = hs_to_xy(float(values.get("Hue", hue)), float(values.get("Saturation", saturation)))
        body["color"] = {"xy": {"x": round(x, 4), "y": round(y, 4)}}
    return body


def changes(field: str, part: dict, resource: dict) -> bool:
    """Whether writing `part` to the light's `field` changes it."""
    current = resource.get(field)
    if not isinstance(current, dict):
        return True
    if field == "on":
        return current.get("on") != part["on"]
    if field == "dimming":
        return abs(float(current.get("brightness", -10)) - part["brightness"]) > 0.5
    if field == "color_temperature":
        return current.get("mirek") != part["mirek"] or current.get("mirek_valid") is False
    if field == "color":
        xy = current.get("xy") or {}
        return any(abs(float(xy.get(k, -1)) - part["xy"][k]) > 0.00005 for k in ("x", "y"))
    return True


class Pending:
    """One PUT's fields, until the bridge's events have carried each."""

    def __init__(self, rid: str, fields):
        self.rid = rid
        self.waiting = set(fields)

    @property
    def done(self) -> bool:
        return not self.waiting


class Confirmations:
    """Every write waiting for its confirming event, by resource id."""

    def __init__(self):
        self._pending: Dict[str, List[Pending]] = {}

    def add(self, rid: str, fields) -> Pending:
        pending = Pending(rid, fields)
        if not pending.done:
            self._pending.setdefault(rid, []).append(pending)
        return pending

    def observe(self, rid: str, item: dict) -> List[Pending]:
        """An update of a resource: the writes it completes."""
        done = []
        for pending in self._pending.get(rid, []):
            pending.waiting -= set(item)
            if pending.done:
                done.append(pending)
        if done:
            self._pending[rid] = [p for p in self._pending[rid] if not p.done]
        return done

    def drop(self, pending: Pending) -> None:
        waiting = self._pending.get(pending.rid, [])
        if pending in waiting:
            waiting.remove(pending)

    def count(self) -> int:
        return sum(len(v) for v in self._pending.values())
