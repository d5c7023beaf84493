"""What an entity's characteristics are bound to, with no I/O: a `Message`
(one MQTT payload, its text and JSON parsed once), a `Binding` (one HAP
characteristic: the topic it is read from, how, and what a write publishes),
an `Availability` (the topics that say whether the entity is there)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from homed.refs import Ref

from .templates import MISSING, RenderError, Template, as_text
from .values import finite, fit

__all__ = ["Message", "Binding", "Availability", "AvailabilitySource", "Command", "UNKNOWN_STATES"]

#: Rendered states that say "no value" rather than a wrong one (Home Assistant
#: takes them as unknown): left alone, quietly.
UNKNOWN_STATES = ("", "None", "none", "unknown", "unavailable", "null")

#: (topic, payload): a str published as it is, a dict as JSON (dicts for one
#: topic are merged into one message), or an object with `merge_key` and
#: `merge(other)` (payloads of one topic with the same key are one message:
#: a Tasmota Backlog, one Shelly RPC call) and `text()`.
Command = Tuple[str, Any]


class Message:
    """One MQTT message as the bindings read it."""

    __slots__ = ("topic", "payload", "_text", "_json", "_error")

    def __init__(self, topic: str, payload: bytes):
        self.topic = topic
        self.payload = payload
        self._text: Optional[str] = None
        self._json: Any = MISSING
        self._error: Optional[str] = None

    def text(self) -> str:
        if self._text is None:
            try:
                self._text = self.payload.decode("utf-8")
            except UnicodeDecodeError as error:
                raise RenderError(f"the payload is not UTF-8 ({error.reason} at byte {error.start})") from None
        return self._text

    def json(self) -> Any:
        if self._json is MISSING and self._error is None:
            try:
                self._json = json.loads(self.text())
            except ValueError as error:
                self._error = f"the payload is not JSON ({error})"
        if self._error is not None:
            raise RenderError(self._error)
        return self._json

    def render(self, template: Optional[Template]) -> Any:
        """The payload through the template (the text without one)."""
        if template is None:
            return self.text()
        return template.render(self.text(), self.json)


Reader = Callable[[Message, Dict[Ref, Any]], Any]
Writer = Callable[[Any, Dict[Ref, Any]], List[Command]]


@dataclass(eq=False)
class Binding:
    """One HAP characteristic of an entity."""

    ref: Ref
    entity: str  # the entity's unique id
    #: The state topic (a subscription filter) it is read from; None: a
    #: constant, or write-only.
    topic: Optional[str] = None
    #: (message, the values known now) -> value, or MISSING when the message
    #: does not speak of it; raises RenderError for a payload it cannot read.
    read: Optional[Reader] = None
    #: (value, the values known with the rest of the write) -> commands; None: read-only.
    write: Optional[Writer] = None
    #: (min, max, step) every number read is fitted to.
    bounds: Tuple[Optional[float], Optional[float], Optional[float]] = (None, None, None)
    integer: bool = False
    #: How far a value read back may be from the one written and still confirm it.
    tolerance: float = 0.0
    #: Writes are acknowledged at once (no state topic, or the config says optimistic).
    optimistic: bool = False
    #: A value known without any message (a stopped cover, °C).
    constant: Any = MISSING
    #: When this characteristic reads one of `ack_values`, a write waiting on
    #: `acks` is confirmed (a cover that starts moving took its new target).
    acks: Optional[Ref] = None
    ack_values: Tuple[Any, ...] = ()
    #: On an optimistic write, these characteristics take f(value) too (an
    #: optimistic lock is then locked).
    followers: Dict[Ref, Callable[[Any], Any]] = field(default_factory=dict)
    #: Order of the commands of one write: -1 first, 1 last (a light's On
    #: after its brightness, as Home Assistant sends them by default).
    order: int = 0
    #: Seconds after a value other than `off_value` is read that the provider
    #: sets `off_value` itself (a binary_sensor's `off_delay`: a motion sensor
    #: that only says "on"); every new reading starts the delay again.
    off_delay: Optional[float] = None
    off_value: Any = MISSING
    #: An event-only characteristic (a button's ProgrammableSwitchEvent):
    #: every reading is told, none is kept as its value, and a message read
    #: again (an old one, at registration) is no new press.
    event: bool = False

    def value(self, message: Message, current: Dict[Ref, Any]) -> Tuple[Any, bool]:
        """(value, clamped) from a message on this binding's topic; (MISSING,
        False) when it says nothing of it. Raises RenderError."""
        if self.read is None:
            return MISSING, False
        value = self.read(message, current)
        if value is MISSING or value is None:
            return MISSING, False
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value, False
        number = finite(value)
        if number is None:
            raise RenderError(f"{value!r} is not a finite number")
        low, high, step = self.bounds
        if low is None and high is None and step is None:
            if isinstance(value, int) or self.integer:  # an enumeration's number stays an integer
                return int(round(number)), False
            return number, False
        fitted, clamped = fit(number, low, high, step)
        return (int(round(fitted)) if self.integer else fitted), clamped


@dataclass
class AvailabilitySource:
    topic: str
    available: str = "online"
    not_available: str = "offline"
    template: Optional[Template] = None

    def state(self, message: Message) -> Optional[bool]:
        """True, False, or None for a payload that is neither (raises RenderError)."""
        text = as_text(message.render(self.template))
        if text == self.available:
            return True
        if text == self.not_available:
            return False
        return None


@dataclass
class Availability:
    """Home Assistant's availability: one or more topics, combined by `mode`
    ("latest": the last message decides; "all": every topic says available;
    "any": one does). Before any message the entity is not available, as in
    Home Assistant."""

    sources: List[AvailabilitySource]
    mode: str = "latest"

    def available(self, states: List[Optional[bool]], latest: Optional[bool]) -> bool:
        if not self.sources:
            return True
        if self.mode == "all":
            return all(s is True for s in states)
        if self.mode == "any":
            return any(s is True for s in states)
        return latest is True
