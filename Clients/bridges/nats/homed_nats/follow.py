"""`Subscribe` on the remote socket, served from the stream and the bucket.

homed's rules (docs/notifications.md) kept on the stream's records: the first
message is SUBSCRIBED at the point after which events follow; with `snapshot`
the state comes in pages from the bucket, then SNAPSHOT_END at that point; a
resume (`since_seq`, `journal_id`) replays what follows that seq in the stream,
or answers RESYNC (the journal is another, the events are no longer held, the
seq was never issued) and a fresh snapshot. Filters follow homed's
SubscriptionScope (a union of objects, narrowed by types and kinds), looked up
in the bucket's layout.

The snapshot is exact at one stream position: the bucket's cursor C is read
first, then the `c.*` keys; an entry may be past C, so the snapshot stands at
M, the furthest entry, and the records between C and M fill in the entries they
changed. The stream is then followed from M + 1 with nothing dropped.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Callable, Dict, List, Optional, Tuple

import nats.errors
import nats.js.errors
from nats.js import api

import homed
from homed import pb

from . import layout as L
from .consumer import StreamConsumer

log = logging.getLogger("homed-nats.remote")

__all__ = ["Site", "Scope", "Layout", "Subscription"]

CALLS_CLIENT = "homed-nats calls"  # the bridge's connection for remote calls (calls.py)
OWN_WAIT = 2.0  # how long an event may wait for the answer of a write that caused it
PAGE = 256  # characteristics per snapshot page, as the bridge's records
NEVER_ISSUED_WAIT = 2.0  # a seq past the stream's tail may be on its way from the bridge


class Layout:
    """The bucket's layout, indexed for filters and snapshots."""

    def __init__(self, homes: List = ()):
        self.homes = {h.id: h for h in homes}
        self.rooms: Dict[int, int] = {}  # room -> home
        self.zones: Dict[int, set] = {}
        self.accessories: Dict[int, Tuple[int, int]] = {}  # accessory -> (home, room)
        self.services: Dict[int, object] = {}
        self.chars: Dict[int, object] = {}  # id -> Characteristic
        for home in homes:
            for room in home.rooms:
                self.rooms[room.id] = home.id
            self.rooms.setdefault(home.default_room_id, home.id)
            for zone in home.zones:
                self.zones[zone.id] = set(zone.room_ids)
            for accessory in home.accessories:
                self.accessories[accessory.id] = (home.id, accessory.room_id or home.default_room_id)
                for service in accessory.services:
                    self.services[service.id] = service
                    for char in service.characteristics:
                        self.chars[char.id] = char


class Scope:
    """homed's SubscriptionScope (Sources/HomeServer/Subscriptions/SubscriptionScope.swift)."""

    def __init__(self, f):
        self.homes, self.rooms, self.zones = set(f.home_ids), set(f.room_ids), set(f.zone_ids)
        self.accessories, self.services, self.chars = set(f.accessory_ids), set(f.service_ids), \
            set(f.characteristic_ids)
        self.service_types = {t.upper() for t in f.service_types}
        self.char_types = {t.upper() for t in f.characteristic_types}
        self.kinds = set(f.kinds)
        self.excluded: set = set()
        self.everything = not (self.homes or self.rooms or self.zones or self.accessories or self.services
                               or self.chars)

    @staticmethod
    def validate(f, layout: Layout) -> None:
        for ids, kind, table in ((f.home_ids, "home", layout.homes), (f.room_ids, "room", layout.rooms),
                                 (f.zone_ids, "zone", layout.zones), (f.accessory_ids, "accessory",
                                                                      layout.accessories),
                                 (f.service_ids, "service", layout.services),
                                 (f.characteristic_ids, "characteristic", layout.chars)):
            for i in ids:
                if i not in table:
                    raise homed.error_for(pb.NOT_FOUND, f"subscription filter names {kind} {i}, which does not exist")

    def add(self, f) -> None:
        ids = [*f.home_ids, *f.room_ids, *f.zone_ids, *f.accessory_ids, *f.service_ids, *f.characteristic_ids]
        self.excluded.difference_update(ids)
        if not self.everything:
            self.homes.update(f.home_ids)
            self.rooms.update(f.room_ids)
            self.zones.update(f.zone_ids)
            self.accessories.update(f.accessory_ids)
            self.services.update(f.service_ids)
            self.chars.update(f.characteristic_ids)
        if self.service_types:
            self.service_types.update(t.upper() for t in f.service_types)
        if self.char_types:
            self.char_types.update(t.upper() for t in f.characteristic_types)
        if self.kinds:
            self.kinds.update(f.kinds)

    def remove(self, f) -> None:
        for i in [*f.home_ids, *f.room_ids, *f.zone_ids, *f.accessory_ids, *f.service_ids, *f.characteristic_ids]:
            for s in (self.homes, self.rooms, self.zones, self.accessories, self.services, self.chars):
                s.discard(i)
            self.excluded.add(i)
        self.service_types.difference_update(t.upper() for t in f.service_types)
        self.char_types.difference_update(t.upper() for t in f.characteristic_types)
        self.kinds.difference_update(f.kinds)

    def accepts(self, kind) -> bool:
        return kind != pb.EVENT_AUDIT if not self.kinds else kind in self.kinds

    def _accessory_excluded(self, aid, layout: Layout) -> bool:
        if aid in self.excluded:
            return True
        place = layout.accessories.get(aid)
        return place is not None and (place[1] in self.excluded or place[0] in self.excluded)

    def _covers_accessory(self, aid, layout: Layout) -> bool:
        if aid in self.accessories:
            return True
        if not (self.homes or self.rooms or self.zones):
            return False
        place = layout.accessories.get(aid)
        if place is None:
            return False
        home, room = place
        return home in self.homes or room in self.rooms or any(room in layout.zones.get(z, ()) for z in self.zones)

    def covers(self, cid, sid, aid, layout: Layout) -> bool:
        if self.excluded and (cid in self.excluded or sid in self.excluded or self._accessory_excluded(aid, layout)):
            return False
        if self.char_types:
            char = layout.chars.get(cid)
            if char is None or (char.type.upper() not in self.char_types
                                and char.type_name.upper() not in self.char_types):
                return False
        if self.service_types:
            service = layout.services.get(sid)
            if service is None or (service.type.upper() not in self.service_types
                                   and service.type_name.upper() not in self.service_types):
                return False
        if self.everything:
            return True
        if cid in self.chars or sid in self.services or aid in self.accessories:
            return True
        return self._covers_accessory(aid, layout)

    def matches(self, event, layout: Layout) -> bool:
        if not self.accepts(event.kind):
            return False
        body = event.WhichOneof("body")
        if body == "value":
            v = event.value
            return self.covers(v.characteristic_id, v.service_id, v.accessory_id, layout)
        if body == "reachability":
            aid = event.reachability.accessory_id
            if self.excluded and self._accessory_excluded(aid, layout):
                return False
            return self.everything or self._covers_accessory(aid, layout)
        if body == "layout":
            c = event.layout
            if c.object_id in self.excluded:
                return False
            return (self.everything or c.home_id in self.homes or c.object_id in self.rooms
                    or c.object_id in self.accessories or c.object_id in self.services
                    or c.object_id in self.chars or c.object_id in self.zones
                    or (c.object == pb.OBJECT_ACCESSORY and self._covers_accessory(c.object_id, layout)))
        if body == "audit":
            return True
        return self.everything or bool(self.homes)


class Site:
    """One site's stream and bucket as the remote socket reads them (one NATS
    connection, shared by every subscription)."""

    def __init__(self, nc, js, names: L.Names, api_prefix: str = "$JS.API"):
        self.nc = nc
        self.js = js
        self.names = names
        self.api_prefix = api_prefix  # the JetStream API's subjects as this account reaches them
        self.kv = None
        self._layout: Optional[Layout] = None
        self._layout_seq = None

    async def bucket(self):
        if self.kv is None:
            try:
                self.kv = await self.js.key_value(self.names.bucket)
            except nats.js.errors.BucketNotFoundError:
                raise homed.error_for(pb.UNAVAILABLE, f"NATS has no bucket {self.names.bucket} yet: is homed-nats "
                                                      f"running for site {self.names.site}?") from None
        return self.kv

    async def get(self, key: str):
        kv = await self.bucket()
        try:
            return json.loads((await kv.get(key)).value)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return None

    async def layout(self, fresh: bool = False) -> Layout:
        if self._layout is None or fresh:
            data = await self.get("layout") or {}
            self._layout = Layout(L.homes_from_layout(data))
            self._layout_seq = data.get("seq")
        return self._layout

    async def record(self, position: int):
        """(tail, subject, data) of the stream's record at `position`: tail None
        for a message homed-nats did not write; None when there is none."""
        try:
            msg = await self.js.get_msg(self.names.stream, position)
        except nats.js.errors.NotFoundError:
            return None
        return L.tail_of(msg.headers), msg.subject, msg.data or b""

    async def bounds(self) -> Tuple[int, int]:
        info = await self.js.stream_info(self.names.stream)
        return info.state.first_seq, info.state.last_seq

    async def tail(self) -> Tuple[int, Optional[tuple]]:
        """(the stream's last position, the (journal, seq, record) of its last homed-nats record, or None)."""
        first, last = await self.bounds()
        position = last
        while position >= max(first, 1):
            found = await self.record(position)
            if found is not None and found[0] is not None:
                return last, found[0]
            position -= 1
        return last, None

    async def snapshot(self) -> Tuple[int, str, int, Dict[int, dict]]:
        """(M, journal, homed seq at M, {characteristic id: entry}): the bucket's state, exact at position M."""
        cursor = await self.get("cursor")
        if cursor is None:
            raise homed.error_for(pb.UNAVAILABLE, f"bucket {self.names.bucket} has no cursor yet: homed-nats has "
                                                  f"not published homed's state for site {self.names.site}")
        entries = await self._char_entries()
        at, journal, seq = cursor["stream_seq"], cursor.get("journal", ""), cursor.get("seq", 0)
        furthest = max([at] + [e.get("stream_seq", 0) for e in entries.values()])
        position = at + 1
        while position <= furthest:
            found = await self.record(position)
            if found is not None and found[0] is not None:
                (journal, seq, record), _, data = found
                if record == L.EVENT:
                    for event in pb.SubscribeResponse.FromString(data).events:
                        if event.WhichOneof("body") != "value":
                            continue
                        v = event.value
                        entry = entries.get(v.characteristic_id)
                        if entry is not None and entry.get("stream_seq", 0) < position:
                            entry.update(value=L.value_json(v.value), seq=event.seq, updated_ms=event.time_ms,
                                         stream_seq=position)
            position += 1
        return furthest, journal, seq, entries

    async def _char_entries(self) -> Dict[int, dict]:
        """Every `c.*` key of the bucket, by a pull consumer of its stream's last
        message per subject (a push consumer, as the KV's keys() makes, cannot
        deliver across accounts when the bucket is imported)."""
        await self.bucket()
        stream = f"KV_{self.names.bucket}"
        config = api.ConsumerConfig(deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT, ack_policy=api.AckPolicy.NONE,
                                    inactive_threshold=30.0, mem_storage=True)
        sub = await self.js.pull_subscribe(f"$KV.{self.names.bucket}.c.>", stream=stream, config=config)
        entries: Dict[int, dict] = {}
        try:
            info = await sub.consumer_info()
            pending = info.num_pending
            while pending > 0:
                for msg in await sub.fetch(min(pending, 1024), timeout=5):
                    pending = msg.metadata.num_pending
                    if (msg.headers or {}).get("KV-Operation") in ("DEL", "PURGE"):
                        continue
                    entry = json.loads(msg.data)
                    entries[entry["id"]] = entry
        finally:
            try:
                await sub.unsubscribe()
            except Exception:  # noqa: BLE001
                pass
        return entries

    async def position_after(self, journal: str, since: int, oldest_kept: bool = False):
        """Where a resume from `since` in `journal` continues: (stream position
        to follow after, None) or (None, why it cannot be honoured). With
        `oldest_kept` (a start in the past), events of that journal the stream no
        longer holds are no reason: it starts at the first it holds after them."""
        last, tail = await self.tail()
        if tail is None:
            raise homed.error_for(pb.UNAVAILABLE, f"stream {self.names.stream} holds no record of homed's yet")
        if tail[0] != journal:
            return None, f"journal {journal} is not the current journal ({tail[0]})"
        if since > tail[1]:
            waited = 0.0
            while since > tail[1] and waited < NEVER_ISSUED_WAIT:
                await asyncio.sleep(0.05)
                waited += 0.05
                last, tail = await self.tail()
            if since > tail[1]:
                return None, f"seq {since} was never issued (journal {journal} is at {tail[1]})"
        if since == tail[1]:
            return last, None
        first, _ = await self.bounds()
        # The first position whose record is of this journal with a seq after
        # `since`: records of earlier journals come before every record of it.
        lo, hi = first, last
        while lo < hi:
            mid = (lo + hi) // 2
            probe = mid
            found = None
            while probe <= hi:
                found = await self.record(probe)
                if found is not None and found[0] is not None:
                    break
                probe += 1
            if probe > hi:
                hi = mid
                continue
            j, s, _ = found[0]
            if j == journal and s > since:
                hi = mid
            else:
                lo = probe + 1
        found = await self.record(lo)
        if oldest_kept:
            while lo <= last and (found is None or found[0] is None or found[0][2] != L.EVENT):
                lo += 1
                found = await self.record(lo) if lo <= last else None
            return lo - 1, None
        if found is None or found[0] is None or found[0][2] != L.EVENT:
            return None, f"events after {since} are no longer held in stream {self.names.stream}"
        before = lo - 1
        while before >= first:
            prior = await self.record(before)
            if prior is not None and prior[0] is not None:
                break
            before -= 1
        if before < first:
            return None, (f"events after {since} are no longer held in stream {self.names.stream} "
                          f"(it holds from position {first})")
        return lo - 1, None

    def snapshot_chars(self, entries: Dict[int, dict], layout: Layout, scope: Scope) -> List:
        out = []
        for cid in sorted(entries):
            char = layout.chars.get(cid)
            entry = entries[cid]
            if char is None or not scope.covers(cid, char.service_id, char.accessory_id, layout):
                continue
            made = pb.Characteristic()
            made.CopyFrom(char)
            made.ClearField("value")
            value = entry.get("value") or {}
            if value:
                made.value.CopyFrom(L.value_from_json(value))
            made.last_updated_ms = entry.get("updated_ms", 0) or 0
            out.append(made)
        return out


class Subscription:
    """One Subscribe call: `await run()` sends its messages with `send`
    (an async function of a SubscribeResponse) until cancelled."""

    def __init__(self, site: Site, request, send: Callable, writes, connection_id: int, max_frame: int):
        """`writes` is the remote socket's record of its writes: `origins`
        ({seq: (connection id, client name)}) and `writes_in_flight`."""
        self.site = site
        self.request = request
        self.send = send
        self.writes = writes
        self.origins = writes.origins
        self.connection_id = connection_id
        self.max_frame = max_frame
        self.scope = Scope(request.filter)
        self.journal = ""
        self.seq = 0
        self.position = 0
        self.consumer: Optional[StreamConsumer] = None
        self._pages: Optional[list] = None
        self._pages_reason = ""
        # Set when the client cancels: nats-py may turn a task's cancellation
        # inside one of its calls (a consumer made, asked after) into its own
        # timeout, so the loop looks as well.
        self.cancelled = False

    async def _message(self, **fields) -> None:
        message = pb.SubscribeResponse(journal_id=self.journal, **fields)
        await self.send(message)

    async def _marker(self, kind, seq, reason="") -> None:
        await self._message(marker=pb.StreamMarker(kind=kind, seq=seq, reason=reason))

    async def _snapshot(self, chars: List, seq: int) -> None:
        page: List = []
        size = 0
        for char in chars:
            n = char.ByteSize() + 8
            if page and (len(page) >= PAGE or size + n > self.max_frame // 2):
                await self._message(snapshot=page)
                page, size = [], 0
            page.append(char)
            size += n
        if page:
            await self._message(snapshot=page)
        await self._marker(pb.MARKER_SNAPSHOT_END, seq)

    async def _fresh_snapshot(self, reason: Optional[str]) -> None:
        at, journal, seq, entries = await self.site.snapshot()
        layout = await self.site.layout(fresh=True)
        self.journal, self.seq, self.position = journal, seq, at
        if reason is None:
            await self._marker(pb.MARKER_SUBSCRIBED, seq)
        else:
            await self._marker(pb.MARKER_RESYNC, seq, reason)
        await self._snapshot(self.site.snapshot_chars(entries, layout, self.scope), seq)

    async def start(self) -> None:
        """Everything up to the first followed record: SUBSCRIBED, the snapshot or the resume."""
        request = self.request
        layout = await self.site.layout(fresh=True)
        Scope.validate(request.filter, layout)
        if request.HasField("since_time_ms"):
            await self._since_time(request)
        if request.heartbeat_ms and request.heartbeat_ms < 100:
            raise homed.error_for(pb.INVALID_ARGUMENT, f"heartbeat_ms {request.heartbeat_ms}: 0 (none) or at "
                                                       f"least 100")
        if request.HasField("since_seq"):
            position, why = await self.site.position_after(request.journal_id, request.since_seq,
                                                           oldest_kept=request.HasField("since_time_ms"))
            if why is None:
                self.journal, self.seq, self.position = request.journal_id, request.since_seq, position
                await self._marker(pb.MARKER_SUBSCRIBED, request.since_seq)
                return
            at, journal, seq, entries = await self.site.snapshot()
            self.journal = journal
            await self._marker(pb.MARKER_SUBSCRIBED, seq)
            layout = await self.site.layout(fresh=True)
            self.seq, self.position = seq, at
            await self._marker(pb.MARKER_RESYNC, seq, why)
            await self._snapshot(self.site.snapshot_chars(entries, layout, self.scope), seq)
            return
        if request.snapshot:
            await self._fresh_snapshot(None)
            return
        last, tail = await self.site.tail()
        if tail is None:
            raise homed.error_for(pb.UNAVAILABLE, f"stream {self.site.names.stream} holds no record of homed's yet")
        self.journal, self.seq, self.position = tail[0], tail[1], last
        await self._marker(pb.MARKER_SUBSCRIBED, tail[1])

    async def _since_time(self, request) -> None:
        """`since_time_ms` as homed takes it: a resume from the seq before homed's
        first kept event at or after that time (found by ReadHistory at the home),
        then followed in the stream like any resume."""
        if request.HasField("since_seq") or request.snapshot:
            raise homed.error_for(pb.INVALID_ARGUMENT, "since_time_ms is not taken with since_seq or snapshot")
        found = pb.ReadHistoryResponse.FromString(await self.writes.unary(
            "ReadHistory", pb.ReadHistoryRequest(since_ms=request.since_time_ms, limit=1).SerializeToString(),
            10.0))
        if found.events:
            request.since_seq = found.events[0].seq - 1
            request.journal_id = found.journal_id
        else:
            _, tail = await self.site.tail()
            if tail is None:
                raise homed.error_for(pb.UNAVAILABLE, f"stream {self.site.names.stream} holds no record of homed's "
                                                      f"yet")
            request.since_seq, request.journal_id = tail[1], tail[0]

    async def _subscribe(self) -> None:
        await self.close()
        first, last = await self.site.bounds()
        if first > self.position + 1 and last >= first:
            # The stream's limits removed records not yet sent: never a silent gap.
            await self._fresh_snapshot(f"stream {self.site.names.stream} no longer holds the records after "
                                       f"seq {self.seq} (it holds positions {first} to {last})")
        names = self.site.names
        self.consumer = await StreamConsumer(self.site.nc, self.site.js, names.stream, list(names.stream_subjects),
                                             self.position, batch=256, api_prefix=self.site.api_prefix).start()

    async def close(self) -> None:
        if self.consumer is not None:
            consumer, self.consumer = self.consumer, None
            await consumer.close()

    async def follow(self) -> None:
        """Sends every record after the start point that the scope selects, for ever."""
        heartbeat = self.request.heartbeat_ms / 1000 if self.request.heartbeat_ms else None
        quiet = 0.0
        while True:
            if self.cancelled:
                raise asyncio.CancelledError()
            wait = min(1.0, heartbeat or 1.0)
            try:
                if self.consumer is None or self.consumer.broken:
                    if self.consumer is not None:
                        log.debug("stream %s: %s; following again after position %d", self.site.names.stream,
                                  self.consumer.why, self.position)
                    await self._subscribe()
                messages = await self.consumer.take(timeout=wait)
            except (nats.errors.Error, asyncio.TimeoutError, OSError) as error:
                log.debug("stream %s: %s; following again after position %d", self.site.names.stream, error,
                          self.position)
                await self.close()
                await asyncio.sleep(0.2)
                continue
            if not messages:
                if self.consumer is not None and not self.consumer.broken:
                    quiet += wait
                    if heartbeat and quiet >= heartbeat:
                        await self._marker(pb.MARKER_HEARTBEAT, self.seq)
                        quiet = 0.0
                continue
            for msg in messages:
                position = msg.metadata.sequence.stream
                if position <= self.position:
                    continue  # a consumer made again after a message it already gave
                self.position = position
                if await self._take(msg.headers, msg.data or b""):
                    quiet = 0.0

    async def _own(self, seq: int):
        loop = asyncio.get_running_loop()
        deadline = loop.time() + OWN_WAIT
        while seq not in self.origins and self.writes.writes_in_flight and loop.time() < deadline:
            await asyncio.sleep(0.002)
        return self.origins.get(seq)

    async def _take(self, headers, data) -> bool:
        tail = L.tail_of(headers)
        if tail is None:
            return False  # a message homed-nats did not write
        journal, seq, record = tail
        try:
            response = pb.SubscribeResponse.FromString(data)
        except Exception:  # noqa: BLE001 - a body that does not decode is no record of homed's
            return False
        if record == L.RESYNC:
            self._pages, self._pages_reason = [], response.marker.reason
            self.journal = journal
            return False
        if record == L.SNAPSHOT:
            if self._pages is not None:
                self._pages.extend(response.snapshot)
            return False
        if record == L.END:
            if self._pages is None:
                return False  # the end of a snapshot this subscription did not follow from its start
            layout = await self.site.layout(fresh=True)
            pages, self._pages = self._pages, None
            self.journal, self.seq = journal, seq
            await self._marker(pb.MARKER_RESYNC, seq, self._pages_reason or "a new journal")
            chars = [c for c in pages if self.scope.covers(c.id, c.service_id, c.accessory_id, layout)]
            await self._snapshot(chars, seq)
            return True
        layout = await self.site.layout()
        if any(e.kind == pb.EVENT_LAYOUT_CHANGED for e in response.events) or any(
                e.value.characteristic_id not in layout.chars for e in response.events
                if e.WhichOneof("body") == "value"):
            layout = await self.site.layout(fresh=True)
        events = []
        for event in response.events:
            if not self.scope.matches(event, layout):
                continue
            own = None
            if event.origin.kind == pb.ORIGIN_CLIENT and event.origin.name.startswith(CALLS_CLIENT):
                own = self.origins.get(event.seq)
                if own is None and self.writes.writes_in_flight:
                    # The event may be one of a write of this socket whose answer is
                    # still on its way: its origin is known once the answer is in.
                    own = await self._own(event.seq)
            if own is not None:
                if own[0] == self.connection_id and self.request.exclude_own:
                    continue
                event.origin.connection_id, event.origin.name = own
            events.append(event)
        self.journal = journal
        if response.events:
            self.seq = max(self.seq, response.events[-1].seq)
        if events:
            await self._message(events=events)
            return True
        return False
