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
quick). A read or write whose deadline has passed before its handler could
start is not handled (``late`` in :attr:`Provider.stats`). :meth:`Provider.stop`
cancels the handlers still running.

This module is only the asyncio driver: the decisions are
:class:`homed.provider_core.ProviderCore`'s, which the threaded provider drives
too.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from typing import Callable, Iterable, Optional, Sequence, Set

from .. import proto as pb
from ..commands import Job
from ..errors import DeadlineExceeded, HomedError
from ..provider_base import ProviderBase, Session
from ..provider_core import open_refused
from ..registration import RegistrationPlan
from .client import Client

__all__ = ["Provider"]

log = logging.getLogger("homed.aio.provider")


async def _maybe_await(value):
    return await value if inspect.isawaitable(value) else value


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


class Provider(ProviderBase):
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
        super().__init__(provider_id, accessories, on_read, on_write, socket_path, client_name, home_id,
                         on_registered, call_timeout, min_backoff, max_backoff, max_frame_size, takeover_wait)
        self._session: Optional[Session] = None  # set once registered
        self._client: Optional[Client] = None  # the current connection, registered or not
        self._error: Optional[BaseException] = None
        self._running = False
        self._task: Optional["asyncio.Task[None]"] = None
        self._handlers: Set["asyncio.Task[None]"] = set()
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
        policy = self._reconnecting()
        try:
            while not self._stop_event.is_set():
                try:
                    policy.served(await self._serve_once())
                except (HomedError, OSError) as error:
                    if policy.failed(error, time.monotonic()):
                        self._error = error
                        raise
                if self._stop_event.is_set():
                    break
                self._count("reconnects")
                if await self._stopped_within(policy.wait()):
                    break
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

    async def wait_registered(self, timeout: Optional[float] = None, count: int = 1) -> bool:
        """Waits until ``count`` registrations have succeeded; False on timeout,
        or at once when :meth:`run` ended (see :attr:`error`)."""
        self._loop_objects()
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._core.registrations < count:
            if self._error is not None or (self._task is not None and self._task.done()):
                return False
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            await self._changes.wait(0.5 if remaining is None else min(remaining, 0.5))
        return True

    async def wait_registered_until(self, stopping: asyncio.Event) -> bool:
        """Waits for the first registration, however long homed takes to
        answer, until ``stopping`` is set; False then, or when homed refused
        the provider for good (:attr:`error` says why): what a provider's
        service waits on before it serves its devices."""
        while not stopping.is_set():
            if await self.wait_registered(timeout=1):
                return True
            if self.error is not None:
                return False
        return False

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
            session = Session(client, stream, asyncio.Event())
            await self._first_command(session)
            commands = asyncio.ensure_future(self._serve_commands(session))
            await self._register_session(session)
            registered = True
            log.info("provider %s: registered %d accessories", self.provider_id, len(self._core.accessories))
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

    async def _first_command(self, session: Session) -> None:
        try:
            command = await session.stream.get(timeout=self.call_timeout)
        except TimeoutError:
            raise DeadlineExceeded("OpenProvider: no answer from the daemon") from None
        except HomedError as error:
            raise open_refused(error)
        self._core.opened(command)

    async def _serve_commands(self, session: Session) -> None:
        """The command loop: pings answered here, at once; reads and writes in tasks."""
        try:
            async for command in session.stream:
                kind = command.WhichOneof("command")
                if kind == "ping":
                    self._answer_now(session, pb.CommandAnswer(request_id=command.request_id))
                    self._count("pings")
                elif kind in ("read", "write"):
                    job = Job(command, self.provider_id, received_at=time.monotonic())
                    task = asyncio.ensure_future(self._handle(session, job))
                    self._handlers.add(task)
                    task.add_done_callback(self._handlers.discard)
        except HomedError as error:
            session.reason = error
        finally:
            session.ended.set()
            self._changed()

    def _answer_now(self, session: Session, answer) -> None:
        """Sends an answer without waiting for its response (a ping's)."""
        try:
            session.client.open_call("AnswerCommand", answer.SerializeToString(), self.call_timeout)
        except HomedError as error:
            log.debug("provider %s: answer to request %d not sent: %s", self.provider_id, answer.request_id, error)

    async def _answer(self, session: Session, answer):
        """Sends an answer; returns the AnswerCommandResponse (None when the
        connection is gone)."""
        try:
            return await session.client.call("AnswerCommand", answer, timeout=self.call_timeout)
        except HomedError as error:
            log.debug("provider %s: answer to request %d not sent: %s", self.provider_id, answer.request_id, error)
            return None

    async def _handle(self, session: Session, job: Job) -> None:
        """One read or write, in a task: not at all once its deadline has
        passed, else with its handler, and answered."""
        handler = self._handler(job)
        try:
            while True:  # a registration under way may yet name the command's ids
                wait = self._core.refs_wait(job, time.monotonic())
                if wait <= 0:
                    break
                await self._changes.wait(wait)
            answer = self._core.begin(job, handler is not None, time.monotonic())
            if job.late:
                return
            if answer is None:
                try:
                    answer = job.finish(await _maybe_await(handler(*job.args)))
                except asyncio.CancelledError:
                    raise
                except Exception as error:  # noqa: BLE001 - the handler's failure is the answer
                    answer = job.failed(error)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - never leave a command unanswered
            log.exception("provider %s: %s command %d failed", self.provider_id, job.kind, job.request_id)
            answer = job.crashed(error)
        self._core.answered(job, await self._answer(session, answer))

    # -- registration -------------------------------------------------------------

    async def _register_session(self, session: Session) -> None:
        """Registers every accessory on a new connection (values left out after
        the first time when on_read can tell the current ones), and removes the
        keys removed while disconnected that the daemon knows."""
        async with self._register_lock:
            plan = self._core.session_plan(self.on_read is not None, session.client.max_frame_size)
            self._core.registering += 1
            try:
                await self._register(session.client, plan, session)
            finally:
                self._registration_over()

    async def _register(self, client: Client, plan: RegistrationPlan, session: Optional[Session] = None):
        """Makes the calls of a registration plan; returns one response with
        every accessory (and the last seq). ``session``: the session a new
        connection registers for, connected before the registration counts."""
        for batch in iter(plan.next_batch, None):
            try:
                response = await client.call("RegisterAccessories", batch.request, timeout=self.call_timeout)
            except HomedError as error:
                if plan.retry(batch, error):
                    continue
                raise
            plan.done(batch, response)
            self._core.installed(batch, response)
            self._changed()
            if self.on_registered is not None:
                try:
                    await _maybe_await(self.on_registered(response))
                except Exception:  # noqa: BLE001 - a callback's bug must not end the provider
                    log.exception("provider %s: on_registered failed", self.provider_id)
        if session is not None:
            self._session = session
        self._core.registered(plan)
        return plan.response()

    def _registration_over(self) -> None:
        """A registration is over (done or failed): wake whoever waits on it."""
        self._core.registering -= 1
        self._changed()

    async def update(self, accessories: Sequence) -> Optional[object]:
        """Adds accessories, or replaces those with the same keys, now (when
        connected) and at every later registration. Returns the
        RegisterAccessoriesResponse, or None when not connected. Raises
        HomedError when the daemon refuses them (and then keeps the previous set)."""
        return await self._change(self._core.stage_update, accessories)

    async def remove(self, keys: Iterable[str]) -> Optional[object]:
        """Removes these accessories (and what referred to them in the home).
        When not connected, they are removed at the next registration. Returns
        the response, or None when not connected."""
        return await self._change(self._core.stage_remove, keys)

    async def _change(self, stage, items) -> Optional[object]:
        self._loop_objects()
        async with self._register_lock:
            change = stage(items, self.connected)
            client = self._change_client(change)
            if client is None:
                return None
            try:
                return await self._register(client, self._core.plan(change.accessories, change.remove_keys,
                                                                    client.max_frame_size))
            except HomedError:
                self._core.undo(change)
                raise
            finally:
                self._registration_over()

    # -- changes from the devices ---------------------------------------------------

    async def report(self, values) -> int:
        """Reports values the devices now hold, in one call: ``{ref: value}``, or
        ``[(ref, value), …]``. Returns the daemon's sequence number once they took
        effect. Raises Unavailable when not connected, NotFound for a ref not
        registered, InvalidArgument for a value its format cannot take, or the
        first value the daemon refused (the others are applied)."""
        session = self._connected_session()
        return await self._send_report(session, self._core.value_report(values))

    async def set_reachable(self, accessory_key: str, reachable: bool) -> int:
        """Says whether one of its devices answers. Returns the daemon's sequence number."""
        session = self._connected_session()
        return await self._send_report(session, self._core.reachability_report(accessory_key, reachable))

    async def _send_report(self, session: Session, report) -> int:
        response = await session.client.call("ReportValues", report, timeout=self.call_timeout)
        return self._core.report_seq(response)
