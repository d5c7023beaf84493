"""The daemon's catalog of types (ListTypes), as the mapping needs it: types
by UUID, the characteristics each service type takes. No I/O here: the
service asks the daemon and hands the response in."""

from __future__ import annotations

from typing import Dict, Optional

from homed import pb

APPLE_BASE = "-0000-1000-8000-0026BB765291"


def full_uuid(text: str) -> str:
    """A HAP type as a full upper-case UUID: "25" and "00000025" are short
    forms on Apple's base UUID."""
    text = str(text).strip().upper()
    if "-" in text:
        return text
    return text.rjust(8, "0") + APPLE_BASE


def short_uuid(uuid: str) -> str:
    """"25" for Apple's types (how HAP's JSON writes them), else the full UUID."""
    if uuid.endswith(APPLE_BASE):
        return uuid[:8].lstrip("0") or "0"
    return uuid


class Catalog:
    """The characteristic and service types the daemon knows, by UUID."""

    def __init__(self, response: "pb.ListTypesResponse"):
        self.characteristics: Dict[str, "pb.CharacteristicType"] = {
            t.uuid.upper(): t for t in response.characteristic_types}
        self.services: Dict[str, "pb.ServiceType"] = {}
        for service in response.service_types:
            # Two names may share a UUID (Speaker, TelevisionSpeaker): the first wins.
            self.services.setdefault(service.uuid.upper(), service)
        self.by_name: Dict[str, "pb.CharacteristicType"] = {t.name: t for t in response.characteristic_types}

    def characteristic(self, uuid: str) -> Optional["pb.CharacteristicType"]:
        return self.characteristics.get(full_uuid(uuid))

    def service(self, uuid: str) -> Optional["pb.ServiceType"]:
        return self.services.get(full_uuid(uuid))

    @staticmethod
    def allows(service: "pb.ServiceType", name: str) -> bool:
        return name in service.required_characteristics or name in service.optional_characteristics
