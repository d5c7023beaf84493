"""Accessory providers in Python: a whole provider in a few lines.

A provider is a process that owns devices (a radio bridge, a sysfs reader, …) and
brings them into homed. :class:`Provider` does all of the protocol: it connects,
opens the command stream (``OpenProvider``), registers the accessories
(``RegisterAccessories``), answers the daemon's reads, writes and liveness pings
(``AnswerCommand``) with your handlers, reports your changes (``ReportValues``) and,
when the connection is lost, reconnects with backoff and registers again.

    from homed.provider import Provider, Ref

    LAMP = {"key": "lamp-1", "name": "Desk Lamp", "category": "LIGHTBULB",
            "services": [{"type": "Lightbulb", "characteristics": [
                {"type": "On", "value": False},
                {"type": "Brightness", "value": 40}]}]}

    def on_read(refs):                      # [Ref] -> {Ref: value}
        return {ref: device.get(ref.characteristic) for ref in refs}

    def on_write(values, atomic):           # {Ref: value} -> None | {Ref: error}
        for ref, value in values.items():
            device.set(ref.characteristic, value)

    provider = Provider("desk", [LAMP], on_read=on_read, on_write=on_write)
    provider.start()                        # or provider.run() to block
    provider.report({Ref("lamp-1", "Lightbulb", "On"): True})

**Lifecycle.** :meth:`Provider.run` serves until :meth:`Provider.stop` (or
:meth:`Provider.start` runs it on a thread); :meth:`Provider.wait_registered`
waits for the registration; :meth:`Provider.update` and :meth:`Provider.remove`
change the set of accessories while it runs; :meth:`Provider.report` and
:meth:`Provider.set_reachable` tell what the devices did; :meth:`Provider.id_of`
and :meth:`Provider.accessory_id` give the daemon's ids. The accessories keep
their ids, rooms and scenes across restarts of either side, by key.

**References.** Handlers and :meth:`Provider.report` name characteristics the way
the provider does, never by the daemon's ids: ``Ref(accessory_key, service,
characteristic)``, where ``service`` is the service's ``key`` when it has one, else
its type name (``"Lightbulb"``; ``"Lightbulb#2"``, ``"Lightbulb#3"``, … for the
second and later unkeyed services of one type) and ``characteristic`` is the
characteristic's type name (``"Brightness"``, or a custom type's ``type_name``).
The daemon's AccessoryInformation service is ``"AccessoryInformation"`` (a write
of its ``Identify`` reaches ``on_write`` as ``Ref(key, "AccessoryInformation",
"Identify")``). A plain tuple ``(key, service, characteristic)`` works wherever a
``Ref`` does.

**Values.** Handlers get and give plain Python values — ``bool``, ``int``,
``float``, ``str``, ``bytes`` — converted to and from ``pb.Value`` with the
characteristic's format as the daemon registered it (uint formats travel as
``uint_value``, ``int`` as ``int_value``, ``float`` as ``float_value``, tlv8 and
data as ``data_value``). A ``pb.Value`` is passed through as it is.

**Errors.** A handler fails the whole command by raising: a
:class:`~homed.HomedError` keeps its code; ``PermissionError`` becomes
PERMISSION_DENIED, ``FileNotFoundError`` NOT_FOUND, ``TimeoutError``
DEADLINE_EXCEEDED, an ``OSError`` INVALID_ARGUMENT for EINVAL and UNAVAILABLE for
most others (see :func:`status_of`), ``ValueError`` and
``TypeError`` INVALID_ARGUMENT, anything else INTERNAL — each with the exception's
text. It fails single items by returning them: ``on_write`` returns ``{ref:
error}`` for the writes that failed (an exception as above, a ``(code, message)``
pair, or a message string, which is UNKNOWN); ``on_read`` leaves a ref out of its
result (NOT_FOUND) or maps it to an exception.

**Threads.** Commands are read on a thread of their own, which answers liveness
pings at once; reads and writes run on a pool of ``workers`` threads, so a slow or
stuck device never makes the provider look dead. Handlers may therefore run
concurrently with each other and with :meth:`Provider.report`. A read or write
whose deadline (its ``timeout_ms``) has passed before its handler could start
is not handled at all: the daemon has already answered DEADLINE_EXCEEDED and
would drop the answer (counted as ``late`` in :attr:`Provider.stats`).

**Layers.** This module is the threaded driver: it does the I/O and the
waiting. What to register, the reference tables, the answers and every other
decision are in :mod:`homed.provider_core` (with :mod:`homed.registration`,
:mod:`homed.commands`, :mod:`homed.refs`, and :mod:`homed.provider_base` for
what both providers show of it), which ``homed.aio.Provider`` drives too.
"""

from __future__ import annotations

import logging
import queue
import signal
import threading
import time
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import proto as pb
from .accessories import accessory_message
from .client import Client
from .commands import Job
from .errors import DeadlineExceeded, HomedError
from .provider_base import ProviderBase, Session
from .provider_core import open_refused
from .refs import INFORMATION_SERVICE, Ref
from .registration import MAX_ACCESSORIES_PER_CALL, RegistrationPlan
from .values import _set_status, from_value, status_of, to_value  # noqa: F401 - part of this module's API

__all__ = [
    "Provider", "PendingReport", "Ref", "INFORMATION_SERVICE", "to_value", "from_value", "accessory_message", "status_of",
    "MAX_ACCESSORIES_PER_CALL", "run_until_signalled",
]

log = logging.getLogger("homed.provider")

ReadHandler = Callable[[List[Ref]], Mapping]
WriteHandler = Callable[[Dict[Ref, object], bool], Optional[Mapping]]
ValuesArg = Union[Mapping, Iterable[Tuple[object, object]]]


class _Workers:
    """Daemon threads running the handlers: a handler stuck on a dead device never
    keeps the process from exiting (as ThreadPoolExecutor's threads would)."""

    def __init__(self, count: int, name: str):
        self._tasks: "queue.Queue" = queue.Queue()
        self._closed = False
        self._threads = [threading.Thread(target=self._work, name=f"{name}-{n + 1}", daemon=True)
                         for n in range(count)]
        for thread in self._threads:
            thread.start()

    def submit(self, fn, *args) -> None:
        if self._closed:
            raise RuntimeError("the provider is stopping")
        self._tasks.put((fn, args))

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            fn, args = task
            try:
                fn(*args)
            except BaseException:  # noqa: BLE001 - a task reports its own failures
                log.exception("a provider task failed")

    def shutdown(self) -> None:
        """Pending tasks are dropped; running ones finish on their own."""
        self._closed = True
        while True:
            try:
                self._tasks.get_nowait()
            except queue.Empty:
                break
        for _ in self._threads:
            self._tasks.put(None)


class Provider(ProviderBase):
    """An accessory provider (see the module's docstring).

    :param provider_id: the provider's stable id ("sysfs"): 1 to 64 letters,
        digits, '.', '-', '_'; one connection at a time may hold it.
    :param accessories: ``pb.ProvidedAccessory`` messages or dicts (see
        :func:`accessory_message`), each with a key unique within the provider.
        A registration is all or nothing up to 1 000 accessories (the daemon's
        limit per call) whose response fits a frame; more are registered in
        several calls, bridges first.
    :param on_read: ``on_read(refs) -> {ref: value}``: read these characteristics
        from the devices (a client's ``fresh`` read, or the daemon's read of the
        values a registration did not give). None: reads fail with UNIMPLEMENTED.
    :param on_write: ``on_write({ref: value}, atomic) -> None | {ref: error}``:
        apply these writes (already validated by the daemon; ``atomic``: all or
        none); return the ones that failed, or raise to fail them all. None:
        writes fail with UNIMPLEMENTED.
    :param socket_path: the daemon's socket; None for ``default_socket_path()``.
    :param client_name: the connection's name (default ``"provider <id>"``).
    :param home_id: the home new accessories go to; 0 for the primary home.
    :param workers: threads running the handlers.
    :param on_registered: ``on_registered(response)``, called after every
        successful RegisterAccessories call (``pb.RegisterAccessoriesResponse``),
        on the thread that made it: each connection's registration (in parts
        of 1 000 accessories when there are more), :meth:`update`, :meth:`remove`.
    :param call_timeout: seconds allowed for each call to the daemon.
    :param min_backoff, max_backoff: the first and the longest wait (seconds)
        before connecting again.
    :param max_frame_size: the largest frame the connection asks for (0: the
        daemon's limit). A registration whose response would not fit is asked
        again in smaller parts.
    :param takeover_wait: how long (seconds) to keep trying while another
        connection holds the provider id (a hung earlier instance of this
        provider, which loses it within a second) before :meth:`run` gives up
        with ALREADY_EXISTS.

    Values given in an accessory are sent when it is first registered. When the
    provider registers it again after a reconnection they are left out if there
    is an ``on_read``, so that the daemon asks the devices for what they hold now
    (and publishes only what changed while the provider was away).
    """

    def __init__(self, provider_id: str, accessories: Sequence = (), on_read: Optional[ReadHandler] = None,
                 on_write: Optional[WriteHandler] = None, socket_path: Optional[str] = None,
                 client_name: Optional[str] = None, *, home_id: int = 0, workers: int = 4,
                 on_registered: Optional[Callable] = None, call_timeout: float = 10.0,
                 min_backoff: float = 0.1, max_backoff: float = 5.0, max_frame_size: int = 0,
                 takeover_wait: float = 3.0):
        super().__init__(provider_id, accessories, on_read, on_write, socket_path, client_name, home_id,
                         on_registered, call_timeout, min_backoff, max_backoff, max_frame_size, takeover_wait)
        self.workers = max(1, int(workers))
        self._lock = threading.RLock()  # guards the core
        self._guard = self._lock
        self._changed = threading.Condition(self._lock)
        self._register_lock = threading.RLock()  # one RegisterAccessories at a time
        self._session: Optional[Session] = None  # set once registered
        self._client: Optional[Client] = None  # the current connection, registered or not
        self._error: Optional[BaseException] = None
        self._stop = threading.Event()
        self._running = False
        self._run_thread: Optional[threading.Thread] = None
        self._thread: Optional[threading.Thread] = None

    # -- running ----------------------------------------------------------------

    def run(self) -> None:
        """Serve until :meth:`stop`: connect, open the command stream, register,
        answer commands; when the connection or the stream is lost, reconnect
        after 0.1 s, doubling to 5 s (back to 0.1 s once registered again).

        Raises HomedError when the daemon refuses the provider for good: an
        invalid provider id or registration (INVALID_ARGUMENT, naming the item),
        an unknown home or key to remove (NOT_FOUND), the id held by another
        connection (ALREADY_EXISTS) for longer than ``takeover_wait`` seconds (a
        hung earlier instance of this provider loses its session within a
        second, when it misses a ping). Nothing else ends it."""
        with self._lock:
            if self._running:
                raise RuntimeError(f"provider {self.provider_id!r} is already running")
            self._running = True
            self._run_thread = threading.current_thread()
            self._error = None
        policy = self._reconnecting()
        pool = _Workers(self.workers, f"homed-provider-{self.provider_id}")
        try:
            while not self._stop.is_set():
                try:
                    policy.served(self._serve_once(pool))
                except (HomedError, OSError) as error:
                    if policy.failed(error, time.monotonic()):
                        with self._lock:
                            self._error = error
                            self._changed.notify_all()
                        raise
                if self._stop.is_set():
                    break
                self._count("reconnects")
                if self._stop.wait(policy.wait()):
                    break
        finally:
            pool.shutdown()
            with self._lock:
                self._running = False
                self._run_thread = None
                self._changed.notify_all()

    def start(self) -> "Provider":
        """Runs :meth:`run` on a background (daemon) thread; returns self. A
        permanent refusal ends the thread: :attr:`error` holds it, and
        :meth:`wait_registered` returns False."""
        self._stop.clear()
        thread = threading.Thread(target=self._run_in_thread, name=f"homed-provider-{self.provider_id}", daemon=True)
        self._thread = thread
        thread.start()
        return self

    def _run_in_thread(self):
        try:
            self.run()
        except BaseException as error:  # noqa: BLE001 - kept for wait_registered
            with self._lock:
                self._error = error
                self._changed.notify_all()
            if not isinstance(error, HomedError):
                log.exception("provider %s stopped", self.provider_id)

    def stop(self, timeout: Optional[float] = 5.0) -> None:
        """Ends :meth:`run` (and the thread of :meth:`start`): closes the
        connection, so the daemon marks the accessories unreachable at once. Safe
        from a signal handler on the thread that runs :meth:`run` (it then only
        asks, and run returns within 0.2 s)."""
        self._stop.set()
        if threading.current_thread() is self._run_thread:
            return
        client = self._client
        if client is not None:
            client.close()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def wait_registered(self, timeout: Optional[float] = None, count: int = 1) -> bool:
        """Waits until ``count`` registrations have succeeded since the provider
        was made (1: the first; each reconnection, update and remove adds one).
        False on timeout, or at once when :meth:`run` ended (see :attr:`error`)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._core.registrations < count:
                if self._error is not None:
                    return False
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._changed.wait(0.5 if remaining is None else min(remaining, 0.5))
            return True

    # -- one connection ---------------------------------------------------------

    def _serve_once(self, pool) -> bool:
        """One connection, until it or its stream ends. True when it registered."""
        client = Client.connect(self.socket_path, client_name=self.client_name, timeout=self.call_timeout,
                                max_frame_size=self.max_frame_size)
        with self._lock:
            self._client = client
        if self._stop.is_set():
            client.close()
            return False
        registered = False
        session = None
        dispatcher = None
        try:
            stream = client.stream("OpenProvider", pb.OpenProviderRequest(provider_id=self.provider_id))
            session = Session(client, stream, threading.Event())
            self._first_command(session)
            dispatcher = threading.Thread(target=self._dispatch, args=(session, pool),
                                          name=f"homed-provider-{self.provider_id}-commands", daemon=True)
            dispatcher.start()
            self._register_session(session)
            registered = True
            log.info("provider %s: registered %d accessories", self.provider_id, len(self._core.accessories))
            while not session.ended.wait(0.2):
                if self._stop.is_set():
                    break
            if session.reason is not None and not self._stop.is_set():
                log.info("provider %s: command stream ended: %s", self.provider_id, session.reason)
        finally:
            with self._lock:
                if self._session is session:
                    self._session = None
                self._client = None
            client.close()
            if dispatcher is not None:
                dispatcher.join(2.0)
        return registered

    def _first_command(self, session: Session) -> None:
        try:
            command = session.stream.get(timeout=self.call_timeout)
        except TimeoutError:
            raise DeadlineExceeded("OpenProvider: no answer from the daemon") from None
        except HomedError as error:
            raise open_refused(error)
        with self._lock:
            self._core.opened(command)

    def _dispatch(self, session: Session, pool) -> None:
        """The command loop: pings answered here, at once; reads and writes on the pool."""
        try:
            for command in session.stream:
                kind = command.WhichOneof("command")
                if kind == "ping":
                    self._answer(session, pb.CommandAnswer(request_id=command.request_id), wait=False)
                    self._count("pings")
                elif kind in ("read", "write"):
                    job = Job(command, self.provider_id, received_at=time.monotonic())
                    try:
                        pool.submit(self._handle, session, job)
                    except RuntimeError:  # the pool is shut down: the provider is stopping
                        return
        except HomedError as error:
            session.reason = error
        finally:
            session.ended.set()

    def _answer(self, session: Session, answer, wait: bool):
        """Sends an answer; with ``wait``, returns the AnswerCommandResponse (None
        when the connection is gone)."""
        try:
            if not wait:
                session.client._open(pb.full_method_name("AnswerCommand"), answer.SerializeToString(),
                                     self.call_timeout)
                return None
            return session.client.call("AnswerCommand", answer, timeout=self.call_timeout)
        except HomedError as error:
            log.debug("provider %s: answer to request %d not sent: %s", self.provider_id, answer.request_id, error)
            return None

    def _handle(self, session: Session, job: Job) -> None:
        """One read or write, on a worker: not at all once its deadline has
        passed, else with its handler, and answered."""
        handler = self._handler(job)
        try:
            with self._lock:
                while True:  # a registration under way may yet name the command's ids
                    wait = self._core.refs_wait(job, time.monotonic())
                    if wait <= 0:
                        break
                    self._changed.wait(wait)
                answer = self._core.begin(job, handler is not None, time.monotonic())
            if job.late:
                return
            if answer is None:
                try:
                    answer = job.finish(handler(*job.args))
                except Exception as error:  # noqa: BLE001 - the handler's failure is the answer
                    answer = job.failed(error)
        except BaseException as error:  # noqa: BLE001 - never leave a command unanswered
            log.exception("provider %s: %s command %d failed", self.provider_id, job.kind, job.request_id)
            answer = job.crashed(error)
        response = self._answer(session, answer, wait=True)
        with self._lock:
            self._core.answered(job, response)

    # -- registration -----------------------------------------------------------

    def _register_session(self, session: Session) -> None:
        """Registers every accessory on a new connection (values left out after
        the first time when on_read can tell the current ones), and removes the
        keys removed while disconnected that the daemon knows."""
        with self._register_lock:
            with self._lock:
                plan = self._core.session_plan(self.on_read is not None, session.client.max_frame_size)
                self._core.registering += 1
            try:
                self._register(session.client, plan, session)
            finally:
                self._registration_over()

    def _register(self, client: Client, plan: RegistrationPlan, session: Optional[Session] = None):
        """Makes the calls of a registration plan; returns one response with
        every accessory (and the last seq). ``session``: the session a new
        connection registers for, connected before the registration counts
        (whoever sees the count may report at once)."""
        for batch in iter(plan.next_batch, None):
            try:
                response = client.call("RegisterAccessories", batch.request, timeout=self.call_timeout)
            except HomedError as error:
                if plan.retry(batch, error):
                    continue
                raise
            plan.done(batch, response)
            with self._lock:
                self._core.installed(batch, response)
                self._changed.notify_all()
            if self.on_registered is not None:
                try:
                    self.on_registered(response)
                except Exception:  # noqa: BLE001 - a callback's bug must not end the provider
                    log.exception("provider %s: on_registered failed", self.provider_id)
        with self._lock:
            if session is not None:
                self._session = session
            self._core.registered(plan)
        return plan.response()

    def _registration_over(self) -> None:
        """A registration is over (done or failed): wake whoever waits on it."""
        with self._lock:
            self._core.registering -= 1
            self._changed.notify_all()

    def update(self, accessories: Sequence) -> Optional[object]:
        """Adds accessories, or replaces those with the same keys, now (when
        connected) and at every later registration. Returns the
        RegisterAccessoriesResponse, or None when not connected (they are
        registered when it connects). Raises HomedError when the daemon refuses
        them (and then keeps the previous set)."""
        return self._change(self._core.stage_update, accessories)

    def remove(self, keys: Iterable[str]) -> Optional[object]:
        """Removes these accessories (with whatever referred to them in the home:
        scenes' actions, groups' services). When not connected, they are removed
        at the next registration. Returns the response, or None when not
        connected."""
        return self._change(self._core.stage_remove, keys)

    def _change(self, stage, items) -> Optional[object]:
        with self._register_lock:
            with self._lock:
                change = stage(items, self.connected)
                client = self._change_client(change)
            if client is None:
                return None
            try:
                return self._register(client, self._core.plan(change.accessories, change.remove_keys,
                                                              client.max_frame_size))
            except HomedError:
                with self._lock:
                    self._core.undo(change)
                raise
            finally:
                self._registration_over()

    # -- changes from the devices -----------------------------------------------

    def report(self, values: ValuesArg) -> int:
        """Reports values the devices now hold, in one call: ``{ref: value}``, or
        ``[(ref, value), …]`` to report one characteristic more than once (readings
        a device buffered, each a change of its own). Returns the daemon's
        sequence number once they took effect. Raises HomedError: UNAVAILABLE when
        not connected, NOT_FOUND for a ref not registered, INVALID_ARGUMENT for a
        value its format cannot take, or the first value the daemon refused (the
        others are applied)."""
        session = self._connected_session()
        with self._lock:
            report = self._core.value_report(values)
        return self._send_report(session, report)

    def report_nowait(self, values: ValuesArg) -> Optional["PendingReport"]:
        """:meth:`report` without waiting, for a thread that must never wait on
        the daemon (an MQTT client's network thread): sends the report and
        returns a :class:`PendingReport` at once, before the daemon's answer;
        returns None, nothing sent, when sending would wait (another thread
        writing on the connection, or a daemon not reading it) — report them
        otherwise then. Raises as :meth:`report` does for what it checks before
        sending (UNAVAILABLE when not connected, NOT_FOUND, INVALID_ARGUMENT);
        the daemon's answer is :meth:`PendingReport.result`'s."""
        session = self._connected_session()
        with self._lock:
            report = self._core.value_report(values)
        pending = session.client.begin("ReportValues", report, timeout=self.call_timeout, block=False)
        return None if pending is None else PendingReport(self, pending)

    def set_reachable(self, accessory_key: str, reachable: bool) -> int:
        """Says whether one of its devices answers (a device that went offline, or
        came back). Returns the daemon's sequence number."""
        session = self._connected_session()
        with self._lock:
            report = self._core.reachability_report(accessory_key, reachable)
        return self._send_report(session, report)

    def _send_report(self, session: Session, report) -> int:
        response = session.client.call("ReportValues", report, timeout=self.call_timeout)
        with self._lock:
            return self._core.report_seq(response)


class PendingReport:
    """A report sent by :meth:`Provider.report_nowait` and not yet answered."""

    def __init__(self, provider: Provider, pending):
        self._provider = provider
        self._pending = pending

    def done(self) -> bool:
        """True once the daemon answered (result() then returns or raises at once)."""
        return self._pending.done()

    def result(self) -> int:
        """The daemon's sequence number once the report took effect (waiting for
        the answer up to the provider's call timeout); raises as
        :meth:`Provider.report` does."""
        response = self._pending.result()
        with self._provider._lock:
            return self._provider._core.report_seq(response)


def run_until_signalled(run: Callable[[], None], stop: Callable[[], None], provider_id: str,
                        logger: Optional[logging.Logger] = None) -> int:
    """Runs a provider program's loop until SIGTERM or SIGINT, as a service unit
    expects of it. `run` serves until `stop` is called (from the signal handler,
    on the thread that runs `run`: it must only ask).

    Returns the exit status the provider's unit expects: 0 once stopped, 2 when
    homed refused the provider for good (its id held by another connection, a
    registration it cannot take); the refusal is logged."""
    def on_signal(signum, frame):
        stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        run()
    except HomedError as error:
        (logger or log).error("homed refused provider %r (%s): %s", provider_id, error.code_name, error.message)
        return 2
    return 0
