"""The bridge: homed's journal into a JetStream stream, current state into a KV
bucket, remote writes by request/reply. asyncio: nats-py and homed.aio.

The stream is the bridge's only memory. At every (re)start of anything — the
bridge, homed, the NATS server — it reads the stream's last record written by
homed-nats (its journal id and sequence number) and subscribes to homed from
there (`since_seq`/`journal_id`): homed replays exactly the missing events, or
says RESYNC (a new journal) and sends a snapshot, which goes into the stream as
a resync record, snapshot pages and an end record. Every publish carries
`Nats-Msg-Id` (journal:seq; a sync record adds :record@stream position) and
`Nats-Expected-Last-Sequence` (the stream's last sequence as the bridge knows
it). Publishes are asynchronous, up to `window` records unacknowledged: each
expects the stream to end where the one before it goes, so the server stores
them only in order and a failed one takes every later one with it; any failure — a refused expectation, a lost ack, a server gone — drops
the subscription and starts again from the stream's tail, so no event is
written twice or skipped. The bucket is written
after the stream from the acknowledged records, and caught up from the stream
after a crash (its `cursor` key says how far it holds the stream).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import json
import logging
import time
from typing import Deque, Dict, List, Optional, Set, Tuple

import nats
import nats.errors
import nats.js.errors
from nats.js import api

import homed
import homed.aio
from homed import pb

from . import layout as L
from .calls import CallService
from .config import Settings, role_for
from .places import Places
from .tasks import end_all, result_within

log = logging.getLogger("homed-nats")

__all__ = ["Bridge", "connect_nats"]

ACK_TIMEOUT = 3.0  # a server gone: start again from the tail soon (a cluster elects a leader in ~2 s)
# A record in so many asks for an acknowledgement (and the last of each homed
# message): the others are proved stored by the next one's (see _Window).
ACK_EVERY = 64
WRITE_ROLES = ("user", "admin")
READ_ROLES = ("viewer", "user", "admin")


class Restart(Exception):
    """The stream and the subscription no longer agree: start again from the stream's tail."""


def _auth_words(error) -> bool:
    text = str(error).lower()
    return "authorization" in text or "authentication" in text or "permissions" in text


async def connect_nats(settings: Settings, name: str, once=None, stopping: Optional[asyncio.Event] = None):
    """Connects (trying again every 2 s, each reason said once) and stays
    connected: nats-py reconnects by itself for ever."""
    once = once or (lambda key, level, text, *args: log.log(level, text, *args))

    async def error_cb(error):
        if _auth_words(error):
            once(("nats-auth", str(error)), logging.ERROR,
                 "NATS server refused the credentials (%s): check the user file or .creds file; trying again",
                 error)
        else:
            log.debug("NATS: %s", error)

    async def disconnected_cb():
        log.warning("lost the NATS server; reconnecting")

    async def reconnected_cb():
        log.info("reconnected to the NATS server %s", nc.connected_url.netloc if nc.connected_url else "?")

    options = dict(servers=settings.servers, name=name, max_reconnect_attempts=-1, reconnect_time_wait=0.5,
                   connect_timeout=2, error_cb=error_cb, disconnected_cb=disconnected_cb,
                   reconnected_cb=reconnected_cb, ping_interval=5, max_outstanding_pings=2)
    if settings.creds_file:
        options["user_credentials"] = settings.creds_file
    if settings.username is not None:
        options["user"], options["password"] = settings.username, settings.password
    while True:
        nc = nats.NATS()
        try:
            await nc.connect(**options)
            return nc
        except Exception as error:  # noqa: BLE001 - said, then tried again
            if _auth_words(error):
                once(("nats-auth", str(error)), logging.ERROR,
                     "NATS server %s refused the credentials (%s): check the user file or .creds file; "
                     "trying again every 2 s", ", ".join(settings.servers), error)
            else:
                once(("nats-down", type(error).__name__), logging.WARNING,
                     "cannot reach the NATS server %s (%s); trying again every 2 s", ", ".join(settings.servers),
                     error or type(error).__name__)
            try:
                await nc.close()
            except Exception:  # noqa: BLE001
                pass
            if stopping is not None and stopping.is_set():
                raise
            await asyncio.sleep(2)


def _entry(make, *args) -> bytes:
    return make(*args)[1]


class _Window:
    """The records sent and not yet known stored, oldest first, at most `limit`.
    Only checkpoints ask for an acknowledgement (a reply subject): the last
    record of each homed message, every ACK_EVERY-th, and the one that fills the
    window; a checkpoint stored where it expects proves every record before it
    stored in order (each expected its predecessor's sequence and Nats-Msg-Id).
    `sent` is the stream's last sequence once all of them are stored."""

    def __init__(self, last: int, limit: int):
        self.sent = last
        self.limit = limit
        self.records: Deque[L.Record] = collections.deque()
        # (acknowledgement future, deadline, records it confirms), oldest first
        self.checkpoints: Deque[Tuple[asyncio.Future, float, int]] = collections.deque()
        self.since_checkpoint = 0
        self.last_id: Optional[str] = None  # Nats-Msg-Id of the last record sent
        self.high = 0  # the most ever in flight at once
        self._room = asyncio.Event()
        self._sending = asyncio.Event()
        self._loop = asyncio.get_running_loop()

    def full(self) -> bool:
        return len(self.records) >= self.limit

    def checkpoint_due(self, last_of_message: bool) -> bool:
        return last_of_message or self.since_checkpoint + 1 >= ACK_EVERY or len(self.records) + 1 >= self.limit

    async def room(self) -> None:
        while len(self.records) >= self.limit:
            self._room.clear()
            await self._room.wait()

    def add(self, record: L.Record, msg_id: str, future: Optional[asyncio.Future]) -> None:
        self.records.append(record)
        self.sent += 1
        self.last_id = msg_id
        self.since_checkpoint += 1
        if future is not None:
            self.checkpoints.append((future, self._loop.time() + ACK_TIMEOUT, self.since_checkpoint))
            self.since_checkpoint = 0
            self._sending.set()
        if len(self.records) > self.high:
            self.high = len(self.records)

    def head(self):
        return self.checkpoints[0] if self.checkpoints else None

    async def sending(self) -> None:
        self._sending.clear()
        if not self.checkpoints:
            await self._sending.wait()

    def confirmed(self, count: int) -> List[L.Record]:
        self.checkpoints.popleft()
        records = [self.records.popleft() for _ in range(count)]
        self._room.set()
        return records

    def abandon(self) -> None:
        for future, _, _ in self.checkpoints:
            future.cancel()
        self.checkpoints.clear()
        self.records.clear()


class _BucketDue:
    """What acknowledged records still have to put in the bucket."""

    def __init__(self):
        self.puts: Dict[str, object] = {}
        self.last: Optional[Tuple[L.Record, int]] = None  # the last acknowledged record and its stream sequence
        self.layout = False
        self.due = asyncio.Event()


class Bridge:
    def __init__(self, settings: Settings, client_name: str = "homed-nats"):
        self.settings = settings
        self.names = settings.names
        self.client_name = client_name
        self.stopping: Optional[asyncio.Event] = None
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        self.nc = None
        self.js = None
        self.kv = None
        self.last = 0  # the stream's last sequence, as far as this bridge knows
        # Where events are filed: homed's home as the last GetHome had it, and
        # where accessories that left it were (their removal goes under that room).
        self.places = Places()
        self.char_keys: Set[str] = set()  # the c.* keys in the bucket
        self.reach_keys: Set[str] = set()  # the a.* keys
        self._acks: Dict[str, asyncio.Future] = {}
        self._acks_prefix: Optional[str] = None
        self._ack_counter = 0
        self.writer: Optional[homed.aio.Client] = None
        self.writer_lock: Optional[asyncio.Lock] = None
        self.logged: Set[object] = set()
        self.types_put = False  # the catalog's value names, once per start
        self.stats = {"published": 0, "restarts": 0, "writes": 0, "denied": 0}

    # -- running ------------------------------------------------------------------

    def run(self) -> None:
        asyncio.run(self.serve())

    def stop(self) -> None:
        if self.loop is not None and self.stopping is not None:
            self.loop.call_soon_threadsafe(self.stopping.set)

    def _once(self, key, level, message, *args) -> None:
        if key in self.logged:
            return
        self.logged.add(key)
        log.log(level, message, *args)

    async def serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.stopping = asyncio.Event()
        self.writer_lock = asyncio.Lock()
        main = asyncio.ensure_future(self._main())
        stop = asyncio.ensure_future(self.stopping.wait())
        await asyncio.wait([main, stop], return_when=asyncio.FIRST_COMPLETED)
        await end_all([main, stop])
        for closing in (self.writer, self.nc):
            if closing is not None:
                try:
                    await asyncio.wait_for(closing.close(), 2)
                except Exception:  # noqa: BLE001
                    pass
        log.info("stopped")

    async def _main(self) -> None:
        s = self.settings
        log.info("homed's journal to NATS %s: stream %s (subjects %s), bucket %s, writes on %s",
                 ", ".join(s.servers), self.names.stream, ", ".join(self.names.stream_subjects), self.names.bucket,
                 self.names.write_wildcard)
        self.nc = await connect_nats(s, f"{self.client_name} ({self.names.site})", self._once, self.stopping)
        log.info("connected to the NATS server %s", self.nc.connected_url.netloc if self.nc.connected_url else "?")
        self.js = self.nc.jetstream(timeout=5)
        await self._ensure()
        await self.nc.subscribe(self.names.write_wildcard, queue="homed-nats", cb=self._on_write)
        await self.nc.subscribe(self.names.read_wildcard, queue="homed-nats", cb=self._on_read)
        await self.nc.subscribe(self.names.layout_service, queue="homed-nats", cb=self._on_layout)
        # homed's unary calls for remote sockets (homed-nats-remote): calls.py.
        await CallService(self.settings).start(self.nc)
        backoff = 0.1
        while True:
            started = time.monotonic()
            try:
                await self._follow()
            except Restart as why:
                self.stats["restarts"] += 1
                log.info("starting again from the stream's tail: %s", why)
            except homed.HomedError as error:
                self._once(("homed", error.code_name), logging.WARNING,
                           "homed: %s (%s); resuming from the stream's tail", error.message, error.code_name)
            except (nats.errors.Error, asyncio.TimeoutError, OSError) as error:
                self._once(("nats", type(error).__name__), logging.WARNING,
                           "NATS: %s; resuming from the stream's tail once it answers", error or type(error).__name__)
            except Exception:  # noqa: BLE001 - a bug must not stop the journal: said, then from the tail again
                log.exception("unexpected error; resuming from the stream's tail")
            if time.monotonic() - started > 5:
                backoff = 0.1
            await asyncio.sleep(backoff)
            backoff = min(2.0, backoff * 2)

    # -- the stream and the bucket ---------------------------------------------------

    async def _ensure(self) -> None:
        """The stream and the bucket, created when missing; one that exists with
        other settings is left alone, said, and looked at again every 5 s."""
        wanted = self.names.stream_config(replicas=self.settings.replicas)
        while True:
            try:
                problems = await self._ensure_once(wanted)
            except (nats.errors.Error, asyncio.TimeoutError) as error:
                # A cluster electing its leaders, a server restarting: soon again.
                self._once(("ensure-js", type(error).__name__), logging.WARNING,
                           "JetStream: %s (stream %s, bucket %s); trying again", error or type(error).__name__,
                           self.names.stream, self.names.bucket)
                await asyncio.sleep(1)
                continue
            if not problems:
                return
            for problem in problems:
                self._once(("ensure", problem), logging.ERROR, "%s; not changed by homed-nats: fix or delete it "
                           "(looking again every 5 s)", problem)
            await asyncio.sleep(5)

    async def _ensure_once(self, wanted: dict) -> List[str]:
        jsm = self.js
        problems = []
        try:
            info = await jsm.stream_info(self.names.stream)
            found = info.config.as_dict()
            found.setdefault("num_replicas", 1)
            if found.get("num_replicas") in (0, None):
                found["num_replicas"] = 1
            for p in L.stream_config_problems(found, wanted):
                problems.append(f"stream {self.names.stream} exists with other settings: {p}")
        except nats.js.errors.NotFoundError:
            await jsm.add_stream(api.StreamConfig(
                name=wanted["name"], subjects=wanted["subjects"], storage=api.StorageType(wanted["storage"]),
                retention=api.RetentionPolicy(wanted["retention"]), discard=api.DiscardPolicy(wanted["discard"]),
                num_replicas=wanted["num_replicas"], allow_direct=True, duplicate_window=wanted["duplicate_window"],
                description=f"homed {self.names.site}: the journal (homed-nats)"))
            log.info("created the stream %s (subjects %s, %d replica(s))", self.names.stream,
                     ", ".join(wanted["subjects"]), wanted["num_replicas"])
        try:
            self.kv = await jsm.key_value(self.names.bucket)
            info = await jsm.stream_info(f"KV_{self.names.bucket}")
            if (info.config.max_msgs_per_subject or 1) != 1:
                problems.append(f"bucket {self.names.bucket} exists with other settings: history is "
                                f"{info.config.max_msgs_per_subject}, not 1")
            if (info.config.num_replicas or 1) != self.settings.replicas:
                problems.append(f"bucket {self.names.bucket} exists with other settings: replicas is "
                                f"{info.config.num_replicas}, not {self.settings.replicas}")
        except nats.js.errors.BucketNotFoundError:
            self.kv = await jsm.create_key_value(api.KeyValueConfig(
                bucket=self.names.bucket, history=1, replicas=self.settings.replicas, storage=api.StorageType.FILE,
                description=f"homed {self.names.site}: current state (homed-nats)"))
            log.info("created the bucket %s", self.names.bucket)
        return problems

    async def _tail(self):
        """(the stream's last sequence, (journal, seq, record) of the last record
        homed-nats wrote, or None)."""
        info = await self.js.stream_info(self.names.stream)
        last, first = info.state.last_seq, info.state.first_seq
        seq = last
        while seq >= max(first, 1):
            try:
                msg = await self.js.get_msg(self.names.stream, seq)
            except nats.js.errors.NotFoundError:
                seq -= 1
                continue
            tail = L.tail_of(msg.headers)
            if tail is not None:
                return last, tail
            self._once(("foreign", seq), logging.WARNING,
                       "stream %s: message %d on %s was not written by homed-nats (no %s header, headers %s); "
                       "readers skip it", self.names.stream, seq, msg.subject, L.HDR_JOURNAL,
                       json.dumps(dict(msg.headers or {}))[:200])
            seq -= 1
        return last, None

    async def _send(self, subject: str, body: bytes, headers: Dict[str, str]) -> asyncio.Future:
        """Publishes with a reply subject of ours; the future gets the server's
        answer as a dict ({"seq", "duplicate"} or {"error"}). (nats-py's
        publish_async leaves its future unresolved when the answer is an error.)"""
        if self._acks_prefix is None:
            self._acks_prefix = self.nc.new_inbox()
            await self.nc.subscribe(f"{self._acks_prefix}.*", cb=self._on_ack)
        self._ack_counter += 1
        token = str(self._ack_counter)
        future = asyncio.get_running_loop().create_future()
        self._acks[token] = future
        future.add_done_callback(lambda _: self._acks.pop(token, None))
        await self.nc.publish(subject, body, reply=f"{self._acks_prefix}.{token}", headers=headers)
        return future

    async def _on_ack(self, msg) -> None:
        future = self._acks.get(msg.subject.rsplit(".", 1)[-1])
        if future is None or future.done():
            return
        try:
            answer = json.loads(msg.data) if msg.data else {"error": {"description": "an empty answer "
                                                                                     f"({dict(msg.headers or {})})"}}
        except ValueError:
            answer = {"error": {"description": f"an answer that is no JSON: {msg.data[:80]!r}"}}
        if not isinstance(answer, dict):
            answer = {"error": {"description": f"an unexpected answer: {msg.data[:80]!r}"}}
        future.set_result(answer)

    # -- homed → the stream -----------------------------------------------------------

    async def _load_layout(self, client) -> object:
        response = await client.get_home()
        self.places.load(response)
        return response

    async def _places_from_bucket(self) -> None:
        """At start: where the accessories were as the bucket's layout has them
        (the bridge's last), so that one removed while the bridge was away gets
        its removal published under its room when homed replays it."""
        try:
            data = json.loads((await self.kv.get("layout")).value)
            self.places.load_homes(L.homes_from_layout(data), data.get("journal", ""), data.get("seq", 0))
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            pass
        except Exception as error:  # noqa: BLE001 - a layout key it cannot read: only the removals' rooms lost
            log.warning("bucket %s: the layout key cannot be read (%s); a removal homed replays now is published "
                        "with room _", self.names.bucket, error)

    async def _follow(self) -> None:
        last, tail = await self._tail()
        self.last = last
        self.types_put = False
        await self._catch_up_bucket(last)
        client = await homed.aio.connect(self.settings.socket_path, client_name=self.client_name, call_timeout=10)
        try:
            self.logged = {k for k in self.logged if k[0] not in ("homed", "nats")}
            if not self.places.loaded:
                await self._places_from_bucket()
            await self._load_layout(client)
            request = pb.SubscribeRequest(policy=pb.SLOW_DISCONNECT, queue_limit=16384)
            snapshot_reason = None
            if tail is not None and tail[2] in (L.EVENT, L.END):
                request.since_seq, request.journal_id = tail[1], tail[0]
                log.info("resuming homed's journal %s after %d (stream %s at %d)", tail[0], tail[1],
                         self.names.stream, last)
            else:
                request.snapshot = True
                snapshot_reason = ("the stream holds no journal of homed yet" if tail is None
                                   else "the snapshot in the stream was cut short: taken again")
                log.info("%s: taking a snapshot", snapshot_reason)
            await self._pump(client, request, snapshot_reason)
        finally:
            await client.close()

    async def _pump(self, client, request, snapshot_reason) -> None:
        """homed's messages into records, published as they come, up to `window`
        of them unacknowledged (the window): the `n`th record sent since the tail
        expects the stream to end at `tail + n - 1`, so the server stores each
        only right after the one before it. Acknowledgements are taken in order
        by a task of their own, the bucket written by a third from what they
        acknowledged; the first failure of any of them ends all three and starts
        again from the stream's tail."""
        self._journal = request.journal_id
        self._snap_seq = 0
        self._snapshot_reason = snapshot_reason
        window = _Window(self.last, self.settings.window)
        bucket = _BucketDue()
        tasks = [asyncio.ensure_future(self._produce(client, request, window)),
                 asyncio.ensure_future(self._acknowledge(window, bucket)),
                 asyncio.ensure_future(self._write_bucket(client, bucket))]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            failure = next(iter(done)).exception() if done else None
        finally:
            await end_all(tasks)  # the first failure is raised below
            window.abandon()
        # What was acknowledged and not yet in the bucket: written now if the server
        # lets us, else the next start catches the bucket up from the stream.
        try:
            await asyncio.wait_for(self._flush_bucket(client, bucket), ACK_TIMEOUT * 2)
        except (Restart, nats.errors.Error, asyncio.TimeoutError, OSError, homed.HomedError):
            pass
        if failure is None:
            raise Restart("the publishing tasks ended")
        raise failure

    async def _produce(self, client, request, window: "_Window") -> None:
        async with client.subscribe(request) as stream:
            while True:
                message = await stream.get()
                if message is None:
                    raise Restart("homed ended the subscription")
                records = await self._records_of(client, message)
                last = len(records) - 1
                for i, record in enumerate(records):
                    if window.full():
                        await window.room()
                    expected = window.sent
                    headers = dict(record.headers)
                    headers[L.EXPECTED_LAST_SEQ] = str(expected)
                    if window.last_id is not None:
                        # The stream's last record must be the one sent before: a
                        # record refused (or a message of someone else's) in between
                        # and every later one is refused too, so none is ever
                        # stored after a hole.
                        headers[L.EXPECTED_LAST_MSG_ID] = window.last_id
                    if record.kind != L.EVENT:
                        # A snapshot may be taken again in the same journal (one cut short):
                        # its records are told apart by where they go.
                        headers[L.MSG_ID] += f"@{expected + 1}"
                    if window.checkpoint_due(i == last):
                        future = await self._send(record.subject, record.body, headers)
                    else:
                        future = None
                        await self.nc.publish(record.subject, record.body, headers=headers)
                    window.add(record, headers[L.MSG_ID], future)

    async def _acknowledge(self, window: "_Window", bucket: "_BucketDue") -> None:
        """The window's checkpoints in the order they were sent: each must be
        stored right after the records before it, within ACK_TIMEOUT of its
        publish; else Restart."""
        loop = asyncio.get_running_loop()
        while True:
            head = window.head()
            if head is None:
                await window.sending()
                continue
            future, deadline, count = head
            if not future.done():
                await asyncio.wait((future,), timeout=max(0.0, deadline - loop.time()))
                if not future.done():
                    record = window.records[count - 1]
                    raise Restart(f"{record.subject} ({record.journal}:{record.seq}) not acknowledged within "
                                  f"{ACK_TIMEOUT} s")
            ack = future.result()
            if "error" in ack or ack.get("duplicate") or ack.get("seq") != self.last + count:
                record = window.records[count - 1]
                if "error" in ack:
                    raise Restart(f"{record.subject} ({record.journal}:{record.seq}) refused: "
                                  f"{ack['error'].get('description')} ({ack['error'].get('err_code')})")
                raise Restart(f"{record.subject} ({record.journal}:{record.seq}) was already in the stream at "
                              f"{ack.get('seq')}")
            for record in window.confirmed(count):
                self.last += 1
                bucket.layout |= self._bucket_ops(record.kind, record.journal, self.last, record, bucket.puts)
                bucket.last = (record, self.last)
            self.stats["published"] += count
            bucket.due.set()

    async def _write_bucket(self, client, bucket: "_BucketDue") -> None:
        """The bucket made to hold what the acknowledged records say, then the
        cursor: one round at a time, each taking everything acknowledged since
        the last (a key changed many times is written once)."""
        while True:
            await bucket.due.wait()
            bucket.due.clear()
            await self._flush_bucket(client, bucket)

    async def _flush_bucket(self, client, bucket: "_BucketDue") -> None:
        if bucket.last is None:
            return
        puts, last, layout_changed = bucket.puts, bucket.last, bucket.layout
        bucket.puts, bucket.last, bucket.layout = {}, None, False
        last_record, last_seq = last
        try:
            if layout_changed and client is not None:
                await self._put_layout(client, puts, last_record.journal)
            key, value = L.cursor_entry(last_seq, last_record.journal, last_record.seq)
            await self._kv_put_all(puts)
            await self._kv_put_all({key: value})
        except BaseException:
            # Not all written (a failure, or cancelled by one): given back, under
            # what was acknowledged since (newer), so that the flush after a
            # failure writes them before a cursor that would say they are in.
            for key, value in puts.items():
                bucket.puts.setdefault(key, value)
            if bucket.last is None:
                bucket.last = last
            bucket.layout |= layout_changed
            raise

    async def _records_of(self, client, message) -> List[L.Record]:
        if message.journal_id:
            self._journal = message.journal_id
        journal = self._journal
        records: List[L.Record] = []
        kind = message.marker.kind if message.HasField("marker") else pb.MARKER_NONE
        if kind == pb.MARKER_SUBSCRIBED and self._snapshot_reason is not None:
            self._snap_seq = message.marker.seq
            records.append(L.marker_record(self.names, journal, L.RESYNC, self._snap_seq, self._snapshot_reason))
            self._snapshot_reason = None
        elif kind == pb.MARKER_RESYNC:
            log.info("homed resync (%s): journal %s; a snapshot follows in the stream", message.marker.reason,
                     journal)
            self._snap_seq = message.marker.seq
            records.append(L.marker_record(self.names, journal, L.RESYNC, self._snap_seq, message.marker.reason))
        elif kind == pb.MARKER_GAP:
            raise Restart(f"homed dropped events {message.marker.gap_from}-{message.marker.gap_to}")
        if message.snapshot:
            records += L.snapshot_records(self.names, journal, self._snap_seq, message.snapshot)
        if kind == pb.MARKER_SNAPSHOT_END:
            # From here on homed sends every change after the snapshot: what a
            # test (or an operator) waits for before changing anything.
            log.info("homed's snapshot at %d of journal %s received: the changes after it follow",
                     message.marker.seq, journal)
            records.append(L.marker_record(self.names, journal, L.END, message.marker.seq))
        if any(e.kind == pb.EVENT_LAYOUT_CHANGED for e in message.events) or \
                any(e.value.accessory_id not in self.places for e in message.events
                    if e.WhichOneof("body") == "value"):
            await self._load_layout(client)
        for event in message.events:
            records.append(L.event_record(self.names, journal, event, self.places, self.places.owners))
        return records

    # -- the bucket -------------------------------------------------------------------

    async def _kv_put_all(self, puts: Dict[str, object]) -> None:
        """Every key of `puts` (bytes, or a function that makes them: an entry is
        only made for the last of a key's changes), pipelined, all acknowledged."""
        futures = [await self._send(f"$KV.{self.names.bucket}.{key}", value if isinstance(value, bytes) else value(),
                                    {}) for key, value in puts.items()]
        try:
            for key, future in zip(puts, futures):
                answer = await result_within(future, ACK_TIMEOUT)
                if answer is None:
                    raise asyncio.TimeoutError(f"bucket {self.names.bucket}: {key} not acknowledged within "
                                               f"{ACK_TIMEOUT} s")
                if "error" in answer:
                    raise Restart(f"bucket {self.names.bucket}: {key} refused: {answer['error'].get('description')}")
        finally:
            for future in futures:
                future.cancel()
        for key in puts:
            if key.startswith("c."):
                self.char_keys.add(key)
            elif key.startswith("a."):
                self.reach_keys.add(key)

    def _bucket_ops(self, kind, journal, stream_seq, source, puts) -> bool:
        """What one stored record changes in the bucket, into `puts` (key: a
        function making the entry); `source` is the record (its event kept) or a
        decoded home.v1.SubscribeResponse. True when the layout key is due."""
        layout_changed = False
        if kind == L.EVENT:
            event = getattr(source, "event", None)
            events = (event,) if event is not None else \
                (source.events if isinstance(source, pb.SubscribeResponse)
                 else pb.SubscribeResponse.FromString(source.body).events)
            for event in events:
                body = event.WhichOneof("body")
                if body == "value":
                    v = event.value
                    puts[f"c.{v.characteristic_id}"] = functools.partial(
                        _entry, L.char_entry, v.characteristic_id, v.accessory_id, v.service_id, v.value, event.seq,
                        journal, stream_seq, event.time_ms)
                elif body == "reachability":
                    r = event.reachability
                    puts[f"a.{r.accessory_id}"] = functools.partial(
                        _entry, L.reach_entry, r.accessory_id, r.reachable, event.seq, journal, stream_seq)
                elif body == "layout":
                    layout_changed = True
            return layout_changed
        if kind == L.END:
            return True
        if kind == L.SNAPSHOT:
            response = source if isinstance(source, pb.SubscribeResponse) else \
                pb.SubscribeResponse.FromString(source.body)
            for char in response.snapshot:
                key, value = L.char_entry(char.id, char.accessory_id, char.service_id, char.value,
                                          0, journal, stream_seq, char.last_updated_ms)
                puts[key] = value
        return layout_changed

    async def _put_layout(self, client, puts: Dict[str, bytes], journal: str) -> None:
        """The layout key, and the c.* keys of characteristics no home has any more removed."""
        response = await self._load_layout(client)
        key, value = L.layout_entry(journal, response.seq, response.homes)
        puts[key] = value
        if not self.types_put:
            key, value = L.types_entry((await client.call("ListTypes", pb.ListTypesRequest())).characteristic_types)
            puts[key] = value
            self.types_put = True
        accessories = {a.id: a for home in response.homes for a in home.accessories}
        for aid, accessory in accessories.items():
            key, value = L.reach_entry(aid, accessory.reachable, response.seq, journal, self.last)
            puts[key] = value
        for stale in sorted(k for k in self.reach_keys if int(k[2:]) not in accessories):
            puts.pop(stale, None)
            try:
                await self.kv.delete(stale)
            except nats.js.errors.KeyValueError:
                pass
            self.reach_keys.discard(stale)
        present = {f"c.{i}" for i in self.places.characteristic_ids()}
        for stale in sorted(self.char_keys - present):
            puts.pop(stale, None)
            try:
                await self.kv.delete(stale)
            except nats.js.errors.KeyValueError:
                pass
            self.char_keys.discard(stale)
            log.debug("bucket %s: %s removed (no such characteristic in homed now)", self.names.bucket, stale)

    async def _catch_up_bucket(self, last: int) -> None:
        """After a crash the bucket may lag the stream: apply what it missed."""
        try:
            keys = await self.kv.keys()
        except nats.js.errors.NoKeysError:
            keys = []
        self.char_keys = {k for k in keys if k.startswith("c.")}
        self.reach_keys = {k for k in keys if k.startswith("a.") and k[2:].isdigit()}
        try:
            cursor = json.loads((await self.kv.get("cursor")).value)["stream_seq"]
        except (nats.js.errors.KeyNotFoundError, ValueError, KeyError, TypeError):
            cursor = 0
        if cursor >= last:
            return
        info = await self.js.stream_info(self.names.stream)
        seq = max(cursor + 1, info.state.first_seq)
        log.info("bucket %s holds the stream up to %d of %d: catching up", self.names.bucket, cursor, last)
        puts: Dict[str, bytes] = {}
        final = None
        while seq <= last:
            try:
                msg = await self.js.get_msg(self.names.stream, seq)
            except nats.js.errors.NotFoundError:
                seq += 1
                continue
            tail = L.tail_of(msg.headers)
            if tail is not None:
                try:
                    response = pb.SubscribeResponse.FromString(msg.data or b"")
                except Exception:  # noqa: BLE001 - a body homed-nats did not write
                    log.warning("stream %s: message %d on %s does not decode; skipped", self.names.stream, seq,
                                msg.subject)
                else:
                    self._bucket_ops(tail[2], tail[0], seq, response, puts)
                    final = (seq, tail[0], tail[1])
            seq += 1
        await self._kv_put_all(puts)
        if final is not None:
            key, value = L.cursor_entry(*final)
            await self._kv_put_all({key: value})

    # -- remote writes ----------------------------------------------------------------

    async def _reply(self, msg, code: int, body: bytes = b"", message: str = "") -> None:
        if not msg.reply:
            return
        if code != pb.OK:
            body = pb.CallStatus(code=code, message=message).SerializeToString()
        await self.nc.publish(msg.reply, body, headers={L.HDR_STATUS: str(code)})

    async def _on_write(self, msg) -> None:
        await self._on_call(msg, "WriteCharacteristics", pb.WriteCharacteristicsRequest, WRITE_ROLES, "user")

    async def _on_read(self, msg) -> None:
        await self._on_call(msg, "ReadCharacteristics", pb.ReadCharacteristicsRequest, READ_ROLES, "viewer")

    async def _on_layout(self, msg) -> None:
        """The bucket's layout and types keys, for callers of other accounts (who
        cannot read the bucket): {"layout": …, "types": …}; viewers and up."""
        try:
            info = (msg.headers or {}).get("Nats-Request-Info")
            found = json.loads(info) if info else {}
            role = role_for(self.settings.roles, found.get("acc"), found.get("user"))
            if role not in READ_ROLES:
                await self._reply(msg, pb.PERMISSION_DENIED, message=(
                    f"the layout needs the viewer role; the NATS caller {found.get('acc') or '?'}/"
                    f"{found.get('user') or '?'} has the {role} role (homed-nats [roles])"))
                return
            answer = {}
            for key in ("layout", "types"):
                try:
                    answer[key] = json.loads((await self.kv.get(key)).value)
                except nats.js.errors.KeyNotFoundError:
                    pass
            await self._reply(msg, pb.OK, json.dumps(answer, separators=(",", ":")).encode())
        except Exception as error:  # noqa: BLE001 - one bad request must not end the service
            log.exception("%s: not handled", msg.subject)
            await self._reply(msg, pb.INTERNAL, message=f"homed-nats: {error}")

    async def _on_call(self, msg, method, request_type, roles, least) -> None:
        try:
            await self._call(msg, method, request_type, roles, least)
        except Exception as error:  # noqa: BLE001 - one bad request must not end the service
            log.exception("%s: %s not handled", msg.subject, method)
            await self._reply(msg, pb.INTERNAL, message=f"homed-nats: {error}")

    async def _call(self, msg, method, request_type, roles, least) -> None:
        """A remote call of a home's characteristics: the caller's role checked,
        the ids checked against the home, then homed's answer passed on."""
        home = self.names.home_of_write(msg.subject)
        account = user = None
        info = (msg.headers or {}).get("Nats-Request-Info")
        if info:
            try:
                found = json.loads(info)
                account, user = found.get("acc"), found.get("user")
            except ValueError:
                pass
        caller = f"{account or '?'}/{user or '?'}"
        role = role_for(self.settings.roles, account, user)
        if role not in roles:
            self.stats["denied"] += 1
            text = (f"{method} needs the {least} role; the NATS caller {caller} has the {role} role "
                    f"(homed-nats [roles])")
            if not info:
                text += "; the request carried no Nats-Request-Info: callers must come from another account " \
                        "that imports the service with share: true"
            log.warning("%s: refused: %s", msg.subject, text)
            await self._reply(msg, pb.PERMISSION_DENIED, message=text)
            return
        try:
            request = request_type.FromString(msg.data)
        except Exception as error:  # noqa: BLE001
            await self._reply(msg, pb.INVALID_ARGUMENT,
                              message=f"{msg.subject}: the body is no home.v1.{request_type.DESCRIPTOR.name} ({error})")
            return
        if not self.places.has_home(home):
            await self._reply(msg, pb.NOT_FOUND, message=f"{msg.subject}: no home {msg.subject.rsplit('.', 1)[-1]} "
                                                         f"in homed {self.names.site}")
            return
        ids = [w.characteristic_id for w in request.writes] if method == "WriteCharacteristics" \
            else list(request.characteristic_ids)
        outside = self.places.characteristics_outside(home, ids)
        if outside:
            await self._reply(msg, pb.INVALID_ARGUMENT, message=f"characteristic(s) {', '.join(map(str, outside))} "
                                                                f"are not in home {home}: nothing "
                                                                f"{'written' if method == 'WriteCharacteristics' else 'read'}")
            return
        response = None
        for attempt in (1, 2):
            try:
                client = await self._writer()
                response = await client.call(method, request)
                break
            except homed.Unavailable as error:
                # homed restarted since the last call: once more on a new connection.
                await self._drop_writer()
                if attempt == 2:
                    await self._reply(msg, error.code, message=error.message)
                    return
            except homed.HomedError as error:
                await self._reply(msg, error.code, message=error.message)
                return
        self.stats["writes" if method == "WriteCharacteristics" else "reads"] = \
            self.stats.get("writes" if method == "WriteCharacteristics" else "reads", 0) + 1
        log.debug("%s: %s called %s for %d characteristic(s)", msg.subject, caller, method, len(ids))
        await self._reply(msg, pb.OK, response.SerializeToString())

    async def _writer(self):
        async with self.writer_lock:
            if self.writer is None:
                self.writer = await homed.aio.connect(self.settings.socket_path,
                                                      client_name=f"{self.client_name} writes", call_timeout=10)
            return self.writer

    async def _drop_writer(self) -> None:
        async with self.writer_lock:
            if self.writer is not None:
                try:
                    await self.writer.close()
                except Exception:  # noqa: BLE001
                    pass
                self.writer = None
