"""State payloads from homed's values, and homed writes from command payloads
(no I/O). Home Assistant's units where they differ from HAP's: brightness
0–255 (HAP 0–100), colour temperature in mireds (the same as HAP), hue and
saturation as they are."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

from homed import pb

from .discovery import MODES, PRESSES, Entity
from .model import Char

__all__ = ["state_of", "state_payload", "event_payload", "writes_for", "BadCommand", "value_for"]


class BadCommand(ValueError):
    """A command payload that cannot be applied; nothing is written."""


def _on(value) -> Optional[str]:
    return None if value is None else ("ON" if value else "OFF")


def state_of(entity: Entity, values: Dict[int, Any], color_mode: Optional[str] = None) -> Optional[dict]:
    """The entity's state as a JSON object, or None while homed has no value for it.
    `color_mode`: which of a light's colour modes was set last ("hs" or "color_temp")."""
    v = {role: values.get(char.id) for role, char in entity.chars.items()}
    kind = entity.kind
    if kind == "light":
        if v["on"] is None:
            return None
        state: dict = {"state": _on(v["on"])}
        if v.get("brightness") is not None:
            state["brightness"] = round(v["brightness"] * 255 / 100)
        modes = entity.config["supported_color_modes"]
        mode = color_mode if color_mode in modes else modes[0]
        if mode == "hs" and v.get("hue") is not None and v.get("saturation") is not None:
            state["color_mode"] = "hs"
            state["color"] = {"h": v["hue"], "s": v["saturation"]}
        elif mode == "color_temp" and v.get("color_temp") is not None:
            state["color_mode"] = "color_temp"
            state["color_temp"] = v["color_temp"]
        return state
    if kind == "switch":
        return None if v["on"] is None else {"state": _on(v["on"])}
    if kind == "window":
        if v["current"] is None:
            return None
        position = v["current"]
        moving = v.get("moving")
        if moving == 0:
            text = "closing"
        elif moving == 1:
            text = "opening"
        else:
            text = "closed" if position == 0 else "open"
        return {"state": text, "position": position}
    if kind == "garage":
        names = {0: "open", 1: "closed", 2: "opening", 3: "closing", 4: "stopped"}
        return None if v["current"] is None else {"state": names.get(v["current"], "stopped")}
    if kind == "lock":
        current, target = v["current"], v["target"]
        if current is None:
            return None
        if current == 2:
            text = "JAMMED"
        elif current in (0, 1) and target is not None and target != current:
            text = "LOCKING" if target == 1 else "UNLOCKING"
        elif current in (0, 1):
            text = "LOCKED" if current == 1 else "UNLOCKED"
        else:  # 3: unknown, and moving towards the target
            text = "LOCKING" if target == 1 else "UNLOCKING"
        return {"state": text}
    if kind == "climate":
        state = {}
        if v["current"] is not None:
            state["current"] = v["current"]
        if v["target"] is not None:
            state["target"] = v["target"]
        if v["mode"] is not None:
            state["mode"] = MODES.get(v["mode"], "off")
        if "action" in v and v["action"] is not None:
            heating = {1: "heating", 2: "cooling"}.get(v["action"])
            state["action"] = heating or ("off" if state.get("mode") == "off" else "idle")
        return state or None
    if kind == "sensor":
        return None if v["value"] is None else {"value": v["value"]}
    if kind == "binary":
        if v["value"] is None:
            return None
        return {"state": "ON" if v["value"] == entity.options["on"] else "OFF"}
    return None  # events have no state: event_payload makes their messages


def state_payload(state: dict) -> bytes:
    return json.dumps(state, sort_keys=True, separators=(",", ":")).encode()


def event_payload(entity: Entity, value) -> Optional[bytes]:
    """A button press as an event message (None: a value with no HA event type)."""
    press = PRESSES.get(value)
    if press is None or press not in entity.options.get("presses", ()):
        return None
    return state_payload({"event_type": press})


# -- commands -------------------------------------------------------------------

_UINTS = {"uint8", "uint16", "uint32", "uint64"}


def value_for(char: Char, value) -> "pb.Value":
    """A Python value as the pb.Value kind the characteristic's format takes."""
    if char.format == "bool":
        return pb.Value(bool_value=bool(value))
    if char.format in _UINTS:
        return pb.Value(uint_value=int(value))
    if char.format == "int":
        return pb.Value(int_value=int(value))
    if char.format == "float":
        return pb.Value(float_value=float(value))
    return pb.Value(string_value=str(value))


def _text(payload: bytes) -> str:
    try:
        return payload.decode("utf-8").strip()
    except UnicodeDecodeError as error:
        raise BadCommand(f"not UTF-8 ({error.reason} at byte {error.start})") from None


def _number(payload: bytes, what: str) -> float:
    text = _text(payload)
    try:
        number = float(text)
    except ValueError:
        raise BadCommand(f"{what} {text!r} is not a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise BadCommand(f"{what} {text!r} is not a finite number")
    return number


def _choice(payload: bytes, choices: Dict[str, Any], what: str):
    text = _text(payload)
    if text not in choices:
        raise BadCommand(f"{what} {text!r} is not one of {', '.join(sorted(choices))}")
    return choices[text]


def _writable(entity: Entity, role: str) -> Char:
    char = entity.chars.get(role)
    if char is None or not char.writable:
        raise BadCommand(f"its {role} cannot be written")
    return char


def writes_for(entity: Entity, field: str, payload: bytes, values: Dict[int, Any]) -> Dict[int, "pb.Value"]:
    """The homed writes a command asks for: {characteristic id: pb.Value}.
    `field` is "" for `<object>/set`, else the part after `set/`. Raises
    BadCommand saying what is wrong; nothing is then written."""
    kind = entity.kind
    writes: Dict[Char, Any] = {}
    if kind == "light" and field == "":
        text = _text(payload)
        try:
            command = json.loads(text)
        except ValueError as error:
            raise BadCommand(f"{text[:80]!r} is not JSON ({error})") from None
        if not isinstance(command, dict):
            raise BadCommand(f"{text[:80]!r} is not a JSON object")
        state = command.get("state")
        if state not in (None, "ON", "OFF"):
            raise BadCommand(f"state {state!r} is not ON or OFF")
        if state == "OFF":
            writes[_writable(entity, "on")] = False
        else:
            if state == "ON":
                writes[_writable(entity, "on")] = True
            if "brightness" in command:
                b = command["brightness"]
                if isinstance(b, bool) or not isinstance(b, (int, float)) or not 0 <= b <= 255:
                    raise BadCommand(f"brightness {b!r} is not a number from 0 to 255")
                writes[_writable(entity, "brightness")] = max(1, round(b * 100 / 255)) if b > 0 else 0
            if "color_temp" in command:
                ct = command["color_temp"]
                if isinstance(ct, bool) or not isinstance(ct, (int, float)):
                    raise BadCommand(f"color_temp {ct!r} is not a number of mireds")
                writes[_writable(entity, "color_temp")] = round(ct)
            if "color" in command:
                color = command["color"]
                if not isinstance(color, dict) or "h" not in color or "s" not in color:
                    raise BadCommand(f"color {color!r} is not {{\"h\": …, \"s\": …}} (the light takes hs)")
                for role, key in (("hue", "h"), ("saturation", "s")):
                    if isinstance(color[key], bool) or not isinstance(color[key], (int, float)):
                        raise BadCommand(f"color.{key} {color[key]!r} is not a number")
                    writes[_writable(entity, role)] = float(color[key])
        if not writes:
            raise BadCommand(f"{text[:80]!r} asks for nothing this light does")
    elif kind == "switch" and field == "":
        writes[_writable(entity, "on")] = _choice(payload, {"ON": True, "OFF": False}, "payload")
    elif kind == "window" and field == "":
        current = values.get(entity.chars["current"].id)
        stop = current if current is not None else None
        choices = {"OPEN": 100, "CLOSE": 0, "STOP": stop}
        target = _choice(payload, choices, "payload")
        if target is None:
            raise BadCommand("STOP while the current position is unknown")
        writes[_writable(entity, "target")] = target
    elif kind == "window" and field == "position":
        position = _number(payload, "position")
        if not 0 <= position <= 100:
            raise BadCommand(f"position {position:g} is not from 0 to 100")
        writes[_writable(entity, "target")] = round(position)
    elif kind == "garage" and field == "":
        writes[_writable(entity, "target")] = _choice(payload, {"OPEN": 0, "CLOSE": 1}, "payload")
    elif kind == "lock" and field == "":
        writes[_writable(entity, "target")] = _choice(payload, {"LOCK": 1, "UNLOCK": 0}, "payload")
    elif kind == "climate" and field == "mode":
        modes = {name: number for number, name in MODES.items() if name in entity.options["modes"]}
        writes[_writable(entity, "mode")] = _choice(payload, modes, "mode")
    elif kind == "climate" and field == "temperature":
        writes[_writable(entity, "target")] = _number(payload, "temperature")
    else:
        raise BadCommand(f"a {entity.component} takes no command on set{'/' + field if field else ''}")
    return {char.id: value_for(char, value) for char, value in writes.items()}
