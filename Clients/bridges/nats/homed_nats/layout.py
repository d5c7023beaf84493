"""Where homed's journal lives on NATS, and in what form: subjects, the stream
and bucket names and settings, the headers of each record, the KV keys and
their JSON. Values only: no I/O (tests/test_nats_layout.py runs without a
server).

One site (one homed) owns:

    stream  HOMED_<site>   subjects homed.<site>.journal.>
      homed.<site>.journal.ev.<home>.<room>.<accessory>.<kind>   one event
      homed.<site>.journal.sync.resync                           a new journal (or the first start)
      homed.<site>.journal.sync.snapshot                         a page of current values
      homed.<site>.journal.sync.end                              the snapshot is complete
    bucket  homed_<site>   (KV: stream KV_homed_<site>)
      c.<characteristic id>   {"id", "accessory", "service", "value", "seq", "journal", "stream_seq", "updated_ms"}
                              (readable characteristics: a write-only one holds no value)
      a.<accessory id>        {"id", "reachable", "seq", "journal", "stream_seq"}
      layout                  {"journal", "seq", "homes": [Home as protobuf JSON]}
      types                   {type uuid: {number: name}}: the catalog's names of enumerated values
      cursor                  {"stream_seq", "journal", "seq"}: every record up to stream_seq is in the bucket
    service homed.<site>.write.<home id>   request/reply: WriteCharacteristicsRequest → WriteCharacteristicsResponse
    service homed.<site>.read.<home id>    request/reply: ReadCharacteristicsRequest → ReadCharacteristicsResponse

Every record's body is one serialized `home.v1.SubscribeResponse`, as the socket
sends it: one event, a marker (RESYNC, SNAPSHOT_END) or a page of the snapshot.
`_` stands for a token that does not apply (an event of no accessory).
"""

from __future__ import annotations

import json
import re
from typing import Dict, Iterable, List, Optional, Tuple

from google.protobuf import json_format

from homed import pb

__all__ = [
    "Names", "SITE", "KIND_TOKENS", "HDR_JOURNAL", "HDR_SEQ", "HDR_RECORD", "HDR_KIND", "HDR_STATUS",
    "Record", "event_record", "marker_record", "snapshot_records", "tail_of", "char_entry", "reach_entry",
    "layout_entry", "cursor_entry", "stream_config_problems", "value_json", "value_from_json", "home_of",
]

SITE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
HDR_JOURNAL, HDR_SEQ, HDR_RECORD, HDR_KIND = "Homed-Journal", "Homed-Seq", "Homed-Record", "Homed-Kind"
HDR_STATUS, HDR_MESSAGE = "Homed-Status", "Homed-Message"
MSG_ID, EXPECTED_LAST_SEQ = "Nats-Msg-Id", "Nats-Expected-Last-Sequence"
EXPECTED_LAST_MSG_ID = "Nats-Expected-Last-Msg-Id"
NONE = "_"

KIND_TOKENS = {
    pb.EVENT_VALUE_CHANGED: "value", pb.EVENT_REACHABILITY_CHANGED: "reachability",
    pb.EVENT_LAYOUT_CHANGED: "layout", pb.EVENT_PRIMARY_HOME_CHANGED: "primary",
    pb.EVENT_ACTION_SET_EXECUTED: "scene", pb.EVENT_TRIGGER_FIRED: "trigger",
}

#: The records of the journal ("Homed-Record" header).
EVENT, RESYNC, SNAPSHOT, END = "event", "resync", "snapshot", "end"
SNAPSHOT_PAGE = 256  # characteristics per snapshot record (far below NATS's 1 MB payload)


class Names:
    """The names of one site's stream, bucket and subjects."""

    def __init__(self, site: str, prefix: str = "homed"):
        if not SITE.match(site):
            raise ValueError(f"site {site!r}: use 1 to 64 letters, digits, '_' or '-' (it is a subject token "
                             f"and part of the stream's name)")
        if not prefix or not all(SITE.match(t) for t in prefix.split(".")):
            raise ValueError(f"subject prefix {prefix!r}: tokens of letters, digits, '_' or '-' separated by '.'")
        self.site, self.prefix = site, prefix
        self.stream = f"HOMED_{site}"
        self.bucket = f"homed_{site}"
        self.journal = f"{prefix}.{site}.journal"
        self.stream_subjects = [f"{self.journal}.>"]
        self.write_wildcard = f"{prefix}.{site}.write.*"
        self.read_wildcard = f"{prefix}.{site}.read.*"
        self.layout_service = f"{prefix}.{site}.layout"

    def event(self, home, room, accessory, kind: str) -> str:
        return f"{self.journal}.ev.{_tok(home)}.{_tok(room)}.{_tok(accessory)}.{kind}"

    def sync(self, record: str) -> str:
        return f"{self.journal}.sync.{record}"

    def write(self, home_id: int) -> str:
        return f"{self.prefix}.{self.site}.write.{home_id}"

    def read(self, home_id: int) -> str:
        return f"{self.prefix}.{self.site}.read.{home_id}"

    def home_of_write(self, subject: str) -> Optional[int]:
        last = subject.rsplit(".", 1)[-1]
        return int(last) if last.isdigit() else None

    def filter(self, home=None, room=None, accessory=None, kind=None) -> str:
        """A subject filter over events: None is any (`*`)."""
        return self.event("*" if home is None else home, "*" if room is None else room,
                          "*" if accessory is None else accessory, "*" if kind is None else kind)

    @property
    def sync_filter(self) -> str:
        return f"{self.journal}.sync.>"

    def stream_config(self, replicas: int = 1) -> dict:
        return {"name": self.stream, "subjects": list(self.stream_subjects), "storage": "file",
                "retention": "limits", "discard": "old", "num_replicas": replicas, "allow_direct": True,
                "duplicate_window": 120.0}


def _tok(value) -> str:
    if value is None or value == 0:
        return NONE
    return str(value)


def stream_config_problems(found: dict, wanted: dict) -> List[str]:
    """What differs, in a stream that exists, from what the bridge needs (the
    subjects, storage, retention, replicas): each a phrase naming the setting
    and both values. Other settings (limits, descriptions) are the operator's."""
    problems = []
    for key in ("subjects", "storage", "retention", "num_replicas"):
        have, want = found.get(key), wanted.get(key)
        if key == "subjects":
            have, want = sorted(have or []), sorted(want or [])
        if have != want:
            problems.append(f"{key} is {have!r}, not {want!r}")
    return problems


class Record:
    """One message for the stream: subject, headers (without the expected last
    sequence, set when it is sent) and body."""

    __slots__ = ("subject", "headers", "body", "kind", "seq", "journal", "event")

    def __init__(self, subject: str, headers: Dict[str, str], body: bytes, kind: str, seq: int, journal: str,
                 event=None):
        self.subject, self.headers, self.body = subject, headers, body
        self.kind, self.seq, self.journal = kind, seq, journal
        # The event an event record carries (home.v1.Event), kept so that the
        # bucket is written from it without decoding the body again.
        self.event = event

    def __repr__(self):
        return f"Record({self.subject}, {self.kind}, {self.journal}:{self.seq})"


def _headers(journal: str, seq: int, record: str, msg_id: str, kind: Optional[str] = None) -> Dict[str, str]:
    headers = {MSG_ID: msg_id, HDR_JOURNAL: journal, HDR_SEQ: str(seq), HDR_RECORD: record}
    if kind:
        headers[HDR_KIND] = kind
    return headers


def home_of(event, places: Dict[int, Tuple[int, int]], homes_of: Dict[Tuple[str, int], int]):
    """(home, room, accessory) of an event: from the accessory's place
    ({accessory id: (home id, room id)}) or what the event names itself."""
    body = event.WhichOneof("body")
    if body == "value":
        aid = event.value.accessory_id
        home, room = places.get(aid, (0, 0))
        return home, room, aid
    if body == "reachability":
        aid = event.reachability.accessory_id
        home, room = places.get(aid, (0, 0))
        return home, room, aid
    if body == "layout":
        change = event.layout
        accessory = change.object_id if change.object == pb.OBJECT_ACCESSORY else 0
        room = change.object_id if change.object == pb.OBJECT_ROOM else 0
        if change.object == pb.OBJECT_ACCESSORY:
            # Added, renamed, removed: the room it is (or was last) in, so that a
            # reader filtered to the room learns of it; moved: where it went.
            room = change.parent_id if change.action == pb.LAYOUT_MOVED else places.get(accessory, (0, 0))[1]
        return change.home_id, room, accessory
    if body == "primary_home_id":
        return event.primary_home_id, 0, 0
    if body == "action_set_id":
        return homes_of.get(("scene", event.action_set_id), 0), 0, 0
    if body == "trigger_id":
        return homes_of.get(("trigger", event.trigger_id), 0), 0, 0
    return 0, 0, 0


def event_record(names: Names, journal: str, event, places, homes_of) -> Record:
    home, room, accessory = home_of(event, places, homes_of)
    kind = KIND_TOKENS.get(event.kind, "other")
    body = pb.SubscribeResponse(journal_id=journal, events=[event]).SerializeToString()
    return Record(names.event(home, room, accessory, kind),
                  _headers(journal, event.seq, EVENT, f"{journal}:{event.seq}", kind), body, EVENT, event.seq,
                  journal, event)


def marker_record(names: Names, journal: str, kind: str, seq: int, reason: str = "") -> Record:
    """The RESYNC (a new journal, a snapshot follows) or SNAPSHOT_END record."""
    marker = pb.StreamMarker(kind=pb.MARKER_RESYNC if kind == RESYNC else pb.MARKER_SNAPSHOT_END, seq=seq,
                             reason=reason)
    body = pb.SubscribeResponse(journal_id=journal, marker=marker).SerializeToString()
    return Record(names.sync(kind), _headers(journal, seq, kind, f"{journal}:{seq}:{kind}"), body, kind, seq,
                  journal)


def snapshot_records(names: Names, journal: str, seq: int, chars: Iterable) -> List[Record]:
    chars = list(chars)
    records = []
    for start in range(0, len(chars), SNAPSHOT_PAGE):
        body = pb.SubscribeResponse(journal_id=journal, snapshot=chars[start:start + SNAPSHOT_PAGE])
        # Nats-Msg-Id <journal>:<seq>:snapshot, as every sync record's
        # <journal>:<seq>:<record>; the publish adds @<stream position>, which
        # tells the pages (and a snapshot taken again) apart.
        records.append(Record(names.sync(SNAPSHOT), _headers(journal, seq, SNAPSHOT, f"{journal}:{seq}:{SNAPSHOT}"),
                              body.SerializeToString(), SNAPSHOT, seq, journal))
    return records


def tail_of(headers: Optional[Dict[str, str]]):
    """(journal, seq, record) of a stored message, or None when homed did not
    write it (no journal header, or a sequence that is no number)."""
    headers = headers or {}
    journal, seq, record = headers.get(HDR_JOURNAL), headers.get(HDR_SEQ), headers.get(HDR_RECORD)
    if not journal or not seq or not seq.isdigit() or record not in (EVENT, RESYNC, SNAPSHOT, END):
        return None
    return journal, int(seq), record


# -- the bucket ---------------------------------------------------------------------

def value_json(value) -> dict:
    return json_format.MessageToDict(value, preserving_proto_field_name=True)


def value_from_json(data: dict):
    return json_format.ParseDict(data, pb.Value())


def _dump(entry: dict) -> bytes:
    return json.dumps(entry, separators=(",", ":"), sort_keys=True).encode()


def char_entry(char_id: int, accessory: int, service: int, value, seq: int, journal: str, stream_seq: int,
               updated_ms: int) -> Tuple[str, bytes]:
    return f"c.{char_id}", _dump({"id": char_id, "accessory": accessory, "service": service,
                                  "value": value_json(value), "seq": seq, "journal": journal,
                                  "stream_seq": stream_seq, "updated_ms": updated_ms})


def reach_entry(accessory: int, reachable: bool, seq: int, journal: str, stream_seq: int) -> Tuple[str, bytes]:
    return f"a.{accessory}", _dump({"id": accessory, "reachable": reachable, "seq": seq, "journal": journal,
                                    "stream_seq": stream_seq})


def layout_entry(journal: str, seq: int, homes) -> Tuple[str, bytes]:
    return "layout", _dump({"journal": journal, "seq": seq,
                            "homes": [json_format.MessageToDict(h, preserving_proto_field_name=True) for h in homes]})


def types_entry(characteristic_types) -> Tuple[str, bytes]:
    """The catalog's names of enumerated values ({type uuid: {number: name}}), from
    ListTypes: what a remote reader needs to name a value as homectl does."""
    return "types", _dump({t.uuid: {str(v.value): v.name for v in t.valid_values}
                           for t in characteristic_types if t.valid_values})


def cursor_entry(stream_seq: int, journal: str, seq: int) -> Tuple[str, bytes]:
    return "cursor", _dump({"stream_seq": stream_seq, "journal": journal, "seq": seq})


def homes_from_layout(data: dict) -> list:
    """The homes of a `layout` key's JSON (layout_entry), as home.v1.Home."""
    return [json_format.ParseDict(h, pb.Home(), ignore_unknown_fields=True) for h in data.get("homes", [])]
