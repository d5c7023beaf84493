"""What a device's map is made of, with no I/O: a `Binding` per characteristic
(which state properties it is decoded from, how, and what a write publishes)
and the `DeviceMap` of one device (its accessory, bindings and button actions).

Every number decoded goes through `values.fit`: the daemon refuses a value off
the characteristic's step or range, so readings are rounded and clamped here
(the caller logs a clamped one once per characteristic).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from homed.refs import Ref

from .values import fit, hs_to_xy

__all__ = ["MISSING", "Binding", "DeviceMap", "Unsupported"]

MISSING = object()


@dataclass
class Binding:
    """One HAP characteristic bound to a device's properties."""

    ref: Ref
    #: The top-level state properties it is decoded from (a state message
    #: without any of them leaves it alone).
    props: Tuple[str, ...]
    decode: Callable[[dict], Any]  # state -> HAP value, or MISSING
    encode: Optional[Callable[[Any], dict]] = None  # HAP value -> payload for /set
    #: (min, max, step) every decoded number is fitted to.
    bounds: Tuple[Optional[float], Optional[float], Optional[float]] = (None, None, None)
    #: How far an echoed value may be from the written one and still confirm it
    #: (a colour comes back as xy, a setpoint on the device's own step).
    tolerance: float = 0.0
    #: The properties a /get may ask for (access bit 4).
    gettable: Tuple[str, ...] = ()
    #: Event-only (a button): reported as events, never read.
    event: bool = False
    #: A write-only characteristic's write (HoldPosition) is acknowledged by the
    #: device's next report of any of these properties: it has no value to echo.
    acked_by: Tuple[str, ...] = ()

    def value(self, state: dict):
        """(value, clamped) from a state message, or (MISSING, False)."""
        if self.props and not any(p in state for p in self.props):
            return MISSING, False
        if not self.props and state:
            return MISSING, False  # a constant: given once, from decode({})
        try:
            value = self.decode(state)
        except (TypeError, ValueError, KeyError, ZeroDivisionError):
            return MISSING, False
        if value is MISSING or value is None:
            return MISSING, False
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value, False
        low, high, step = self.bounds
        if low is None and high is None and step is None:
            return value, False
        fitted, clamped = fit(float(value), low, high, step)
        if step is not None and step >= 1:
            fitted = int(round(fitted))
        return fitted, clamped


@dataclass
class DeviceMap:
    ieee: str
    friendly_name: str
    accessory: dict  # without values
    bindings: Dict[Ref, Binding] = field(default_factory=dict)
    #: action value -> [(ref, ProgrammableSwitchEvent value)]
    actions: Dict[str, List[Tuple[Ref, int]]] = field(default_factory=dict)
    #: Features that map to nothing ("linkquality", "fan …"), for the log.
    ignored: List[str] = field(default_factory=list)
    #: Expose types this mapping does not know at all.
    unknown: List[str] = field(default_factory=list)
    #: Colour properties of lights that take x and y only.
    xy_colors: Set[str] = field(default_factory=set)

    @functools.cached_property
    def signature(self) -> str:
        """The registration as text, to tell whether homed has it as it is: made
        once per mapping (a map is never changed once made), not at every state
        message of every device."""
        return json.dumps(self.accessory, sort_keys=True)

    @property
    def gettable(self) -> List[str]:
        out: List[str] = []
        for binding in self.bindings.values():
            out.extend(p for p in binding.gettable if p not in out)
        return out

    def decode(self, state: dict) -> Tuple[Dict[Ref, Any], List[Ref]]:
        """({ref: value} for every characteristic the state message speaks of,
        [refs whose value was clamped]). `decode({})` gives the constants (a
        cover's PositionState without "moving", a battery's ChargingState)."""
        values, clamped = {}, []
        for ref, binding in self.bindings.items():
            if binding.event:
                continue
            value, was_clamped = binding.value(state)
            if value is not MISSING:
                values[ref] = value
                if was_clamped:
                    clamped.append(ref)
        return values, clamped

    def acks(self, state: dict) -> List[Ref]:
        """The write-only characteristics a state message acknowledges."""
        return [ref for ref, binding in self.bindings.items() if binding.acked_by
                and any(p in state for p in binding.acked_by)]

    def events(self, state: dict) -> List[Tuple[Ref, int]]:
        action = state.get("action")
        if not isinstance(action, str) or not action:
            return []
        return list(self.actions.get(action, []))

    def payload(self, values: Dict[Ref, Any], current: Optional[Dict[Ref, Any]] = None) -> dict:
        """The /set payload for these writes (merged: a colour's hue and
        saturation go in one "color" object; a hue written alone takes the
        current saturation along, and the other way round, since a colour is
        set whole; a light that takes x and y only gets them, from hue and
        saturation). Raises KeyError for a ref that takes no writes, ValueError
        for a colour that cannot be made."""
        values = dict(values)
        current = current or {}
        for ref in list(values):
            if ref.characteristic in ("Hue", "Saturation"):
                other = Ref(ref.accessory_key, ref.service, "Saturation" if ref.characteristic == "Hue" else "Hue")
                if other not in values and other in current and other in self.bindings:
                    values[other] = current[other]
        out: dict = {}
        for ref, value in values.items():
            binding = self.bindings[ref]
            if binding.encode is None:
                raise KeyError(ref)
            _merge(out, binding.encode(value))
        for prop in self.xy_colors:
            color = out.get(prop)
            if isinstance(color, dict) and ("hue" in color or "saturation" in color):
                if "hue" not in color or "saturation" not in color:
                    missing = "Saturation" if "hue" in color else "Hue"
                    raise ValueError(f"this light takes a colour as x and y, made from hue and saturation both, "
                                     f"and its {missing} is not known yet")
                x, y = hs_to_xy(color.pop("hue"), color.pop("saturation"))
                color.update(x=round(x, 4), y=round(y, 4))
        return out


class Unsupported(Exception):
    """A device that is not registered, and why (for the log)."""


def _merge(into: dict, part: dict) -> None:
    for key, value in part.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
