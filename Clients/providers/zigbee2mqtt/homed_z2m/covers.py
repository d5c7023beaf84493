"""Covers and locks as HAP services, with no I/O: a `cover` expose is a
WindowCovering (position, tilt, movement, holding its position), a `lock` a
LockMechanism."""

from __future__ import annotations

from typing import Dict, List

from .binding import MISSING
from .builder import CATALOG, Builder, binary_values, features, gettable, label, num, settable, suffix, two_way

__all__ = ["cover", "lock"]


def cover(b: Builder, expose: dict, top: Dict[str, dict]) -> None:
    feats = features(expose)
    key = "cover" + suffix(expose)
    position, state_f, tilt = feats.get("position"), feats.get("state"), feats.get("tilt")
    if not (position and position.get("property")) and tilt and tilt.get("property"):
        # A tilt-only cover (a venetian blind's wand): its tilt is how far it is
        # open, in percent as a position is, and it is written as a tilt.
        position, tilt = tilt, None
    if not position and not state_f:
        raise ValueError("a cover with neither position nor state")
    service = b.service("WindowCovering", key, label(b.name, expose))
    if position and position.get("property"):
        prop = position["property"]
        current = dict(props=(prop,), decode=lambda s: num(s[prop]), bounds=CATALOG["CurrentPosition"],
                       gettable=gettable(position))
        target = dict(current, encode=lambda v: {prop: int(v)}, bounds=CATALOG["TargetPosition"])
        writable = settable(position)
    else:  # open/close only
        prop = state_f["property"]
        opened = binary_values(state_f, "OPEN", "CLOSE")[0] if state_f.get("type") == "binary" else "OPEN"
        current = dict(props=(prop,), decode=lambda s: 100 if str(s[prop]).upper() == str(opened).upper() else 0,
                       gettable=gettable(state_f))
        target = dict(current, encode=lambda v: {prop: "OPEN" if v >= 50 else "CLOSE"}, tolerance=49)
        writable = settable(state_f)
    b.bind(service, "CurrentPosition", current)
    b.bind(service, "TargetPosition", target, writable=writable)
    moving = feats.get("moving") or top.get("moving")  # some devices expose it beside the cover
    if moving and moving.get("property"):
        mprop = moving["property"]
        directions = {"DOWN": 0, "UP": 1, "STOP": 2}
        b.bind(service, "PositionState", dict(props=(mprop,), decode=lambda s: directions.get(str(s[mprop]).upper(), 2)))
    else:  # Zigbee2MQTT says where a cover is, not whether it moves
        b.bind(service, "PositionState", dict(props=(), decode=lambda s: 2))
    if tilt and tilt.get("property"):
        tprop = tilt["property"]
        current = dict(props=(tprop,), decode=lambda s: num(s[tprop]) * 1.8 - 90,
                       bounds=CATALOG["CurrentHorizontalTiltAngle"], tolerance=1, gettable=gettable(tilt))
        b.bind(service, "CurrentHorizontalTiltAngle", current)
        b.bind(service, "TargetHorizontalTiltAngle",
               dict(current, encode=lambda v: {tprop: int(round((v + 90) / 1.8))},
                    bounds=CATALOG["TargetHorizontalTiltAngle"]), writable=settable(tilt))
    _hold_position(b, service, state_f, [f for f in (position, tilt, state_f, moving) if f])


def _hold_position(b: Builder, service: dict, state_f, reported) -> None:
    """HoldPosition when the cover takes STOP: written true, it publishes
    STOP. It has no value to read back (HAP's is write-only), so the cover's
    next report (its position, tilt or state) acknowledges it; written false
    it asks nothing of the cover."""
    if not (state_f and state_f.get("property") and settable(state_f) and state_f.get("type") == "enum"
            and "STOP" in (state_f.get("values") or [])):
        return
    sprop = state_f["property"]
    acked_by = tuple(dict.fromkeys(f["property"] for f in reported if f.get("property")))
    b.bind(service, "HoldPosition", dict(props=(), decode=lambda s: MISSING,
                                         encode=lambda v: {sprop: "STOP"} if v else {}, acked_by=acked_by))


LOCK_CURRENT = {"locked": 1, "unlocked": 0, "not_fully_locked": 2}


def lock(b: Builder, expose: dict, ignored: List[str]) -> None:
    feats = features(expose)
    state_f = feats.get("state")
    if not state_f or not state_f.get("property"):
        raise ValueError("a lock without a state feature")
    prop = state_f["property"]
    on, off = binary_values(state_f, "LOCK", "UNLOCK")
    lock_state = feats.get("lock_state")
    if not lock_state and prop != "state" + suffix(expose):
        # A thermostat's or a plug's `child_lock`: a setting of the device, not
        # a door lock (a LockMechanism would make a radiator a lock in Home).
        ignored.append(f"{expose.get('label') or prop} (a lock of the device's buttons, not a door lock)")
        return
    service = b.service("LockMechanism", "lock" + suffix(expose), label(b.name, expose))
    if lock_state and lock_state.get("property"):
        lprop = lock_state["property"]
        b.bind(service, "LockCurrentState", dict(props=(lprop,), decode=lambda s: LOCK_CURRENT.get(s[lprop], 3),
                                                 gettable=gettable(lock_state)))
    else:
        b.bind(service, "LockCurrentState", dict(props=(prop,), decode=two_way(prop, on, off, 1, 0)))
    b.bind(service, "LockTargetState", dict(props=(prop,), decode=two_way(prop, on, off, 1, 0),
                                            encode=lambda v: {prop: on if v else off},
                                            gettable=gettable(state_f)), writable=settable(state_f))

