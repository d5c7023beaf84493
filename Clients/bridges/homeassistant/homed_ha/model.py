"""The accessories as the mapping to Home Assistant reads them (discovery.py,
payloads.py): plain values made from homed's replica of the home
(``homed.home``), which the bridge keeps by its subscription. No I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from homed import pb
from homed.home import plain

__all__ = ["Char", "Service", "AccessoryView", "views", "plain"]

_FORMAT_NAMES = {number: name[len("FORMAT_"):].lower() for name, number in pb.ENUMS["Format"].items()}


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


def views(home) -> Dict[int, AccessoryView]:
    """Every accessory of a ``homed.home.Home``, by id."""
    out: Dict[int, AccessoryView] = {}
    for a in home.accessories.values():
        room = home.rooms.get(a.room_id)
        view = AccessoryView(
            id=a.id, name=a.name, room=room.name if room is not None else "", room_id=a.room_id,
            provider=a.provider, manufacturer=a.manufacturer, model=a.model, firmware=a.firmware_revision,
            serial=a.serial_number, reachable=a.reachable)
        for s in a.services:
            service = Service(id=s.id, type_name=s.type_name, name=s.name, key=s.provider_key, hidden=s.hidden)
            service.chars = {c.type_name: _char(c) for c in s.characteristics}
            view.services.append(service)
        out[a.id] = view
    return out
