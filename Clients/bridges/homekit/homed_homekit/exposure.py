"""Which of homed's accessories the bridge shows to HomeKit. No I/O.

The configuration file's ``[expose]`` table (README.md):

    [expose]
    rooms = ["Living Room", "Kitchen"]     # only these rooms (absent or empty: all)
    accessories = ["Hallway/Doorbell"]     # and these, wherever they are
    exclude = ["Kitchen/Coffee Maker", 57] # never these
    exclude_providers = ["homekit"]        # the default; [] shows them

Accessories are named "Room/Name" or by homed id; names compare without regard
to case. homed's own bridge accessories (a Zigbee coordinator, say) are never
shown: HomeKit has no bridge behind a bridge; the accessories behind them are.

Accessories of the providers in ``exclude_providers`` (by default the HomeKit
provider, ``Clients/providers/homekit``, whose provider id is "homekit") are
left out unless named in ``accessories``: they are HomeKit accessories already,
so the Home app would show them twice, and a home paired with both would see
its writes go round (Home app → bridge → homed → provider → the accessory,
whose event comes back through homed to the bridge's copy).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import FrozenSet, Iterable

from homed import pb


#: The HomeKit provider's id (Clients/providers/homekit: its --provider-id default).
HOMEKIT_PROVIDER = "homekit"
KEYS = ("rooms", "accessories", "exclude", "exclude_providers")


def _names(items: Iterable) -> FrozenSet[str]:
    return frozenset(str(item).strip().casefold() for item in items or ())


@dataclass(frozen=True)
class Exposure:
    rooms: FrozenSet[str] = field(default_factory=frozenset)
    accessories: FrozenSet[str] = field(default_factory=frozenset)
    exclude: FrozenSet[str] = field(default_factory=frozenset)
    # Provider ids compared as homed has them (Accessory.provider), exactly.
    exclude_providers: FrozenSet[str] = frozenset({HOMEKIT_PROVIDER})

    @classmethod
    def from_config(cls, config: dict) -> "Exposure":
        expose = config.get("expose", {}) if config else {}
        if not isinstance(expose, dict):
            raise ValueError("expose must be a table: [expose] with rooms, accessories, exclude")
        unknown = set(expose) - set(KEYS)
        if unknown:
            raise ValueError(f"[expose] has unknown keys: {', '.join(sorted(unknown))} "
                             f"(it takes {', '.join(KEYS)})")
        for key in KEYS:
            if not isinstance(expose.get(key, []), list):
                raise ValueError(f"[expose] {key} must be a list")
        providers = expose.get("exclude_providers", [HOMEKIT_PROVIDER])
        for item in providers:
            if not isinstance(item, str) or not item.strip():
                raise ValueError(f"[expose] exclude_providers: {item!r} is not a provider id (a string such as "
                                 f"{HOMEKIT_PROVIDER!r})")
        return cls(_names(expose.get("rooms")), _names(expose.get("accessories")), _names(expose.get("exclude")),
                   frozenset(item.strip() for item in providers))

    def shows(self, accessory, room_name: str) -> bool:
        if accessory.category == pb.CATEGORY_BRIDGE:
            return False
        names = {str(accessory.id), f"{room_name}/{accessory.name}".casefold()}
        if names & self.exclude:
            return False
        if names & self.accessories:
            return True
        if self.from_excluded_provider(accessory):
            return False
        return not self.rooms or room_name.casefold() in self.rooms

    def from_excluded_provider(self, accessory) -> bool:
        return accessory.provider in self.exclude_providers
