"""homed's accessories as HAP-python accessories: built from their
AccessorySpec (hapmodel.py) with the persisted iids (ids.py), and values pushed
to controllers the way homed means them (every press an event)."""

from __future__ import annotations

from typing import Dict, Set
from uuid import UUID

from pyhap.accessory import Accessory
from pyhap.characteristic import Characteristic
from pyhap.iid_manager import IIDManager
from pyhap.service import Service

from . import hapmodel as hm


class StableIIDManager(IIDManager):
    """iids from the persisted table (ids.py), keyed by the object's unique_id."""

    def __init__(self, iids: Dict[str, int]):
        super().__init__()
        self.table = iids

    def get_iid_for_obj(self, obj) -> int:
        return self.table[obj.unique_id]


class HomedService(Service):
    """HAP-python's Service with HAP's "hidden" flag, which HAP-python 5.0 never
    writes (its Service has no such property): a service homed marks hidden (a
    device's internal one) is in the database with "hidden": true, which
    controllers do not show."""

    __slots__ = ("hidden",)

    def __init__(self, type_id: UUID, display_name: str, unique_id: str, hidden: bool):
        super().__init__(type_id, display_name, unique_id=unique_id)
        self.hidden = hidden

    def to_HAP(self, include_value: bool = True):
        hap = super().to_HAP(include_value)
        if self.hidden:
            hap["hidden"] = True
        return hap


class HomedAccessory(Accessory):
    """One homed accessory behind the bridge, built from its AccessorySpec."""

    def __init__(self, driver, spec: hm.AccessorySpec, placement):
        self.spec = spec
        self.reachable = spec.reachable
        self.category = spec.category
        super().__init__(driver, spec.name, aid=placement.aid, iid_manager=StableIIDManager(placement.iids))
        self.chars: Dict[int, Characteristic] = {}
        self.char_specs: Dict[int, hm.CharSpec] = {}
        #: The readable characteristics homed has no value for yet (nothing
        #: reported them): a read answers No Response, not HAP-python's
        #: placeholder, which would be shown as the device's state.
        self.unreported: Set[int] = set()
        services = {}
        for s in spec.services:
            service = HomedService(UUID(s.type), s.name, s.key, s.hidden)
            if s.primary:
                service.is_primary_service = True
            for c in s.chars:
                props = {"Format": c.format, "Permissions": list(c.perms), **c.props}
                char = Characteristic(c.name, UUID(c.type), props, unique_id=c.key)
                if c.value is not None:
                    char.value = c.value     # as homed has it: no clamping (a device's value is a fact)
                elif "pr" in c.perms and c.type.upper() not in hm.EVENT_TYPES:
                    self.unreported.add(c.homed_id)
                service.add_characteristic(char)
                self.chars[c.homed_id] = char
                self.char_specs[c.homed_id] = c
            services[s.key] = service
            self.add_service(service)
        for s in spec.services:
            for key in s.linked_keys:
                if key in services:
                    services[s.key].add_linked_service(services[key])

    def add_info_service(self) -> None:
        """homed's accessories bring their own AccessoryInformation service."""

    @property
    def available(self) -> bool:
        return self.reachable

    def has_value(self, char: Characteristic) -> bool:
        """Whether homed holds a value of ``char`` (a button's press is an event,
        read as null: it always has what HAP wants)."""
        return homed_id_of(char) not in self.unreported

    def apply(self, homed_id: int, value, sender=None) -> None:
        """A value homed holds now (reported or written) to the characteristic."""
        self.unreported.discard(homed_id)
        apply_value(self.chars[homed_id], value, sender)

    def label(self, homed_id: int) -> str:
        c = self.char_specs[homed_id]
        return (f"{self.spec.name} / {c.name} (aid {self.aid}, iid {self.iid_manager.get_iid(self.chars[homed_id])}; "
                f"homed characteristic {homed_id})")


def homed_id_of(char: Characteristic) -> int:
    """The homed characteristic id a HAP characteristic stands for (its
    unique_id is "c<id>", ids.py)."""
    return int(char.unique_id[1:])


EVENT_UUIDS = {UUID(u) for u in hm.EVENT_TYPES}
ALWAYS_NULL_UUIDS = {UUID(u) for u in hm.ALWAYS_NULL}


def apply_value(char: Characteristic, value, sender=None) -> None:
    """Sets a characteristic's value and pushes it to the controllers subscribed
    to it: every time for event types (each press is an event), else when it changed."""
    if char.type_id in EVENT_UUIDS:
        char.value = value
        char.notify(sender)
        if char.type_id in ALWAYS_NULL_UUIDS:
            char.value = None
    elif char.value != value:
        char.value = value
        char.notify(sender)


