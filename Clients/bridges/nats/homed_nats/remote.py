"""homed from another machine, through NATS: a reader that takes the bucket's
snapshot and then follows the stream from the snapshot's point with no gap and
no duplicate (the socket's "snapshot then changes"), and a writer on the
request/reply service.

    async with RemoteReader(nc, Names("home"), accessory=42) as reader:
        async for item in reader:
            if item.kind == "snapshot": ...      # item.values: {characteristic id: entry dict}
            elif item.kind == "resync": ...      # a new journal: a snapshot follows
            else: ...                            # "event": item.event (home.v1.Event)

The rule (README.md, "Remote readers"): read `cursor` (stream sequence C) first,
then every `c.*` key; each entry holds at least every record up to C, perhaps
more (its `stream_seq`). Then follow the stream from C + 1 and drop a value event
whose characteristic's entry is already at or past the event's stream sequence.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
from typing import Deque, Dict, NamedTuple, Optional

import nats.errors
import nats.js.errors

import homed
from homed import pb

from . import layout as L
from .consumer import StreamConsumer

log = logging.getLogger("homed-nats.remote")

__all__ = ["RemoteReader", "Item", "remote_write", "remote_read", "read_snapshot", "read_snapshot_at"]


class Item(NamedTuple):
    kind: str                 # "snapshot", "resync" or "event"
    stream_seq: int           # where in the stream (for a snapshot: the point it holds)
    journal: str = ""
    event: object = None      # home.v1.Event, for "event"
    values: Optional[Dict[int, dict]] = None  # for "snapshot": {characteristic id: entry}
    reason: str = ""          # for "resync"
    seq: int = 0              # homed's sequence number: of the resync, or the snapshot's (its cursor's)


async def read_snapshot(js, names: L.Names, timeout: float = 10.0):
    """(C, {characteristic id: entry}): the bucket's cursor, read first, then every c.* key."""
    cursor, values = await read_snapshot_at(js, names, timeout)
    return cursor["stream_seq"], values


async def read_snapshot_at(js, names: L.Names, timeout: float = 10.0):
    """(the cursor entry {"stream_seq", "journal", "seq"}, {characteristic id: entry}).

    A cursor behind the stream's first kept record is refused and read again: the
    bucket is written after the stream acknowledges, so right after the bridge cut
    the stream short under its new snapshot the bucket may not hold that snapshot
    yet, and a reader following from such a cursor would skip records silently."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            kv = await js.key_value(names.bucket)
            cursor = json.loads((await kv.get("cursor")).value)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.BucketNotFoundError):
            if loop.time() > deadline:
                raise TimeoutError(f"bucket {names.bucket} has no cursor yet (is homed-nats running?)") from None
            await asyncio.sleep(0.1)
            continue
        behind = await _behind_the_stream(js, names, cursor["stream_seq"])
        if behind is None:
            break
        if loop.time() > deadline:
            raise TimeoutError(f"bucket {names.bucket}'s cursor {cursor['stream_seq']} is behind stream "
                               f"{names.stream}, which holds {behind[0]} to {behind[1]} "
                               f"(is homed-nats running and writing the bucket?)")
        await asyncio.sleep(0.05)
    values: Dict[int, dict] = {}
    try:
        keys = [k for k in await kv.keys() if k.startswith("c.")]  # nats-py 2.16's filters= finds nothing
    except nats.js.errors.NoKeysError:
        keys = []
    for key in keys:
        try:
            entry = json.loads((await kv.get(key)).value)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            continue  # removed meanwhile
        values[entry["id"]] = entry
    return cursor, values


async def _behind_the_stream(js, names: L.Names, cursor_seq: int):
    """None when the stream holds every record after `cursor_seq` (or none at all);
    else (first, last) of the records it holds."""
    state = (await js.stream_info(names.stream)).state
    if state.messages and state.first_seq > cursor_seq + 1:
        return state.first_seq, state.last_seq
    return None


class RemoteReader:
    """Snapshot, then every record of the stream after it that the filter
    selects (None: any), following a NATS server's restarts."""

    def __init__(self, nc, names: L.Names, home=None, room=None, accessory=None, kind=None, batch: int = 256,
                 snapshot: bool = True, start_after: Optional[int] = None):
        self.nc = nc
        self.js = nc.jetstream(timeout=5)
        self.names = names
        self.filter = names.filter(home, room, accessory, kind)
        self.batch = batch
        self.snapshot = snapshot
        self.position = start_after  # the last stream sequence handled
        self.entries: Dict[int, int] = {}  # characteristic id -> stream sequence of its value held
        self.consumer: Optional[StreamConsumer] = None
        self.foreign = 0
        self._pending: Deque[Item] = collections.deque()
        self._pages: Optional[Dict[int, dict]] = None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def close(self):
        if self.consumer is not None:
            consumer, self.consumer = self.consumer, None
            await consumer.close()

    def __aiter__(self):
        return self

    async def __anext__(self) -> Item:
        while not self._pending:
            if self.position is None:
                cursor, values = await read_snapshot_at(self.js, self.names)
                self.position = cursor["stream_seq"]
                self.entries = {cid: e["stream_seq"] for cid, e in values.items()}
                if self.snapshot:
                    return Item("snapshot", self.position, cursor.get("journal", ""), values=values,
                                seq=cursor.get("seq", 0))
            await self._fetch()
        return self._pending.popleft()

    async def _subscribe(self):
        await self.close()
        behind = await _behind_the_stream(self.js, self.names, self.position)
        if behind is not None:
            # The stream's limits removed records this reader has not seen: never a
            # silent gap — a resync, then the bucket's snapshot again.
            reason = (f"stream {self.names.stream} no longer holds records after {self.position} "
                      f"(it holds {behind[0]} to {behind[1]})")
            log.warning("%s: taking the bucket's snapshot again", reason)
            cursor, values = await read_snapshot_at(self.js, self.names)
            at, journal, homed_seq = cursor["stream_seq"], cursor.get("journal", ""), cursor.get("seq", 0)
            self._pending.append(Item("resync", at, journal, reason=reason, seq=homed_seq))
            self._pending.append(Item("snapshot", at, journal, values=values, seq=homed_seq))
            self.entries = {cid: e["stream_seq"] for cid, e in values.items()}
            self.position = at
        self.consumer = await StreamConsumer(self.nc, self.js, self.names.stream,
                                             [self.filter, self.names.sync_filter], self.position,
                                             batch=self.batch).start()

    async def _fetch(self):
        try:
            if self.consumer is None or self.consumer.broken:
                if self.consumer is not None:
                    log.debug("stream %s: %s; following again from %d", self.names.stream, self.consumer.why,
                              self.position)
                await self._subscribe()
            messages = await self.consumer.take(timeout=1.0)
        except (nats.errors.Error, asyncio.TimeoutError, OSError) as error:
            log.debug("stream %s: %s; following again from %d", self.names.stream, error, self.position)
            await self.close()
            await asyncio.sleep(0.2)
            return
        for msg in messages:
            seq = msg.metadata.sequence.stream
            if seq <= self.position:
                continue  # a consumer made again after a message it already gave
            self.position = seq
            self._take(seq, msg.headers, msg.data, msg.subject)

    def _take(self, seq, headers, data, subject):
        tail = L.tail_of(headers)
        if tail is None:
            self.foreign += 1
            log.warning("stream %s: message %d on %s was not written by homed-nats; skipped", self.names.stream,
                        seq, subject)
            return
        journal, homed_seq, record = tail
        try:
            response = pb.SubscribeResponse.FromString(data or b"")
        except Exception:  # noqa: BLE001
            log.warning("stream %s: message %d on %s does not decode; skipped", self.names.stream, seq, subject)
            return
        if record == L.RESYNC:
            self._pages = {}
            self._pending.append(Item("resync", seq, journal, reason=response.marker.reason, seq=homed_seq))
        elif record == L.SNAPSHOT:
            if self._pages is None:
                return  # the pages of a snapshot we already hold (followed from its middle)
            for char in response.snapshot:
                self._pages[char.id] = {"id": char.id, "accessory": char.accessory_id, "service": char.service_id,
                                        "value": L.value_json(char.value), "seq": 0, "journal": journal,
                                        "stream_seq": seq, "updated_ms": char.last_updated_ms}
        elif record == L.END:
            if self._pages is not None:
                self.entries = {cid: e["stream_seq"] for cid, e in self._pages.items()}
                self._pending.append(Item("snapshot", seq, journal, values=self._pages, seq=homed_seq))
                self._pages = None
        else:
            for event in response.events:
                if event.WhichOneof("body") == "value":
                    cid = event.value.characteristic_id
                    if self.entries.get(cid, 0) >= seq:
                        continue  # the snapshot holds it already
                    self.entries[cid] = seq
                self._pending.append(Item("event", seq, journal, event=event))


async def remote_write(nc, names: L.Names, home_id: int, values: dict, atomic: bool = False,
                       validate_only: bool = False, timeout: float = 10.0, condition=None):
    """WriteCharacteristics through homed-nats ({characteristic id: pb.Value};
    `condition`: the value each must hold now); the response, or the call's
    HomedError (PermissionDenied for a viewer)."""
    request = pb.WriteCharacteristicsRequest(atomic=atomic, validate_only=validate_only)
    for cid, value in values.items():
        write = request.writes.add(characteristic_id=cid, value=value)
        if condition is not None:
            write.condition.value.CopyFrom(condition)
    return await _call(nc, names.write(home_id), request, pb.WriteCharacteristicsResponse, timeout)


async def remote_read(nc, names: L.Names, home_id: int, ids, fresh: bool = False, timeout: float = 10.0):
    """ReadCharacteristics through homed-nats (homed's cache, or with `fresh`
    the accessories'); the response, or the call's HomedError."""
    request = pb.ReadCharacteristicsRequest(characteristic_ids=list(ids), fresh=fresh)
    return await _call(nc, names.read(home_id), request, pb.ReadCharacteristicsResponse, timeout)


async def _call(nc, subject: str, request, response_type, timeout: float):
    try:
        msg = await nc.request(subject, request.SerializeToString(), timeout=timeout)
    except nats.errors.NoRespondersError:
        raise homed.error_for(pb.UNAVAILABLE, f"no homed-nats serves {subject}") from None
    except nats.errors.TimeoutError:
        raise homed.error_for(pb.DEADLINE_EXCEEDED, f"no answer on {subject} within {timeout} s") from None
    code = int((msg.headers or {}).get(L.HDR_STATUS, "-1"))
    if code == pb.OK:
        return response_type.FromString(msg.data)
    if code < 0:
        raise homed.error_for(pb.INTERNAL, f"{subject}: an answer without {L.HDR_STATUS}")
    status = pb.CallStatus.FromString(msg.data)
    raise homed.error_for(status.code, status.message)
