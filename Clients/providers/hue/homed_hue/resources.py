"""The bridge's resources as the provider holds them, with no I/O: the list
GET /clip/v2/resource returns, kept current by the event stream's `update`,
`add` and `delete` items (an update carries only the fields that changed,
merged into the resource)."""

from __future__ import annotations

import copy
from typing import Dict, Iterable, List, Optional, Tuple

__all__ = ["Resources", "merge", "events_of", "read_event", "wrong_types"]


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


KINDS = ("update", "add", "delete")


def read_event(payload) -> Tuple[List[Tuple[str, dict]], List[str]]:
    """One server-sent event's data (parsed JSON) as (kind, item) pairs, and
    what in it is not of the bridge's shape (each a phrase; those parts are
    left out, the rest kept)."""
    if not isinstance(payload, list):
        return [], [f"not a list of events but {_kind(payload)}"]
    out: List[Tuple[str, dict]] = []
    problems: List[str] = []
    for n, event in enumerate(payload):
        if not isinstance(event, dict):
            problems.append(f"event {n} left out: it is {_kind(event)}, not an object")
            continue
        kind = event.get("type")
        if kind not in KINDS:
            if kind != "error":  # the bridge's own errors: nothing to apply
                problems.append(f"event {n} left out: its type {kind!r} is not one of {', '.join(KINDS)}")
            continue
        if not isinstance(event.get("data"), list):
            problems.append(f"event {n} ({kind}) left out: it has no data list")
            continue
        for m, item in enumerate(event["data"]):
            if not isinstance(item, dict):
                problems.append(f"item {m} of event {n} ({kind}) left out: it is {_kind(item)}, not an object")
            elif not isinstance(item.get("id"), str) or not item["id"]:
                problems.append(f"item {m} of event {n} ({kind}) left out: it has no resource id")
            elif kind == "add" and not isinstance(item.get("type"), str):
                problems.append(f"the added resource {item['id']} left out: it has no type")
            else:
                out.append((kind, item))
    return out, problems


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def wrong_types(current: dict, change: dict, path: str = "") -> List[str]:
    """The fields of an update whose JSON type is not the one the resource
    has (`dimming.brightness` a string where it was a number), as phrases; a
    field the resource does not have yet, or null on either side (the bridge
    sends `mirek: null` in colour mode), is not wrong."""
    out: List[str] = []
    for key, value in change.items():
        name = f"{path}{key}"
        if key == "type" and not path:
            if isinstance(current.get("type"), str) and value != current["type"]:
                out.append(f"type {value!r}, but the resource is a {current['type']}")
            continue
        if key not in current or value is None or current[key] is None:
            continue
        had = current[key]
        if isinstance(had, dict) and isinstance(value, dict):
            out.extend(wrong_types(had, value, f"{name}."))
        elif _kind(had) != _kind(value):
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            out.append(f"{name} is {_kind(value)} ({shown}), not {_kind(had)}")
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
