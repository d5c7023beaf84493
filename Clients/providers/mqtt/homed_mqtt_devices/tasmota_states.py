"""How a Tasmota's states are read and its commands sent, with no I/O: the
POWER of a RESULT or STATE payload, a characteristic read from both, and the
Backlog a write of several characteristics is sent as."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .bindings import Binding, Message
from .native_entity import Entity, json_object
from .templates import MISSING, RenderError

__all__ = ["Backlog", "power_reader", "field_reader", "bind_read"]


class Backlog:
    """Commands for one device in one message on `cmnd/<topic>/Backlog`, each
    after `NoDelay` (`NoDelay;Dimmer 75;NoDelay;Power1 ON`), as Tasmota's own
    integration sends them: the device runs them in order, without Backlog's
    200 ms between them, and answers each on stat/RESULT."""

    merge_key = "Backlog"

    def __init__(self, command: str, implied_by: Optional[str] = None):
        """`implied_by`: a command this one is left out beside (a light's
        `Power1 ON` beside `Dimmer`, which turns it on by itself)."""
        self.commands = [(command, implied_by)]

    def merge(self, other: "Backlog") -> None:
        self.commands.extend(other.commands)

    def text(self) -> str:
        names = [command.partition(" ")[0] for command, _ in self.commands]
        return ";".join(f"NoDelay;{command}" for command, implied_by in self.commands
                        if implied_by is None or implied_by not in names)

    def __repr__(self) -> str:
        return f"Backlog({self.text()!r})"


def power_reader(idx: int, states: List[Optional[str]]):
    """POWER<n> (POWER alone for the first) of a RESULT or STATE payload: True
    for the `state` list's ON, False for its OFF; MISSING when it says nothing."""
    off, on = states[0], states[1]

    def read(message: Message, current: Dict) -> Any:
        payload = json_object(message)
        value = payload.get("POWER", MISSING) if idx == 0 and "POWER" in payload else payload.get(
            f"POWER{idx + 1}", MISSING)
        if value is MISSING:
            return MISSING
        if value == on:
            return True
        if value == off:
            return False
        raise RenderError(f"POWER {value!r} is neither {on!r} nor {off!r}")
    return read


def field_reader(key: str, parse=lambda v: v):
    """One key of a RESULT or STATE payload through `parse`; MISSING without it."""
    def read(message: Message, current: Dict) -> Any:
        value = json_object(message).get(key, MISSING)
        return MISSING if value is MISSING or value is None else parse(value)
    return read


def bind_read(e: Entity, service: dict, ctype: str, topics: Tuple[str, ...], read, **kwargs) -> Binding:
    """One characteristic read from each of `topics` (a RESULT and a STATE),
    written as the first binding says."""
    first = e.bind(service, ctype, topic=topics[0], read=read, **kwargs)
    for topic in topics[1:]:
        e.bindings.append(Binding(ref=first.ref, entity=e.uid, topic=topic, read=read, bounds=first.bounds,
                                  integer=first.integer))
    return first
