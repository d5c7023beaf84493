"""homectl's output for people, and its YAML, for the remote command: the same
text `homectl get | set | watch` print over the socket (the originals are in
Sources/homectl/Output: Output.swift, WatchText.swift, TerminalText.swift and
Listing.swift's YAML). tests/test_nats_homectl.py holds the two side by side.
No I/O.
"""

from __future__ import annotations

import math
import time
from typing import List, Optional

from homed import pb

from . import graph as G

UNITS = {pb.UNIT_CELSIUS: " °C", pb.UNIT_PERCENTAGE: "%", pb.UNIT_ARC_DEGREES: "°", pb.UNIT_LUX: " lx",
         pb.UNIT_SECONDS: " s"}


def terminal_safe(text: str) -> str:
    """Control characters as visible text, so a name cannot drive the terminal."""
    out = []
    for ch in text:
        code = ord(ch)
        if code < 0x20 or 0x7F <= code <= 0x9F:
            out.append({"\x1b": "\\e", "\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch, f"\\x{code:02x}"))
        else:
            out.append(ch)
    return "".join(out)


def number(value: float) -> str:
    """A double as Swift's String(Double) writes it (the shortest form that reads back)."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def describe(value) -> str:
    """homed's CharacteristicValue.description: the bare value."""
    kind = value.WhichOneof("kind") if value is not None else None
    if kind is None:
        return "—"
    if kind == "bool_value":
        return "true" if value.bool_value else "false"
    if kind == "float_value":
        return number(value.float_value)
    if kind == "data_value":
        return "0x" + value.data_value.hex()
    return str(getattr(value, kind))


def display(char, value, catalog) -> str:
    """The value with its unit, or its enumerated name: "42%", "21.5 °C", "Open"."""
    if char is None:
        return describe(value) if value is not None and value.WhichOneof("kind") else "—"
    if value is None or value.WhichOneof("kind") is None:
        return "—"
    name = G.value_name(char, value, catalog)
    if name is not None:
        return name
    return describe(value) + UNITS.get(char.metadata.unit, "")


def clock(ms: int) -> str:
    """"21:07:02.370", local time."""
    whole, millis = divmod(int(ms), 1000)
    return time.strftime("%H:%M:%S", time.localtime(whole)) + f".{millis:03d}"


def table(rows: List[List[str]]) -> List[str]:
    """Left-aligned columns two spaces apart, the last one not padded."""
    rows = [[terminal_safe(c) for c in row] for row in rows]
    if not rows:
        return []
    widths = [0] * max(len(r) for r in rows)
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    return ["  ".join(cell if i == len(row) - 1 else cell.ljust(widths[i]) for i, cell in enumerate(row))
            for row in rows]


# -- watch ------------------------------------------------------------------------------------

def origin(o) -> str:
    """"  (by homectl, connection 7, uid 1000)": who made a change (never "by you":
    this command has no connection to homed of its own)."""
    uid = f", uid {o.uid}" if o.HasField("uid") else ""
    if o.kind == pb.ORIGIN_CLIENT:
        return f"  (by {o.name or 'a client'}, connection {o.connection_id}{uid})"
    if o.kind == pb.ORIGIN_PROVIDER:
        return f"  (by provider {o.name}{uid})"
    if o.kind == pb.ORIGIN_AUTOMATION:
        return "  (by automation" + (f" {o.name}" if o.name else "") + ")"
    if o.kind == pb.ORIGIN_SIMULATOR:
        return "  (by the simulator)"
    return ""


def place_of_accessory(graph: G.Graph, aid: int) -> str:
    accessory = graph.accessories.get(aid)
    if accessory is None:
        return f"accessory {aid}"
    room = graph.rooms.get(graph.accessory_room(accessory))
    return (f"{room.name}/" if room else "") + accessory.name


def place(graph: G.Graph, cid: int) -> str:
    """"Living Room/Lamp/Brightness"."""
    char = graph.characteristics.get(cid)
    if char is None:
        return f"characteristic {cid}"
    return place_of_accessory(graph, char.accessory_id) + "/" + char.type_name


def quote(text: str) -> str:
    return f'"{text}"'


def event_line(graph: G.Graph, catalog, event, layout_words) -> str:
    """One event as `homectl watch` prints it for people; `layout_words(change)` gives
    the JSON line's (object, action) words."""
    at = clock(event.time_ms)
    by = origin(event.origin)
    body = event.WhichOneof("body")
    if body == "value":
        v = event.value
        return f"{at}  {place(graph, v.characteristic_id)} = " \
               f"{display(graph.characteristics.get(v.characteristic_id), v.value, catalog)}{by}"
    if body == "reachability":
        r = event.reachability
        return f"{at}  {place_of_accessory(graph, r.accessory_id)} is " \
               f"{'reachable' if r.reachable else 'unreachable'}{by}"
    if body == "layout":
        c = event.layout
        obj, action = layout_words(c)
        name = f" {quote(c.name)}" if c.name else ""
        return f"{at}  {obj}{name} (id {c.object_id}) {action}{by}"
    if body == "primary_home_id":
        home = graph.homes.get(event.primary_home_id)
        return f"{at}  the primary home is now {quote(home.name if home else str(event.primary_home_id))}{by}"
    if body == "action_set_id":
        found = next((a for h in graph.homes.values() for a in h.action_sets if a.id == event.action_set_id), None)
        return f"{at}  scene {quote(found.name if found else str(event.action_set_id))} ran{by}"
    if body == "trigger_id":
        found = next((t for h in graph.homes.values() for t in h.triggers if t.id == event.trigger_id), None)
        return f"{at}  trigger {quote(found.name if found else str(event.trigger_id))} fired{by}"
    return f"{at}  {body}{by}"


def snapshot_line(graph: G.Graph, catalog, cid: int, value) -> str:
    return f"now           {place(graph, cid)} = {display(graph.characteristics.get(cid), value, catalog)}"


def snapshot_end(seq: int) -> str:
    return f"-- the state above is at seq {seq}; changes follow --"


def resync(reason: str) -> str:
    return f"-- resync ({reason}): a fresh snapshot follows --"


# -- YAML ------------------------------------------------------------------------------------

def _scalar(value) -> Optional[str]:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number(value) if math.isfinite(value) else ".nan"
    if isinstance(value, str):
        return _double_quoted(value)
    return None


def _double_quoted(text: str) -> str:
    """A YAML double-quoted scalar as libyaml writes one with unicode allowed."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\0\a\b\t\n\v\f\r\x1b":
            out.append("\\" + {"\0": "0", "\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f",
                               "\r": "r", "\x1b": "e"}[ch])
        elif code == 0x85:
            out.append("\\N")
        elif code == 0xA0:
            out.append("\\_")
        elif code == 0x2028:
            out.append("\\L")
        elif code == 0x2029:
            out.append("\\P")
        elif code < 0x20 or 0x7F <= code <= 0x9F or code == 0xFEFF or 0xD800 <= code <= 0xDFFF or \
                code in (0xFFFE, 0xFFFF):
            out.append(f"\\x{code:02X}" if code <= 0xFF else f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _block(value, indent: int) -> List[str]:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return [pad + "{}"]
        lines = []
        for key, item in value.items():
            scalar = _scalar(item)
            if scalar is not None or (isinstance(item, (list, dict)) and not item):
                lines.append(f"{pad}{key}: {scalar if scalar is not None else ('[]' if isinstance(item, list) else '{}')}")
            elif isinstance(item, list):
                # libyaml writes a sequence in a mapping at the key's own indentation.
                lines.append(f"{pad}{key}:")
                lines += _block(item, indent)
            else:
                lines.append(f"{pad}{key}:")
                lines += _block(item, indent + 2)
        return lines
    if isinstance(value, list):
        if not value:
            return [pad + "[]"]
        lines = []
        for item in value:
            scalar = _scalar(item)
            if scalar is not None:
                lines.append(f"{pad}- {scalar}")
                continue
            inner = _block(item, indent + 2)
            lines.append(f"{pad}- {inner[0][indent + 2:]}")
            lines += inner[1:]
        return lines
    return [pad + _scalar(value)]


def yaml(value) -> str:
    """JSON-shaped data as `homectl -o yaml` prints it (Yams, block style, strings quoted)."""
    return "\n".join(_block(value, 0))
