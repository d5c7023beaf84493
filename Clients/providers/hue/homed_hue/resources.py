"""The bridge's resources as the provider holds them, with no I/O: the list
GET /clip/v2/resource returns, kept current by the event stream's `update`,
`add` and `delete` items (an update carries only the fields that changed,
merged into the resource)."""

from __future__ import annotations

import copy
from typing import Dict, Iterable, List, Optional, Tuple

__all__ = ["Resources", "merge", "events_of"]


def merge(into: dict, change: dict) -> None:
    """An update's fields into a resource: objects merged key by key (an
    update of `dimming.brightness` keeps `dimming.min_dim_level`), anything
    else replaced."""
    for key, value in change.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)


def events_of(payload) -> List[Tuple[str, dict]]:
    """One server-sent event's data (a JSON list of events, each with a type
    and its `data` items) as (kind, item) pairs, in order; anything that is not
    of that shape is left out."""
    out: List[Tuple[str, dict]] = []
    if not isinstance(payload, list):
        return out
    for event in payload:
        if not isinstance(event, dict) or not isinstance(event.get("data"), list):
            continue
        kind = event.get("type")
        for item in event["data"]:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                out.append((str(kind), item))
    return out


class Resources:
    """Resources by id."""

    def __init__(self, items: Iterable[dict] = ()):
        self.by_id: Dict[str, dict] = {}
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                self.by_id[item["id"]] = copy.deepcopy(item)

    def get(self, rid: str) -> Optional[dict]:
        return self.by_id.get(rid)

    def of_type(self, rtype: str) -> List[dict]:
        return [r for r in self.by_id.values() if r.get("type") == rtype]

    def apply(self, kind: str, item: dict) -> Optional[dict]:
        """An event item applied; returns the resource as it now is (None once deleted)."""
        rid = item["id"]
        if kind == "update":
            current = self.by_id.get(rid)
            if current is None:  # an update of something not read: keep what it says
                current = self.by_id[rid] = {}
            merge(current, item)
            return current
        if kind == "add":
            self.by_id[rid] = copy.deepcopy(item)
            return self.by_id[rid]
        if kind == "delete":
            self.by_id.pop(rid, None)
        return None
