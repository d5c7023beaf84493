"""What the bridge knows of homed's home, as plain values taken from the
GetHome answer (no I/O): accessories with their room's name, services and
characteristics, and the characteristics' current values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from homed import pb

__all__ = ["Char", "Service", "AccessoryView", "Home", "home_from", "plain"]

_FORMAT_NAMES = {number: name[len("FORMAT_"):].lower() for name, number in pb.ENUMS["Format"].items()}


def plain(value) -> Any:
    """A pb.Value's content (None when empty)."""
    kind = value.WhichOneof("kind")
    return None if kind is None else getattr(value, kind)


@dataclass(eq=False)  # hashed by identity: payloads.py keys writes by it
class Char:
    id: int
    type_name: str
    format: str  # "bool", "uint8", "int", "float", "string", …
    readable: bool
    writable: bool
    events: bool
    min: Optional[float] = None
    max: Optional[float] = None
    step: Optional[float] = None
    valid_values: List[int] = field(default_factory=list)


@dataclass
class Service:
    id: int
    type_name: str
    name: str
    key: str  # the provider's key for it, "" when none
    hidden: bool
    chars: Dict[str, Char] = field(default_factory=dict)  # by type name


@dataclass
class AccessoryView:
    id: int
    name: str
    room: str
    room_id: int
    provider: str
    manufacturer: str
    model: str
    firmware: str
    serial: str
    reachable: bool
    services: List[Service] = field(default_factory=list)


@dataclass
class Home:
    accessories: Dict[int, AccessoryView]
    values: Dict[int, Any]  # characteristic id -> value
    seq: int
    journal_id: str


def _char(c) -> Char:
    m = c.metadata
    return Char(
        id=c.id, type_name=c.type_name, format=_FORMAT_NAMES.get(m.format, "unspecified"),
        readable=c.properties.readable, writable=c.properties.writable,
        events=c.properties.supports_event_notification,
        min=m.min_value if m.HasField("min_value") else None,
        max=m.max_value if m.HasField("max_value") else None,
        step=m.step_value if m.HasField("step_value") else None,
        valid_values=list(m.valid_values))


def home_from(response) -> Home:
    """A GetHomeResponse (every home) as a Home."""
    accessories: Dict[int, AccessoryView] = {}
    values: Dict[int, Any] = {}
    for home in response.homes:
        rooms = {room.id: room.name for room in home.rooms}
        for a in home.accessories:
            view = AccessoryView(
                id=a.id, name=a.name, room=rooms.get(a.room_id, ""), room_id=a.room_id, provider=a.provider,
                manufacturer=a.manufacturer, model=a.model, firmware=a.firmware_revision, serial=a.serial_number,
                reachable=a.reachable)
            for s in a.services:
                service = Service(id=s.id, type_name=s.type_name, name=s.name, key=s.provider_key, hidden=s.hidden)
                for c in s.characteristics:
                    service.chars[c.type_name] = _char(c)
                    if c.properties.readable:
                        values[c.id] = plain(c.value)
                view.services.append(service)
            accessories[a.id] = view
    return Home(accessories, values, response.seq, response.journal_id)
