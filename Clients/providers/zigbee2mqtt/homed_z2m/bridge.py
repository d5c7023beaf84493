"""Zigbee2MQTT's topics and payloads, parsed and checked, with no I/O.

Under the base topic (`zigbee2mqtt`): `bridge/devices` (retained: every
device, with its definition), `bridge/state` (`{"state": "online"}`, or plain
`online` from older versions), `<friendly name>` (the device's state, JSON),
`<friendly name>/availability` (the same two forms), and our own
`<friendly name>/set` and `/get`, which come back to a subscriber of `#`.
Friendly names may hold '/', so a topic is matched against the names known.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional, Tuple

__all__ = ["Topic", "classify", "parse_json", "online_of"]


class Topic:
    DEVICES = "devices"
    BRIDGE_STATE = "bridge_state"
    BRIDGE_OTHER = "bridge_other"
    STATE = "state"
    AVAILABILITY = "availability"
    OWN = "own"  # a /set or /get (ours or another client's)
    UNKNOWN = "unknown"


def classify(base: str, topic: str, names: Iterable[str]) -> Tuple[str, str]:
    """(kind, friendly name or the rest of the topic)."""
    prefix = base + "/"
    if not topic.startswith(prefix):
        return Topic.UNKNOWN, topic
    rest = topic[len(prefix):]
    if rest == "bridge/devices":
        return Topic.DEVICES, ""
    if rest == "bridge/state":
        return Topic.BRIDGE_STATE, ""
    names = set(names)
    if rest in names:
        return Topic.STATE, rest
    for suffix, kind in (("/availability", Topic.AVAILABILITY), ("/set", Topic.OWN), ("/get", Topic.OWN)):
        if rest.endswith(suffix) and rest[:-len(suffix)] in names:
            return kind, rest[:-len(suffix)]
    if rest.startswith("bridge/"):
        return Topic.BRIDGE_OTHER, rest
    if rest.endswith(("/set", "/get")) or "/set/" in rest or "/get/" in rest:
        return Topic.OWN, rest
    if rest.endswith("/availability"):
        return Topic.AVAILABILITY, rest[:-len("/availability")]
    return Topic.STATE, rest  # a state for a device we do not know: the caller says so


def parse_json(payload: bytes) -> Tuple[Any, Optional[str]]:
    """(value, None), or (None, why it is not JSON)."""
    try:
        return json.loads(payload.decode("utf-8")), None
    except UnicodeDecodeError as error:
        return None, f"not UTF-8 ({error.reason} at byte {error.start})"
    except ValueError as error:
        return None, f"not JSON ({error})"


def online_of(payload: bytes) -> Optional[bool]:
    """An availability or bridge state: True online, False offline, None neither."""
    text = payload.decode("utf-8", errors="replace").strip()
    value: Any = text
    if text.startswith("{"):
        parsed, _ = parse_json(payload)
        value = parsed.get("state") if isinstance(parsed, dict) else None
    if value == "online":
        return True
    if value == "offline":
        return False
    return None
