"""Which of homed's accessories the bridge shows to HomeKit. No I/O.

The configuration file's ``[expose]`` table (README.md):

    [expose]
    rooms = ["Living Room", "Kitchen"]     # only these rooms (absent or empty: all)
    accessories = ["Hallway/Doorbell"]     # and these, wherever they are
    exclude = ["Kitchen/Coffee Maker", 57] # never these

Accessories are named "Room/Name" or by homed id; names compare without regard
to case. homed's own bridge accessories (a Zigbee coordinator, say) are never
shown: HomeKit has no bridge behind a bridge; the accessories behind them are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import FrozenSet, Iterable

from homed import pb


def _names(items: Iterable) -> FrozenSet[str]:
    return frozenset(str(item).strip().casefold() for item in items or ())


@dataclass(frozen=True)
class Exposure:
    rooms: FrozenSet[str] = field(default_factory=frozenset)
    accessories: FrozenSet[str] = field(default_factory=frozenset)
    exclude: FrozenSet[str] = field(default_factory=frozenset)

    @classmethod
    def from_config(cls, config: dict) -> "Exposure":
        expose = config.get("expose", {}) if config else {}
        if not isinstance(expose, dict):
            raise ValueError("expose must be a table: [expose] with rooms, accessories, exclude")
        unknown = set(expose) - {"rooms", "accessories", "exclude"}
        if unknown:
            raise ValueError(f"[expose] has unknown keys: {', '.join(sorted(unknown))} "
                             "(it takes rooms, accessories, exclude)")
        for key in ("rooms", "accessories", "exclude"):
            if not isinstance(expose.get(key, []), list):
                raise ValueError(f"[expose] {key} must be a list")
        return cls(_names(expose.get("rooms")), _names(expose.get("accessories")), _names(expose.get("exclude")))

    def shows(self, accessory, room_name: str) -> bool:
        if accessory.category == pb.CATEGORY_BRIDGE:
            return False
        names = {str(accessory.id), f"{room_name}/{accessory.name}".casefold()}
        if names & self.exclude:
            return False
        if names & self.accessories:
            return True
        return not self.rooms or room_name.casefold() in self.rooms
