"""A provider's names for characteristics (``Ref``) and the tables that map
them to the daemon's ids, filled from each RegisterAccessories response.

No I/O here: the synchronous and the asyncio providers both keep one
:class:`RefTable` and feed it the responses they receive; locking, where a
driver needs it, is the driver's."""

from __future__ import annotations

from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple

from . import proto as pb

__all__ = ["Ref", "INFORMATION_SERVICE", "references", "RefTable"]

#: The service name of the daemon's AccessoryInformation service in a Ref.
INFORMATION_SERVICE = "AccessoryInformation"


class Ref(NamedTuple):
    """A characteristic as its provider names it (see ``homed.provider``)."""

    accessory_key: str
    service: str
    characteristic: str

    def __str__(self) -> str:
        return f"{self.accessory_key}/{self.service}/{self.characteristic}"


# Newer schemas tell each service's provider key; older ones only the order.
_SERVICE_HAS_KEY = "provider_key" in pb.AccessoryService.DESCRIPTOR.fields_by_name


def references(accessory, provided) -> Dict[int, Tuple[Ref, object]]:
    """{characteristic id: (Ref, pb.Characteristic)} of a registered accessory
    (``provided``: the ``pb.ProvidedAccessory`` it was registered from, or None).
    The response lists AccessoryInformation first, then the services in the
    order the provider declared them, which gives each service its key."""
    out: Dict[int, Tuple[Ref, object]] = {}
    services = list(accessory.services)
    declared = list(provided.services) if provided is not None else []
    offset = len(services) - len(declared)  # 1: AccessoryInformation first
    ranks: Dict[str, int] = {}
    key = accessory.provider_key or (provided.key if provided is not None else "")
    for index, service in enumerate(services):
        given = declared[index - offset] if offset == 1 and index >= 1 else None
        service_key = getattr(service, "provider_key", "") if _SERVICE_HAS_KEY else ""
        if service.type_name == INFORMATION_SERVICE and index == 0:
            name = INFORMATION_SERVICE
        elif service_key:
            name = service_key
        elif given is not None and given.key:
            name = given.key
        else:
            rank = ranks.get(service.type_name, 0) + 1
            ranks[service.type_name] = rank
            name = service.type_name if rank == 1 else f"{service.type_name}#{rank}"
        for characteristic in service.characteristics:
            out[characteristic.id] = (Ref(key, name, characteristic.type_name), characteristic)
    return out


class RefTable:
    """Refs and the daemon's ids, both ways, with each characteristic's format
    and registered message, and each accessory's id, as the last registration
    of each key left them."""

    def __init__(self):
        self.ids: Dict[Ref, int] = {}
        self.refs: Dict[int, Ref] = {}
        #: characteristic id -> its ``pb.Format``: how values travel (updated in place).
        self.formats: Dict[int, int] = {}
        self.characteristics: Dict[int, object] = {}
        self.accessory_ids: Dict[str, int] = {}
        self._key_ids: Dict[str, List[int]] = {}  # accessory key -> its characteristic ids

    def install(self, accessories, response, removed: Iterable[str] = ()) -> None:
        """Takes in a RegisterAccessories response: ``accessories`` are the
        ``pb.ProvidedAccessory`` messages of the request, in its order (a
        response from an older daemon names no keys: then the position does);
        ``removed`` the keys the registration removed."""
        for key in removed:
            self.forget(key)
        by_key = {a.key: a for a in accessories}
        for position, accessory in enumerate(response.accessories):
            key = accessory.provider_key or (accessories[position].key if position < len(accessories) else "")
            self.forget(key)
            self.accessory_ids[key] = accessory.id
            found = references(accessory, by_key.get(key))
            self._key_ids[key] = list(found)
            for cid, (ref, characteristic) in found.items():
                self.ids[ref] = cid
                self.refs[cid] = ref
                self.formats[cid] = characteristic.metadata.format
                self.characteristics[cid] = characteristic

    def forget(self, key: str) -> None:
        """Drops an accessory and its characteristics."""
        self.accessory_ids.pop(key, None)
        for cid in self._key_ids.pop(key, ()):
            ref = self.refs.pop(cid, None)
            if ref is not None and self.ids.get(ref) == cid:
                del self.ids[ref]
            self.formats.pop(cid, None)
            self.characteristics.pop(cid, None)

    def knows_all(self, ids: Iterable[int]) -> bool:
        return all(i in self.refs for i in ids)

    def refs_of(self, ids: Iterable[int]) -> List[Optional[Ref]]:
        """The Ref of each id, None for an id this provider did not register."""
        return [self.refs.get(i) for i in ids]

    def characteristic(self, ref) -> Optional[object]:
        cid = self.ids.get(Ref(*ref))
        return None if cid is None else self.characteristics.get(cid)

    def format_of(self, cid: int) -> int:
        return self.formats.get(cid, pb.FORMAT_UNSPECIFIED)
