"""HomeKit's accessory and instance ids (aid, iid), kept stable. No I/O.

HomeKit keys everything a user builds (rooms, scenes, automations) on the aid of
an accessory and the iid of each characteristic, so they must never change for
the same thing: they are allocated once per homed id and persisted (state.py
writes ``to_dict()``). Ids are never reused: counters only grow, so a removed
characteristic's iid can never come back meaning something else.

The table also says which bridge an accessory sits behind: HomeKit takes at most
150 accessories per bridge (the bridge itself and 149 behind it), so a larger
home is spread over several bridges, an accessory staying on the one it was
first placed on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List

BRIDGE_AID = 1
FIRST_AID = 2
HOMEKIT_MAX_PER_BRIDGE = 149


@dataclass(frozen=True)
class Placement:
    bridge: int
    aid: int
    iids: Dict[str, int]


class IdTable:
    def __init__(self, data: dict = None, max_per_bridge: int = HOMEKIT_MAX_PER_BRIDGE):
        data = data or {}
        self.max_per_bridge = max_per_bridge
        self._accessories: Dict[str, dict] = {k: dict(v, iids=dict(v["iids"]))
                                              for k, v in data.get("accessories", {}).items()}
        self._next_aid: Dict[str, int] = dict(data.get("next_aid", {}))
        self.changed = False

    def to_dict(self) -> dict:
        return {"version": 1, "accessories": self._accessories, "next_aid": self._next_aid}

    def place(self, specs: Iterable) -> Dict[int, Placement]:
        """Placements (bridge, aid, iid per service and characteristic key) of the
        exposed accessories, allocating what is new. ``changed`` tells whether the
        table must be saved."""
        specs = list(specs)
        load: Dict[int, int] = {}
        for spec in specs:
            entry = self._accessories.get(str(spec.homed_id))
            if entry is not None:
                load[entry["bridge"]] = load.get(entry["bridge"], 0) + 1
        placements = {}
        for spec in sorted(specs, key=lambda s: s.homed_id):
            entry = self._accessories.get(str(spec.homed_id))
            if entry is None:
                bridge = 0
                while load.get(bridge, 0) >= self.max_per_bridge:
                    bridge += 1
                load[bridge] = load.get(bridge, 0) + 1
                aid = self._next_aid.get(str(bridge), FIRST_AID)
                self._next_aid[str(bridge)] = aid + 1
                entry = {"bridge": bridge, "aid": aid, "iids": {}, "next_iid": 1}
                self._accessories[str(spec.homed_id)] = entry
                self.changed = True
            for service in spec.services:
                for key in [service.key] + [c.key for c in service.chars]:
                    if key not in entry["iids"]:
                        entry["iids"][key] = entry["next_iid"]
                        entry["next_iid"] += 1
                        self.changed = True
            placements[spec.homed_id] = Placement(entry["bridge"], entry["aid"], dict(entry["iids"]))
        return placements

    def forget_except(self, homed_ids: Iterable[int]) -> List[int]:
        """Drops the accessories homed no longer has (ids not in ``homed_ids``);
        returns their ids. Accessories that exist but are not exposed keep their
        aid, so exposing them again gives them back to HomeKit as they were."""
        keep = {str(i) for i in homed_ids}
        gone = [int(k) for k in self._accessories if k not in keep]
        for k in gone:
            del self._accessories[str(k)]
            self.changed = True
        return gone

    def bridges(self) -> List[int]:
        """Every bridge index that has, or had, an accessory (0 at least)."""
        return sorted({0} | {e["bridge"] for e in self._accessories.values()} | {int(b) for b in self._next_aid})
