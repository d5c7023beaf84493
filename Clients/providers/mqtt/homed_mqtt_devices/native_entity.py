"""What the Tasmota and Shelly mappings share, with no I/O: an entity built
with the same builder as a Home Assistant discovery config's (so services,
characteristics, ranges and steps come out as the rest of the provider's),
and the readers of JSON payloads they bind to."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from .bindings import UNKNOWN_STATES, Message
from .components import _Entity
from .templates import MISSING, RenderError, as_text

__all__ = ["entity", "json_object", "number", "at_path", "names", "Entity"]

#: The builder components.py maps a discovery config with.
Entity = _Entity


def entity(uid: str, discovery_id: str, component: str, name: Optional[str], device: dict) -> _Entity:
    """An entity keyed `uid` of the device `device` (its `identifiers` the
    accessory's key), named `name` (None: after its device)."""
    return _Entity(discovery_id, component, {"unique_id": uid, "name": name, "device": device})


def json_object(message: Message) -> Dict[str, Any]:
    value = message.json()
    if not isinstance(value, dict):
        raise RenderError(f"a JSON {type(value).__name__}, not an object")
    return value


def at_path(value: Any, path: Sequence[Any]) -> Any:
    """value[path[0]][path[1]]…, or MISSING where the payload does not have it
    (a message that says nothing of this reading)."""
    for step in path:
        if isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value):
            value = value[step]
        elif isinstance(step, str) and isinstance(value, dict) and step in value:
            value = value[step]
        else:
            return MISSING
    return value


def number(value: Any, convert: Callable[[float], Optional[float]] = lambda v: v) -> Any:
    """A reading as a number through `convert`: numbers and numeric text (a
    Tasmota sends "12.3" for some sensors); MISSING for none or an unknown
    state; RenderError for anything else."""
    if value is MISSING or value is None:
        return MISSING
    if isinstance(value, str):
        if value.strip() in UNKNOWN_STATES:
            return MISSING
        try:
            value = float(value)
        except ValueError:
            raise RenderError(f"{value[:40]!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RenderError(f"{as_text(value)[:40]!r} is not a number")
    converted = convert(float(value))
    if converted is None:
        raise RenderError(f"{value!r} cannot be converted")
    return converted


def names(items: List[str]) -> str:
    """Items for a log line: 'a, b and c'."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
