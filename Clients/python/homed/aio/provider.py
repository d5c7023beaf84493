"""Accessory providers for asyncio: :class:`homed.provider.Provider`'s protocol
and semantics, with coroutines.

    from homed.aio import Provider
    from homed.provider import Ref

    async def on_write(values, atomic):     # {Ref: value} -> None | {Ref: error}
        for ref, value in values.items():
            await device.set(ref.characteristic, value)

    async def main():
        async with Provider("desk", [LAMP], on_read=on_read, on_write=on_write) as provider:
            await provider.wait_registered(timeout=10)
            await provider.report({Ref("lamp-1", "Lightbulb", "On"): True})
            await asyncio.Event().wait()       # serve until cancelled

Everything the synchronous provider's docstring says of references, values,
errors, reconnecting and registering holds here too: the same Ref names, the
same value conversions (``to_value``/``from_value``), the same handler errors
(``status_of``), ``known_keys`` from each ``opened``, and keys removed while
disconnected removed at the next registration if the daemon knows them.

**Tasks.** One task reads the command stream and answers liveness pings at
once; each read and write runs its handler in a task of its own, so a slow
device never makes the provider look dead, and handlers may run concurrently
with each other and with :meth:`Provider.report`. Handlers may be coroutine
functions or plain functions (a plain one runs on the event loop: keep it
quick). :meth:`Provider.stop` cancels the handlers still running.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import logging
import time
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set

from .. import answers
from .. import proto as pb
from ..errors import DeadlineExceeded, HomedError, Internal, InvalidArgument, NotFound, Unavailable, error_for
from ..provider import (
    _PERMANENT, MAX_ACCESSORIES_PER_CALL, Ref, _references, _set_status, _without_values, accessory_message,
    to_value,
)
from .client import Client
from .stream import Stream

__all__ = ["Provider"]

log = logging.getLogger("homed.aio.provider")


async def _maybe_await(value):
    return await value if inspect.isawaitable(value) else value


class _Session:
    """One connection's command stream."""

    def __init__(self, client: Client, stream: Stream):
        self.client = client
        self.stream = stream
        self.ended = asyncio.Event()
        self.reason: Optional[HomedError] = None


class _Changes:
    """Wakes every coroutine waiting for the provider's state to change (an
    asyncio.Condition without the lock, which nothing here needs: one loop)."""

    def __init__(self):
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, timeout: Optional[float]) -> None:
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
        except asyncio.TimeoutError:
            pass


class Provider:
    """An accessory provider on asyncio (see the module's docstring, and
    :class:`homed.provider.Provider` for every parameter). ``on_read(refs)``
    and ``on_write(values, atomic)`` may be coroutine functions.

    :meth:`run` serves until :meth:`stop`; :meth:`start` runs it in a task;
    ``async with Provider(…)`` starts and stops it."""

    def __init__(self, provider_id: str, accessories: Sequence = (), on_read: Optional[Callable] = None,
                 on_write: Optional[Callable] = None, socket_path: Optional[str] = None,
                 client_name: Optional[str] = None, *, home_id: int = 0, on_registered: Optional[Callable] = None,
                 call_timeout: float = 10.0, min_backoff: float = 0.1, max_backoff: float = 5.0,
                 max_frame_size: int = 0, takeover_wait: float = 3.0):
        self.provider_id = provider_id
        self.on_read = on_read
        self.on_write = on_write
        self.socket_path = socket_path
        self.client_name = client_name or f"provider {provider_id}"
        self.home_id = home_id
        self.on_registered = on_registered
        self.call_timeout = call_timeout
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.max_frame_size = max_frame_size
        self.takeover_wait = takeover_wait
        #: The keys the daemon knew from this provider when the stream last opened.
        self.known_keys: List[str] = []
        #: The daemon's ping interval (ms), from the last ``opened``.
        self.ping_interval_ms = 0

        self._accessories: "collections.OrderedDict[str, object]" = collections.OrderedDict()
        for accessory in accessories:
            message = accessory_message(accessory)
            if message.key in self._accessories:
                raise ValueError(f"accessory key {message.key!r} is given twice")
            self._accessories[message.key] = message
        self._removed: set = set()  # removed while not connected: removed at the next registration
        self._ids: Dict[Ref, int] = {}
        self._refs: Dict[int, Ref] = {}
        self._formats: Dict[int, int] = {}
        self._characteristics: Dict[int, object] = {}
        self._accessory_ids: Dict[str, int] = {}
        self._key_ids: Dict[str, List[int]] = {}
        self._session: Optional[_Session] = None  # set once registered
        self._client: Optional[Client] = None  # the current connection, registered or not
        self._registering = 0
        self._registrations = 0
        self._sent_keys: set = set()
        self._error: Optional[BaseException] = None
        self._running = False
        self._task: Optional["asyncio.Task[None]"] = None
        self._handlers: Set["asyncio.Task[None]"] = set()
        self._stats = collections.Counter()
        # Made in the provider's event loop, on first use (Python < 3.10 binds
        # them to a loop when they are made).
        self._stop_event: Optional[asyncio.Event] = None
        self._changes: Optional[_Changes] = None
        self._register_lock: Optional[asyncio.Lock] = None

    def _loop_objects(self) -> None:
        if self._stop_event is None:
            self._stop_event = asyncio.Event()
            self._changes = _Changes()
            self._register_lock = asyncio.Lock()

    def _changed(self) -> None:
        if self._changes is not None:
            self._changes.notify()

    # -- running ------------------------------------------------------------------

    async def run(self) -> None:
        """Serves until :meth:`stop`: connects, opens the command stream,
        registers, answers commands; when the connection or the stream is lost,
        connects again after 0.1 s, doubling to 5 s (back to 0.1 s once
        registered again). Raises HomedError when the daemon refuses the
        provider for good, as the synchronous ``Provider.run`` does."""
        self._loop_objects()
        if self._running:
            raise RuntimeError(f"provider {self.provider_id!r} is already running")
        self._running = True
        self._error = None
        backoff = self.min_backoff
        held_since = None  # when OpenProvider was first refused with ALREADY_EXISTS
        try:
            while not self._stop_event.is_set():
                registered = False
                try:
                    registered = await self._serve_once()
                    held_since = None
                except HomedError as error:
                    if getattr(error, "held", False):
                        held_since = held_since if held_since is not None else time.monotonic()
                        if time.monotonic() - held_since < self.takeover_wait:
                            error.permanent = False
                            log.warning("provider %s: %s; trying again", self.provider_id, error.message)
                    if getattr(error, "permanent", False):
                        self._error = error
                        raise
                    log.info("provider %s: %s", self.provider_id, error)
                except OSError as error:
                    log.debug("provider %s: cannot connect: %s", self.provider_id, error)
                if self._stop_event.is_set():
                    break
                if registered:
                    backoff = self.min_backoff
                self._count("reconnects")
                if await self._stopped_within(backoff):
                    break
                backoff = min(backoff * 2, self.max_backoff)
        finally:
            self._running = False
            self._cancel_handlers()
            self._changed()

    async def _stopped_within(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self._stop_event.wait(), seconds)
            return True
        except asyncio.TimeoutError:
            return False

    async def start(self) -> "Provider":
        """Runs :meth:`run` in a task; returns self. A permanent refusal ends the
        task: :attr:`error` holds it, and :meth:`wait_registered` returns False."""
        self._loop_objects()
        self._stop_event.clear()
        self._task = asyncio.ensure_future(self._run_in_task())
        return self

    async def _run_in_task(self) -> None:
        try:
            await self.run()
        except asyncio.CancelledError:
            raise
        except BaseException as error:  # noqa: BLE001 - kept for wait_registered
            self._error = error
            self._changed()
            if not isinstance(error, HomedError):
                log.exception("provider %s stopped", self.provider_id)

    async def stop(self, timeout: Optional[float] = 5.0) -> None:
        """Ends :meth:`run` (and the task of :meth:`start`): closes the
        connection, so the daemon marks the accessories unreachable at once."""
        self._loop_objects()
        self._stop_event.set()
        client = self._client
        if client is not None:
            await client.close()
        task = self._task
        if task is not None and task is not asyncio.current_task():
            done, _ = await asyncio.wait([task], timeout=timeout)
            if not done:
                task.cancel()
                await asyncio.wait([task], timeout=1)
        self._cancel_handlers()

    def _cancel_handlers(self) -> None:
        for task in list(self._handlers):
            task.cancel()

    async def __aenter__(self) -> "Provider":
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    @property
    def error(self) -> Optional[BaseException]:
        """Why :meth:`run` ended, if it ended with an error."""
        return self._error

    @property
    def connected(self) -> bool:
        """True while registered on a live connection."""
        session = self._session
        return session is not None and not session.ended.is_set()

    @property
    def registrations(self) -> int:
        """How many registrations succeeded (each reconnection adds one, and each update)."""
        return self._registrations

    @property
    def stats(self) -> Dict[str, int]:
        """Counters: ``pings``, ``reads``, ``writes`` (commands answered),
        ``answers_dropped``, ``registrations``, ``sessions``, ``reconnects``."""
        stats = dict(self._stats)
        stats["registrations"] = self._registrations
        return stats

    def _count(self, name: str) -> None:
        self._stats[name] += 1

    async def wait_registered(self, timeout: Optional[float] = None, count: int = 1) -> bool:
        """Waits until ``count`` registrations have succeeded; False on timeout,
        or at once when :meth:`run` ended (see :attr:`error`)."""
        self._loop_objects()
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._registrations < count:
            if self._error is not None or (self._task is not None and self._task.done()):
                return False
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            await self._changes.wait(0.5 if remaining is None else min(remaining, 0.5))
        return True

    # -- one connection -------------------------------------------------------------

    async def _serve_once(self) -> bool:
        """One connection, until it or its stream ends. True when it registered."""
        client = await Client.connect(self.socket_path, self.client_name, timeout=self.call_timeout,
                                      max_frame_size=self.max_frame_size)
        self._client = client
        session = None
        commands = None
        registered = False
        try:
            if self._stop_event.is_set():
                return False
            stream = client.stream("OpenProvider", pb.OpenProviderRequest(provider_id=self.provider_id))
            session = _Session(client, stream)
            opened = await self._first_command(session)
            self.known_keys = list(opened.known_keys)
            self.ping_interval_ms = opened.ping_interval_ms
            self._count("sessions")
            commands = asyncio.ensure_future(self._serve_commands(session))
            await self._register_session(session)
            registered = True
            log.info("provider %s: registered %d accessories", self.provider_id, len(self._accessories))
            stopping = asyncio.ensure_future(self._stop_event.wait())
            try:
                await asyncio.wait([commands, stopping], return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopping.cancel()
            if session.reason is not None and not self._stop_event.is_set():
                log.info("provider %s: command stream ended: %s", self.provider_id, session.reason)
        finally:
            if self._session is session:
                self._session = None
            self._client = None
            await client.close()
            if commands is not None:
                commands.cancel()
                await asyncio.wait([commands], timeout=2)
            self._changed()
        return registered

    async def _first_command(self, session: _Session):
        try:
            command = await session.stream.get(timeout=self.call_timeout)
        except TimeoutError:
            raise DeadlineExceeded("OpenProvider: no answer from the daemon") from None
        except HomedError as error:
            error.permanent = error.code in (pb.INVALID_ARGUMENT, pb.ALREADY_EXISTS)
            error.held = error.code == pb.ALREADY_EXISTS
            raise
        if command is None:
            raise Unavailable("the daemon ended the command stream at once")
        if command.WhichOneof("command") != "opened":
            raise Internal(f"OpenProvider: the first command is {command.WhichOneof('command')}, not opened")
        return command.opened

    async def _serve_commands(self, session: _Session) -> None:
        """The command loop: pings answered here, at once; reads and writes in tasks."""
        try:
            async for command in session.stream:
                kind = command.WhichOneof("command")
                if kind == "ping":
                    self._answer_now(session, pb.CommandAnswer(request_id=command.request_id))
                    self._count("pings")
                elif kind in ("read", "write"):
                    task = asyncio.ensure_future(self._handle(session, command))
                    self._handlers.add(task)
                    task.add_done_callback(self._handlers.discard)
        except HomedError as error:
            session.reason = error
        finally:
            session.ended.set()
            self._changed()

    def _answer_now(self, session: _Session, answer) -> None:
        """Sends an answer without waiting for its response (a ping's)."""
        try:
            session.client.open_call("AnswerCommand", answer.SerializeToString(), self.call_timeout)
        except HomedError as error:
            log.debug("provider %s: answer to request %d not sent: %s", self.provider_id, answer.request_id, error)

    async def _answer(self, session: _Session, answer):
        """Sends an answer; returns the AnswerCommandResponse (None when the
        connection is gone)."""
        try:
            return await session.client.call("AnswerCommand", answer, timeout=self.call_timeout)
        except HomedError as error:
            log.debug("provider %s: answer to request %d not sent: %s", self.provider_id, answer.request_id, error)
            return None

    async def _handle(self, session: _Session, command) -> None:
        kind = command.WhichOneof("command")
        deadline = time.monotonic() + (command.timeout_ms or 5000) / 1000.0
        try:
            if kind == "read":
                answer = await self._read_answer(command, deadline)
            else:
                answer = await self._write_answer(command, deadline)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - never leave a command unanswered
            log.exception("provider %s: %s command %d failed", self.provider_id, kind, command.request_id)
            answer = pb.CommandAnswer(request_id=command.request_id)
            _set_status(answer, error)
        response = await self._answer(session, answer)
        self._stats[kind + "s"] += 1
        if response is not None and not response.accepted:
            self._stats["answers_dropped"] += 1
            log.warning("provider %s: the daemon dropped the answer to %s %d (it came after its %d ms)",
                        self.provider_id, kind, command.request_id, command.timeout_ms)

    async def _resolve(self, ids: Iterable[int], deadline: float) -> List[Optional[Ref]]:
        """The refs of these ids; waits (until the deadline) for a registration in
        flight to name ids it does not know yet."""
        ids = list(ids)
        while self._registering and any(i not in self._refs for i in ids):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            await self._changes.wait(remaining)
        return [self._refs.get(i) for i in ids]

    async def _read_answer(self, command, deadline: float):
        if self.on_read is None:
            return answers.no_reader(command, self.provider_id)
        refs = await self._resolve(command.read.characteristic_ids, deadline)
        asked = answers.asked(refs)
        try:
            values = (await _maybe_await(self.on_read(asked)) if asked else None) or {}
        except Exception as error:  # noqa: BLE001 - the handler's failure is the answer
            return answers.handler_failed(command, error)
        return answers.read_answer(command, self.provider_id, refs, values, self._formats)

    async def _write_answer(self, command, deadline: float):
        if self.on_write is None:
            return answers.no_writer(command, self.provider_id)
        refs = await self._resolve((w.characteristic_id for w in command.write.writes), deadline)
        refusal = answers.atomic_write_refusal(command, self.provider_id, refs)
        if refusal is not None:
            return refusal
        values = answers.write_values(command, refs, self._formats)
        try:
            failed = await _maybe_await(self.on_write(values, command.write.atomic)) if values else None
        except Exception as error:  # noqa: BLE001 - the handler's failure is the answer
            return answers.handler_failed(command, error)
        return answers.write_answer(command, self.provider_id, refs, failed)

    # -- registration -------------------------------------------------------------

    def _registration_request(self, accessories, remove_keys=()):
        request = pb.RegisterAccessoriesRequest(home_id=self.home_id)
        request.accessories.extend(accessories)
        request.remove_keys.extend(remove_keys)
        return request

    async def _register_session(self, session: _Session) -> None:
        """Registers every accessory on a new connection (values left out after
        the first time when on_read can tell the current ones), and removes the
        keys removed while disconnected that the daemon knows."""
        async with self._register_lock:
            accessories = list(self._accessories.values())
            known = set(self.known_keys)
            removed = sorted(k for k in self._removed if k in known)
            if self.on_read is not None:
                accessories = [_without_values(a) if a.key in self._sent_keys else a for a in accessories]
            self._registering += 1
            try:
                await self._register(session.client, accessories, removed)
                self._removed.clear()  # the others were not known to the daemon
                self._sent_keys.update(a.key for a in accessories)
                self._session = session
                self._registered()
            finally:
                self._registering -= 1
                self._changed()

    async def _register(self, client: Client, accessories, remove_keys=()):
        """Registers in as many calls as it takes: at most 1 000 accessories per
        call, bridges first, each call's request and response within the frame
        size. Returns one response with every accessory (and the last seq)."""
        accessories = list(accessories)
        if len(accessories) > MAX_ACCESSORIES_PER_CALL:
            bridges = {a.bridge_key for a in accessories if a.bridge_key}
            accessories = [a for a in accessories if a.key in bridges] + \
                [a for a in accessories if a.key not in bridges]
        responses: list = []
        for start in range(0, max(1, len(accessories)), MAX_ACCESSORIES_PER_CALL):
            await self._register_batch(client, accessories[start:start + MAX_ACCESSORIES_PER_CALL],
                                       remove_keys if start == 0 else (), responses)
        merged = pb.RegisterAccessoriesResponse()
        for response in responses:
            merged.accessories.extend(response.accessories)
            merged.seq = max(merged.seq, response.seq)
        return merged

    async def _register_batch(self, client: Client, accessories, remove_keys, responses) -> None:
        if len(accessories) > 1:
            size = self._registration_request(accessories, remove_keys).ByteSize()
            if size + 1024 > client.max_frame_size:  # the request alone would not fit a frame
                half = len(accessories) // 2
                await self._register_batch(client, accessories[:half], remove_keys, responses)
                await self._register_batch(client, accessories[half:], (), responses)
                return
        try:
            responses.append(await self._register_call(client, accessories, remove_keys))
        except HomedError as error:
            if error.code != pb.RESOURCE_EXHAUSTED or len(accessories) <= 1:
                raise
            # The response did not fit a frame, but the registration took effect:
            # register the same again in halves to learn the ids.
            half = len(accessories) // 2
            await self._register_batch(client, accessories[:half], (), responses)
            await self._register_batch(client, accessories[half:], (), responses)

    async def _register_call(self, client: Client, accessories, remove_keys):
        try:
            response = await client.call("RegisterAccessories",
                                         self._registration_request(accessories, remove_keys),
                                         timeout=self.call_timeout)
        except HomedError as error:
            error.permanent = error.code in _PERMANENT
            raise
        self._install(accessories, response, remove_keys)
        if self.on_registered is not None:
            try:
                await _maybe_await(self.on_registered(response))
            except Exception:  # noqa: BLE001 - a callback's bug must not end the provider
                log.exception("provider %s: on_registered failed", self.provider_id)
        return response

    def _install(self, accessories, response, removed=()) -> None:
        for key in removed:
            self._forget(key)
        by_key = {a.key: a for a in accessories}
        for position, accessory in enumerate(response.accessories):
            key = accessory.provider_key or (accessories[position].key if position < len(accessories) else "")
            self._forget(key)
            self._accessory_ids[key] = accessory.id
            references = _references(accessory, by_key.get(key))
            self._key_ids[key] = list(references)
            for cid, (ref, characteristic) in references.items():
                self._ids[ref] = cid
                self._refs[cid] = ref
                self._formats[cid] = characteristic.metadata.format
                self._characteristics[cid] = characteristic
        self._changed()

    def _registered(self) -> None:
        self._registrations += 1
        self._changed()

    def _forget(self, key: str) -> None:
        self._accessory_ids.pop(key, None)
        for cid in self._key_ids.pop(key, ()):
            ref = self._refs.pop(cid, None)
            if ref is not None and self._ids.get(ref) == cid:
                del self._ids[ref]
            self._formats.pop(cid, None)
            self._characteristics.pop(cid, None)

    async def update(self, accessories: Sequence) -> Optional[object]:
        """Adds accessories, or replaces those with the same keys, now (when
        connected) and at every later registration. Returns the
        RegisterAccessoriesResponse, or None when not connected. Raises
        HomedError when the daemon refuses them (and then keeps the previous set)."""
        self._loop_objects()
        messages = [accessory_message(a) for a in accessories]
        async with self._register_lock:
            previous = collections.OrderedDict(self._accessories)
            for message in messages:
                self._accessories[message.key] = message
                self._removed.discard(message.key)
            session = self._session if self.connected else None
            if session is None:
                return None
            self._registering += 1
            try:
                response = await self._register(session.client, messages)
                self._sent_keys.update(m.key for m in messages)
                self._registered()
                return response
            except HomedError:
                self._accessories = previous
                raise
            finally:
                self._registering -= 1
                self._changed()

    async def remove(self, keys: Iterable[str]) -> Optional[object]:
        """Removes these accessories (and what referred to them in the home).
        When not connected, they are removed at the next registration. Returns
        the response, or None when not connected."""
        self._loop_objects()
        keys = list(keys)
        async with self._register_lock:
            for key in keys:
                self._accessories.pop(key, None)
            session = self._session if self.connected else None
            if session is None:
                self._removed.update(keys)
                return None
            known = [k for k in keys if k in self._accessory_ids]
            if not known:
                return None
            self._registering += 1
            try:
                response = await self._register(session.client, [], known)
                self._registered()
                return response
            finally:
                self._registering -= 1
                self._changed()

    # -- names and ids --------------------------------------------------------------

    @property
    def accessories(self) -> List[object]:
        """The accessories as they are registered now (copies)."""
        return [accessory_message(a) for a in self._accessories.values()]

    @property
    def refs(self) -> List[Ref]:
        """Every characteristic registered, as refs."""
        return list(self._ids)

    def id_of(self, ref) -> Optional[int]:
        """The daemon's id of a characteristic, once registered."""
        return self._ids.get(Ref(*ref))

    def ref_of(self, characteristic_id: int) -> Optional[Ref]:
        return self._refs.get(characteristic_id)

    def accessory_id(self, key: str) -> Optional[int]:
        """The daemon's id of an accessory, once registered."""
        return self._accessory_ids.get(key)

    def characteristic(self, ref):
        """The ``pb.Characteristic`` as last registered (format, range, …), or None."""
        cid = self._ids.get(Ref(*ref))
        return None if cid is None else self._characteristics.get(cid)

    # -- changes from the devices ---------------------------------------------------

    def _connected_session(self) -> _Session:
        session = self._session
        if session is None or session.ended.is_set():
            raise Unavailable(f"provider {self.provider_id!r} is not connected to homed")
        return session

    async def report(self, values) -> int:
        """Reports values the devices now hold, in one call: ``{ref: value}``, or
        ``[(ref, value), …]``. Returns the daemon's sequence number once they took
        effect. Raises Unavailable when not connected, NotFound for a ref not
        registered, InvalidArgument for a value its format cannot take, or the
        first value the daemon refused (the others are applied)."""
        session = self._connected_session()
        pairs = list(values.items()) if isinstance(values, Mapping) else list(values)
        report = pb.ValueReport()
        for ref, value in pairs:
            ref = Ref(*ref)
            cid = self._ids.get(ref)
            if cid is None:
                raise NotFound(f"provider {self.provider_id!r} registered no characteristic {ref}")
            try:
                converted = to_value(value, self._formats.get(cid, pb.FORMAT_UNSPECIFIED))
            except (TypeError, ValueError) as error:
                raise InvalidArgument(f"{ref}: {error}") from None
            report.values.add(characteristic_id=cid, value=converted)
        return await self._send_report(session, report)

    async def set_reachable(self, accessory_key: str, reachable: bool) -> int:
        """Says whether one of its devices answers. Returns the daemon's sequence number."""
        session = self._connected_session()
        accessory_id = self.accessory_id(accessory_key)
        if accessory_id is None:
            raise NotFound(f"provider {self.provider_id!r} registered no accessory with key {accessory_key!r}")
        report = pb.ValueReport()
        report.reachability.add(accessory_id=accessory_id, reachable=bool(reachable))
        return await self._send_report(session, report)

    async def _send_report(self, session: _Session, report) -> int:
        response = await session.client.call("ReportValues", report, timeout=self.call_timeout)
        for rejected in response.rejected:
            if rejected.code != pb.OK:
                ref = self.ref_of(rejected.characteristic_id)
                raise error_for(rejected.code, f"{ref}: {rejected.message}" if ref else rejected.message)
        return response.seq
