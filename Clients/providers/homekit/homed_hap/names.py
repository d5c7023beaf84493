"""Names and keys as homed takes them (docs/protocol.md, "Names"): no control
characters, no "/", not digits alone, at most 64 bytes. No I/O here."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_NAME_BYTES = 64


def cut(text: str, limit: int = MAX_NAME_BYTES) -> str:
    """`text` cut to `limit` bytes of UTF-8 without splitting a character."""
    data = text.encode("utf-8")[:limit]
    return data.decode("utf-8", errors="ignore")


def clean(text: str) -> str:
    """Control characters and "/" as spaces, spaces collapsed, cut to 64 bytes."""
    text = _CONTROL.sub(" ", str(text)).replace("/", " ")
    return cut(" ".join(text.split())).strip()


def name_or(text, fallback: str) -> str:
    """A name homed accepts: `text` cleaned, else `fallback` (a name that is
    blank or digits alone is an id to homed, not a name)."""
    name = clean(text or "")
    if not name or name.isdigit():
        name = clean(f"{fallback} {name}".strip()) if name else clean(fallback)
    return name


def accessory_key(device_id: str, aid: int) -> str:
    """The provider key of an accessory: its device id (the pairing's, lower
    case, as zeroconf shows it) and its aid, both stable for as long as the
    pairing lasts."""
    return f"{device_id.lower()}/{aid}"


def service_key(iid: int) -> str:
    """A service's key: its iid, which HAP keeps stable across restarts."""
    return f"iid{iid}"


def valid_or_empty(text) -> str:
    """A name homed accepts, or "" (for a service: the accessory's name)."""
    name = clean(text or "")
    return "" if not name or name.isdigit() else name
