"""An `action` enum as HAP stateless programmable switches, with no I/O: its
values grouped into buttons (`brightness_up_click`, `brightness_up_hold` are
one button's single and long press), one service per button."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from homed.refs import Ref

from .binding import MISSING, Binding
from .builder import Builder

__all__ = ["parse_action", "action"]


PRESS_PREFIX = (("single_", 0), ("double_", 1), ("hold_", 2), ("long_", 2))
PRESS = (("_single", 0), ("_click", 0), ("_press", 0), ("_double", 1), ("_hold", 2), ("_long", 2))
IGNORED_ACTIONS = ("_release", "_stop", "_hold_release", "_long_release")


def parse_action(value: str) -> Optional[Tuple[str, int]]:
    """An action value as (button, ProgrammableSwitchEvent), or None for the
    ones a stateless switch has no event for (a hold's release)."""
    # A plain "stop" is a button of its own (a blind remote's open, close and
    # stop); "brightness_stop" ends a hold, as a release does.
    if value.endswith(IGNORED_ACTIONS) or value == "release":
        return None
    for bare, press in (("single", 0), ("double", 1), ("hold", 2), ("long", 2)):
        if value == bare:
            return "", press
    if value.startswith(("triple", "quadruple", "many")) or value.endswith(("_triple", "_quadruple")):
        return None  # no HAP event for them
    for prefix, press in PRESS_PREFIX:
        if value.startswith(prefix) and len(value) > len(prefix):
            return value[len(prefix):], press
    for suffix, press in PRESS:
        if value.endswith(suffix) and len(value) > len(suffix):
            return value[:-len(suffix)], press
    return value, 0  # "on", "off", "toggle": a button pressed once


def action(b: Builder, feature: dict, ignored: List[str]) -> None:
    buttons: Dict[str, Dict[str, int]] = {}
    for value in feature.get("values", []):
        if not isinstance(value, str):
            continue
        if "*" in value:  # a pattern (`region_*_enter`), not a value the device sends: no button to make
            ignored.append(f"action {value}")
            continue
        parsed = parse_action(value)
        if parsed is None:
            ignored.append(f"action {value}")
            continue
        button, press = parsed
        buttons.setdefault(button, {})[value] = press
    for index, (button, values) in enumerate(buttons.items(), start=1):
        key = "button_" + (button or "main")
        service = b.service("StatelessProgrammableSwitch", key,
                            f"{b.name} {button.replace('_', ' ')}" if button else b.name)
        ref = Ref(b.ieee, key, "ProgrammableSwitchEvent")
        service["characteristics"].append({"type": "ProgrammableSwitchEvent",
                                           "metadata": {"valid_values": sorted(set(values.values()))}})
        if index <= 255:
            service["characteristics"].append({"type": "ServiceLabelIndex", "value": index})
        b.bindings[ref] = Binding(ref=ref, props=("action",), decode=lambda s: MISSING, event=True)
        for value, press in values.items():
            b.actions.setdefault(value, []).append((ref, press))

