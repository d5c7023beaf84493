"""Where the bridge files each event, from the Python client's replica of the
home (``homed.home.Home``): an accessory's home and room, a scene's or a
trigger's home, and which characteristics a home has. No I/O.

The replica is loaded from GetHome at every start and after every layout
change, as the bridge does not need values to file events: it is not fed the
events themselves (they would cost the hot path and change nothing here)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Dict, Iterable, List, Optional, Tuple

from homed import pb
from homed.home import Home

__all__ = ["Places"]

#: Accessories no longer in homed whose last place is kept (their removal,
#: replayed after a restart, is filed under the room they were in).
FORMER_PLACES = 4096

NOWHERE = (0, 0)


class Places:
    """A mapping-like view for ``layout.home_of``: ``get(accessory id)`` is its
    (home, room), and :attr:`owners` ``get(("scene" | "trigger", id))`` its home."""

    def __init__(self) -> None:
        self.home = Home()
        # (home, room) of every accessory, from the replica at its last load:
        # looked up for every event, so not walked through the replica each time.
        self._where: Dict[int, Tuple[int, int]] = {}
        # (home, room) of accessories that left the layout, oldest first.
        self.former: "OrderedDict[int, Tuple[int, int]]" = OrderedDict()
        self.owners = _Owners(self.home)

    @property
    def loaded(self) -> bool:
        return self.home.loaded

    def load(self, response) -> None:
        """A whole GetHomeResponse, every home (``client.get_home()``). The
        accessories it no longer has keep their last place in :attr:`former`."""
        before = self._where
        self.home.load(response)
        self._where = {aid: self._place_in_replica(aid) for aid in self.home.accessories}
        for aid, place in before.items():
            if aid not in self.home.accessories:
                self.former[aid] = place
                self.former.move_to_end(aid)
        for aid in [aid for aid in self.former if aid in self.home.accessories]:
            del self.former[aid]  # back again: the replica says where
        while len(self.former) > FORMER_PLACES:
            self.former.popitem(last=False)

    def load_homes(self, homes: Iterable, journal: str = "", seq: int = 0) -> None:
        """Homes as the bucket's layout key kept them (the bridge's last start)."""
        self.load(pb.GetHomeResponse(homes=list(homes), journal_id=journal, seq=seq))

    def get(self, aid: int, default: Tuple[int, int] = NOWHERE) -> Tuple[int, int]:
        place = self._where.get(aid)
        return place if place is not None else self.former.get(aid, default)

    def _place_in_replica(self, aid: int) -> Tuple[int, int]:
        home = self.home.home_of(aid)
        room = self.home.room_of(aid)
        return (home.id if home is not None else 0, room.id if room is not None else 0)

    def __contains__(self, aid: int) -> bool:
        return aid in self.home.accessories

    def has_home(self, home_id: Optional[int]) -> bool:
        return home_id is not None and home_id in self.home.homes

    def characteristics_outside(self, home_id: int, ids: Iterable[int]) -> List[int]:
        """The ids that are no characteristic of that home."""
        chars = self.home.characteristics
        outside = []
        for cid in ids:
            home = self.home.home_of(cid) if cid in chars else None
            if home is None or home.id != home_id:
                outside.append(cid)
        return outside

    def characteristic_ids(self) -> Iterable[int]:
        return self.home.characteristics.keys()


class _Owners:
    """``get(("scene" | "trigger", id), default)``: the home of an action set or a trigger."""

    def __init__(self, home: Home) -> None:
        self._home = home

    def get(self, key: Tuple[str, int], default: int = 0) -> int:
        kind, oid = key
        table = self._home.action_sets if kind == "scene" else self._home.triggers
        if oid not in table:
            return default
        home = self._home.home_of(oid)
        return home.id if home is not None else default
