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
concurrently with each other and with :meth:`Provider.report`.
"""

from __future__ import annotations

import collections
import copy
import logging
import queue
import threading
import time
from typing import Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from google.protobuf import json_format

from . import answers
from . import proto as pb
from .client import Client
from .errors import HomedError, error_for
from .values import _set_status, from_value, status_of, to_value  # noqa: F401 - part of this module's API

__all__ = [
    "Provider", "Ref", "INFORMATION_SERVICE", "to_value", "from_value", "accessory_message", "status_of",
]

log = logging.getLogger("homed.provider")

#: The service name of the daemon's AccessoryInformation service in a Ref.
INFORMATION_SERVICE = "AccessoryInformation"

#: RegisterAccessories carries at most this many accessories per call.
MAX_ACCESSORIES_PER_CALL = 1000

# Codes for which a refused OpenProvider or RegisterAccessories is not retried:
# retrying the same request would be refused the same way.
_PERMANENT = (pb.INVALID_ARGUMENT, pb.ALREADY_EXISTS, pb.NOT_FOUND, pb.PERMISSION_DENIED)


class Ref(NamedTuple):
    """A characteristic as its provider names it (see the module's docstring)."""

    accessory_key: str
    service: str
    characteristic: str

    def __str__(self) -> str:
        return f"{self.accessory_key}/{self.service}/{self.characteristic}"


def _enum_number(enum: str, prefix: str, value):
    """An enum given as its number, its full name or its name without the prefix
    ("SENSOR", "sensor", "CATEGORY_SENSOR")."""
    if isinstance(value, int):
        return value
    names = pb.ENUMS[enum]
    name = str(value).strip().upper().replace(" ", "_").replace("-", "_")
    for candidate in (name, prefix + name):
        if candidate in names:
            return names[candidate]
    raise ValueError(f"unknown {enum} {value!r}; one of {', '.join(sorted(names))}")


def accessory_message(accessory) -> "pb.ProvidedAccessory":
    """A ``pb.ProvidedAccessory`` from a message (copied) or a plain dict.

    A dict uses the message's field names (snake_case or the JSON camelCase);
    enums may be numbers or names with or without their prefix (``"category":
    "SENSOR"``, ``"format": "float"``, ``"unit": "celsius"``); a characteristic's
    ``"value"`` is a plain Python value (or a ``pb.Value``), converted with the
    characteristic's metadata format when it gives one; a characteristic may be
    just its type (``"On"``)."""
    if isinstance(accessory, pb.ProvidedAccessory):
        message = pb.ProvidedAccessory()
        message.CopyFrom(accessory)
        return message
    if not isinstance(accessory, Mapping):
        raise TypeError(f"an accessory is a pb.ProvidedAccessory or a dict, not {type(accessory).__name__}")
    data = copy.deepcopy(dict(accessory))
    if "category" in data:
        data["category"] = _enum_number("AccessoryCategory", "CATEGORY_", data["category"])
    values: List[Tuple[int, int, object, int]] = []
    for s_index, service in enumerate(data.get("services", ())):
        characteristics = service.get("characteristics", [])
        for c_index, characteristic in enumerate(characteristics):
            if isinstance(characteristic, str):
                characteristics[c_index] = characteristic = {"type": characteristic}
            metadata = characteristic.get("metadata")
            fmt = pb.FORMAT_UNSPECIFIED
            if metadata:
                for field, enum, prefix in (("format", "Format", "FORMAT_"), ("unit", "Unit", "UNIT_")):
                    if field in metadata:
                        metadata[field] = _enum_number(enum, prefix, metadata[field])
                fmt = metadata.get("format", fmt)
            if "value" in characteristic:
                value = characteristic.pop("value")
                if value is not None:
                    values.append((s_index, c_index, value, fmt))
    message = json_format.ParseDict(data, pb.ProvidedAccessory())
    for s_index, c_index, value, fmt in values:
        message.services[s_index].characteristics[c_index].value.CopyFrom(to_value(value, fmt))
    return message


# -- errors -------------------------------------------------------------------

# -- the provider -------------------------------------------------------------

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


class _Session:
    """One connection's command stream."""

    def __init__(self, client: Client, call):
        self.client = client
        self.call = call
        self.ended = threading.Event()
        self.reason: Optional[HomedError] = None


class Provider:
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
        self.provider_id = provider_id
        self.on_read = on_read
        self.on_write = on_write
        self.socket_path = socket_path
        self.client_name = client_name or f"provider {provider_id}"
        self.home_id = home_id
        self.workers = max(1, int(workers))
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

        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._register_lock = threading.RLock()  # one RegisterAccessories at a time
        self._accessories: "collections.OrderedDict[str, pb.ProvidedAccessory]" = collections.OrderedDict()
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
        self._key_ids: Dict[str, List[int]] = {}  # accessory key -> its characteristic ids
        self._session: Optional[_Session] = None  # set once registered
        self._client: Optional[Client] = None  # the current connection, registered or not
        self._registering = 0
        self._registrations = 0
        self._sent_keys: set = set()  # accessories registered with their values at least once
        self._error: Optional[BaseException] = None
        self._stop = threading.Event()
        self._running = False
        self._run_thread: Optional[threading.Thread] = None
        self._thread: Optional[threading.Thread] = None
        self._stats = collections.Counter()

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
        backoff = self.min_backoff
        held_since = None  # when OpenProvider was first refused with ALREADY_EXISTS
        pool = _Workers(self.workers, f"homed-provider-{self.provider_id}")
        try:
            while not self._stop.is_set():
                registered = False
                try:
                    registered = self._serve_once(pool)
                    held_since = None
                except HomedError as error:
                    if getattr(error, "held", False):
                        held_since = held_since if held_since is not None else time.monotonic()
                        if time.monotonic() - held_since < self.takeover_wait:
                            error.permanent = False
                            log.warning("provider %s: %s; trying again", self.provider_id, error.message)
                    if getattr(error, "permanent", False):
                        with self._lock:
                            self._error = error
                            self._changed.notify_all()
                        raise
                    log.info("provider %s: %s", self.provider_id, error)
                except OSError as error:
                    log.debug("provider %s: cannot connect: %s", self.provider_id, error)
                if self._stop.is_set():
                    break
                if registered:
                    backoff = self.min_backoff
                self._count("reconnects")
                if self._stop.wait(backoff):
                    break
                backoff = min(backoff * 2, self.max_backoff)
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
        ``answers_dropped`` (answers the daemon no longer waited for),
        ``registrations``, ``sessions``, ``reconnects``."""
        with self._lock:
            stats = dict(self._stats)
            stats["registrations"] = self._registrations
            return stats

    def _count(self, name: str) -> None:
        with self._lock:
            self._stats[name] += 1

    def wait_registered(self, timeout: Optional[float] = None, count: int = 1) -> bool:
        """Waits until ``count`` registrations have succeeded since the provider
        was made (1: the first; each reconnection, update and remove adds one).
        False on timeout, or at once when :meth:`run` ended (see :attr:`error`)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._registrations < count:
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
            request = pb.OpenProviderRequest(provider_id=self.provider_id).SerializeToString()
            call = client._open(pb.full_method_name("OpenProvider"), request, None)
            session = _Session(client, call)
            opened = self._first_command(session)
            self.known_keys = list(opened.known_keys)
            self.ping_interval_ms = opened.ping_interval_ms
            self._count("sessions")
            dispatcher = threading.Thread(target=self._dispatch, args=(session, pool),
                                          name=f"homed-provider-{self.provider_id}-commands", daemon=True)
            dispatcher.start()
            self._register_session(session)
            registered = True
            log.info("provider %s: registered %d accessories", self.provider_id, len(self._accessories))
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

    def _first_command(self, session: _Session):
        try:
            item = session.call.items.get(timeout=self.call_timeout)
        except queue.Empty:
            raise error_for(pb.DEADLINE_EXCEEDED, "OpenProvider: no answer from the daemon") from None
        if item[0] == "message":
            command = pb.ProviderCommand.FromString(item[1])
            if command.WhichOneof("command") == "opened":
                return command.opened
            raise error_for(pb.INTERNAL, f"OpenProvider: the first command is {command.WhichOneof('command')}, "
                                          "not opened")
        if item[0] == "status":
            error = error_for(item[1] if item[1] != pb.OK else pb.UNAVAILABLE,
                               item[2] or "the daemon ended the command stream at once")
            error.permanent = error.code in (pb.INVALID_ARGUMENT, pb.ALREADY_EXISTS)
            error.held = error.code == pb.ALREADY_EXISTS
            raise error
        raise item[1]

    def _dispatch(self, session: _Session, pool) -> None:
        """The command loop: pings answered here, at once; reads and writes on the pool."""
        try:
            while True:
                item = session.call.items.get()
                if item[0] != "message":
                    if item[0] == "status":
                        session.reason = error_for(item[1], item[2])
                    else:
                        session.reason = item[1]
                    return
                command = pb.ProviderCommand.FromString(item[1])
                kind = command.WhichOneof("command")
                if kind == "ping":
                    self._answer(session, pb.CommandAnswer(request_id=command.request_id), wait=False)
                    self._count("pings")
                elif kind in ("read", "write"):
                    try:
                        pool.submit(self._handle, session, command)
                    except RuntimeError:  # the pool is shut down: the provider is stopping
                        return
        finally:
            session.ended.set()

    def _answer(self, session: _Session, answer, wait: bool):
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

    def _handle(self, session: _Session, command) -> None:
        kind = command.WhichOneof("command")
        deadline = time.monotonic() + (command.timeout_ms or 5000) / 1000.0
        try:
            if kind == "read":
                answer = self._read_answer(command, deadline)
            else:
                answer = self._write_answer(command, deadline)
        except BaseException as error:  # noqa: BLE001 - never leave a command unanswered
            log.exception("provider %s: %s command %d failed", self.provider_id, kind, command.request_id)
            answer = pb.CommandAnswer(request_id=command.request_id)
            _set_status(answer, error)
        response = self._answer(session, answer, wait=True)
        with self._lock:
            self._stats[kind + "s"] += 1
            if response is not None and not response.accepted:
                self._stats["answers_dropped"] += 1
        if response is not None and not response.accepted:
            log.warning("provider %s: the daemon dropped the answer to %s %d (it came after its %d ms)",
                        self.provider_id, kind, command.request_id, command.timeout_ms)

    def _resolve(self, ids: Iterable[int], deadline: float) -> List[Optional[Ref]]:
        """The refs of these ids; waits (until the deadline) for a registration in
        flight to name ids it does not know yet."""
        ids = list(ids)
        with self._lock:
            while self._registering and any(i not in self._refs for i in ids):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._changed.wait(remaining)
            return [self._refs.get(i) for i in ids]

    def _read_answer(self, command, deadline: float):
        if self.on_read is None:
            return answers.no_reader(command, self.provider_id)
        refs = self._resolve(command.read.characteristic_ids, deadline)
        asked = answers.asked(refs)
        try:
            values = (self.on_read(asked) if asked else None) or {}
        except Exception as error:  # noqa: BLE001 - the handler's failure is the answer
            return answers.handler_failed(command, error)
        return answers.read_answer(command, self.provider_id, refs, values, self._formats)

    def _write_answer(self, command, deadline: float):
        if self.on_write is None:
            return answers.no_writer(command, self.provider_id)
        refs = self._resolve((w.characteristic_id for w in command.write.writes), deadline)
        refusal = answers.atomic_write_refusal(command, self.provider_id, refs)
        if refusal is not None:
            return refusal
        values = answers.write_values(command, refs, self._formats)
        try:
            failed = self.on_write(values, command.write.atomic) if values else None
        except Exception as error:  # noqa: BLE001 - the handler's failure is the answer
            return answers.handler_failed(command, error)
        return answers.write_answer(command, self.provider_id, refs, failed)

    # -- registration -----------------------------------------------------------

    def _registration_request(self, accessories, remove_keys=()):
        request = pb.RegisterAccessoriesRequest(home_id=self.home_id)
        request.accessories.extend(accessories)
        request.remove_keys.extend(remove_keys)
        return request

    def _register_session(self, session: _Session) -> None:
        """Registers every accessory on a new connection (values stripped after the
        first time, when on_read can tell the current ones)."""
        with self._register_lock:
            with self._lock:
                accessories = list(self._accessories.values())
                removed = sorted(k for k in self._removed if k in set(self.known_keys))
                if self.on_read is not None:  # values already sent are read afresh instead
                    accessories = [_without_values(a) if a.key in self._sent_keys else a for a in accessories]
                self._registering += 1
            try:
                self._register(session.client, accessories, removed)
                with self._lock:
                    self._removed.clear()  # the others were not known to the daemon
                    self._sent_keys.update(a.key for a in accessories)
                    self._session = session
                self._registered()
            finally:
                with self._lock:
                    self._registering -= 1
                    self._changed.notify_all()

    def _register(self, client: Client, accessories, remove_keys=()):
        """Registers accessories in as many calls as it takes (one when it can):
        at most 1 000 per call, bridges first, and each call's request and
        response within the connection's frame size. Returns one response with
        every accessory (and the last seq)."""
        accessories = list(accessories)
        if len(accessories) > MAX_ACCESSORIES_PER_CALL:
            bridges = {a.bridge_key for a in accessories if a.bridge_key}
            accessories = [a for a in accessories if a.key in bridges] + \
                [a for a in accessories if a.key not in bridges]
        responses = []
        for start in range(0, max(1, len(accessories)), MAX_ACCESSORIES_PER_CALL):
            self._register_batch(client, accessories[start:start + MAX_ACCESSORIES_PER_CALL],
                                 remove_keys if start == 0 else (), responses)
        merged = pb.RegisterAccessoriesResponse()
        for response in responses:
            merged.accessories.extend(response.accessories)
            merged.seq = max(merged.seq, response.seq)
        return merged

    def _register_batch(self, client: Client, accessories, remove_keys, responses) -> None:
        if len(accessories) > 1:
            size = self._registration_request(accessories, remove_keys).ByteSize()
            if size + 1024 > client.max_frame_size:  # the request alone would not fit a frame
                half = len(accessories) // 2
                self._register_batch(client, accessories[:half], remove_keys, responses)
                self._register_batch(client, accessories[half:], (), responses)
                return
        try:
            responses.append(self._register_call(client, accessories, remove_keys))
        except HomedError as error:
            if error.code != pb.RESOURCE_EXHAUSTED or len(accessories) <= 1:
                raise
            # The response did not fit a frame, but the registration took effect
            # (removals too): register the same again in halves to learn the ids.
            log.info("provider %s: the response for %d accessories exceeds the frame size; asking in halves",
                     self.provider_id, len(accessories))
            half = len(accessories) // 2
            self._register_batch(client, accessories[:half], (), responses)
            self._register_batch(client, accessories[half:], (), responses)

    def _register_call(self, client: Client, accessories, remove_keys):
        try:
            response = client.call("RegisterAccessories", self._registration_request(accessories, remove_keys),
                                   timeout=self.call_timeout)
        except HomedError as error:
            error.permanent = error.code in _PERMANENT
            raise
        self._install(accessories, response, remove_keys)
        if self.on_registered is not None:
            try:
                self.on_registered(response)
            except Exception:  # noqa: BLE001 - a callback's bug must not end the provider
                log.exception("provider %s: on_registered failed", self.provider_id)
        return response

    def _install(self, accessories, response, removed=()) -> None:
        with self._lock:
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
            self._changed.notify_all()

    def _registered(self) -> None:
        with self._lock:
            self._registrations += 1
            self._changed.notify_all()

    def _forget(self, key: str) -> None:
        self._accessory_ids.pop(key, None)
        for cid in self._key_ids.pop(key, ()):
            ref = self._refs.pop(cid, None)
            if ref is not None and self._ids.get(ref) == cid:
                del self._ids[ref]
            self._formats.pop(cid, None)
            self._characteristics.pop(cid, None)

    def update(self, accessories: Sequence) -> Optional[object]:
        """Adds accessories, or replaces those with the same keys, now (when
        connected) and at every later registration. Returns the
        RegisterAccessoriesResponse, or None when not connected (they are
        registered when it connects). Raises HomedError when the daemon refuses
        them (and then keeps the previous set)."""
        messages = [accessory_message(a) for a in accessories]
        with self._register_lock:
            with self._lock:
                previous = collections.OrderedDict(self._accessories)
                for message in messages:
                    self._accessories[message.key] = message
                    self._removed.discard(message.key)
                session = self._session if self.connected else None
                if session is not None:
                    self._registering += 1
            if session is None:
                return None
            try:
                response = self._register(session.client, messages)
                with self._lock:
                    self._sent_keys.update(m.key for m in messages)
                self._registered()
                return response
            except HomedError:
                with self._lock:
                    self._accessories = previous
                raise
            finally:
                with self._lock:
                    self._registering -= 1
                    self._changed.notify_all()

    def remove(self, keys: Iterable[str]) -> Optional[object]:
        """Removes these accessories (with whatever referred to them in the home:
        scenes' actions, groups' services). When not connected, they are removed
        at the next registration. Returns the response, or None when not
        connected."""
        keys = list(keys)
        with self._register_lock:
            with self._lock:
                for key in keys:
                    self._accessories.pop(key, None)
                session = self._session if self.connected else None
                if session is None:
                    self._removed.update(keys)
                    return None
                known = [k for k in keys if k in self._accessory_ids]
                self._registering += 1
            try:
                if not known:
                    return None
                response = self._register(session.client, [], known)
                self._registered()
                return response
            finally:
                with self._lock:
                    self._registering -= 1
                    self._changed.notify_all()

    # -- names and ids ----------------------------------------------------------

    @property
    def accessories(self) -> List[object]:
        """The accessories as they are registered now (copies)."""
        with self._lock:
            return [accessory_message(a) for a in self._accessories.values()]

    @property
    def refs(self) -> List[Ref]:
        """Every characteristic registered, as refs."""
        with self._lock:
            return list(self._ids)

    def id_of(self, ref) -> Optional[int]:
        """The daemon's id of a characteristic, once registered."""
        with self._lock:
            return self._ids.get(Ref(*ref))

    def ref_of(self, characteristic_id: int) -> Optional[Ref]:
        with self._lock:
            return self._refs.get(characteristic_id)

    def accessory_id(self, key: str) -> Optional[int]:
        """The daemon's id of an accessory, once registered."""
        with self._lock:
            return self._accessory_ids.get(key)

    def characteristic(self, ref):
        """The ``pb.Characteristic`` as last registered (format, range, …), or None."""
        with self._lock:
            cid = self._ids.get(Ref(*ref))
            return None if cid is None else self._characteristics.get(cid)

    # -- changes from the devices -----------------------------------------------

    def _connected_session(self) -> _Session:
        session = self._session
        if session is None or session.ended.is_set():
            raise error_for(pb.UNAVAILABLE, f"provider {self.provider_id!r} is not connected to homed")
        return session

    def report(self, values: ValuesArg) -> int:
        """Reports values the devices now hold, in one call: ``{ref: value}``, or
        ``[(ref, value), …]`` to report one characteristic more than once (readings
        a device buffered, each a change of its own). Returns the daemon's
        sequence number once they took effect. Raises HomedError: UNAVAILABLE when
        not connected, NOT_FOUND for a ref not registered, INVALID_ARGUMENT for a
        value its format cannot take, or the first value the daemon refused (the
        others are applied)."""
        session = self._connected_session()
        pairs = list(values.items()) if isinstance(values, Mapping) else list(values)
        report = pb.ValueReport()
        with self._lock:
            for ref, value in pairs:
                ref = Ref(*ref)
                cid = self._ids.get(ref)
                if cid is None:
                    raise error_for(pb.NOT_FOUND, f"provider {self.provider_id!r} registered no characteristic {ref}")
                try:
                    converted = to_value(value, self._formats.get(cid, pb.FORMAT_UNSPECIFIED))
                except (TypeError, ValueError) as error:
                    raise error_for(pb.INVALID_ARGUMENT, f"{ref}: {error}") from None
                report.values.add(characteristic_id=cid, value=converted)
        return self._send_report(session, report)

    def set_reachable(self, accessory_key: str, reachable: bool) -> int:
        """Says whether one of its devices answers (a device that went offline, or
        came back). Returns the daemon's sequence number."""
        session = self._connected_session()
        accessory_id = self.accessory_id(accessory_key)
        if accessory_id is None:
            raise error_for(pb.NOT_FOUND,
                             f"provider {self.provider_id!r} registered no accessory with key {accessory_key!r}")
        report = pb.ValueReport()
        report.reachability.add(accessory_id=accessory_id, reachable=bool(reachable))
        return self._send_report(session, report)

    def _send_report(self, session: _Session, report) -> int:
        response = session.client.call("ReportValues", report, timeout=self.call_timeout)
        for rejected in response.rejected:
            if rejected.code != pb.OK:
                ref = self.ref_of(rejected.characteristic_id)
                raise error_for(rejected.code, f"{ref}: {rejected.message}" if ref else rejected.message)
        return response.seq


def _without_values(accessory):
    message = pb.ProvidedAccessory()
    message.CopyFrom(accessory)
    for service in message.services:
        for characteristic in service.characteristics:
            characteristic.ClearField("value")
    return message


# Newer schemas tell each service's provider key; older ones only the order.
_SERVICE_HAS_KEY = "provider_key" in pb.AccessoryService.DESCRIPTOR.fields_by_name


def _references(accessory, provided) -> Dict[int, Tuple[Ref, object]]:
    """{characteristic id: (Ref, pb.Characteristic)} of a registered accessory.
    The response lists AccessoryInformation first, then the services in the
    order the provider declared them, which gives each service its key."""
    out: Dict[int, Tuple[Ref, object]] = {}
    services = list(accessory.services)
    declared = list(provided.services) if provided is not None else []
    offset = len(services) - len(declared)  # 1: AccessoryInformation first
    ranks: Dict[str, int] = {}
    key = accessory.provider_key or (provided.key if provided is not None else "")
    for index, service in enumerate(services):
        given = declared[index - offset] if offset == 1 and index >= 1 else None
        service_key = getattr(service, "provider_key", "") if _SERVICE_HAS_KEY else ""
        if service.type_name == INFORMATION_SERVICE and index == 0:
            name = INFORMATION_SERVICE
        elif service_key:
            name = service_key
        elif given is not None and given.key:
            name = given.key
        else:
            rank = ranks.get(service.type_name, 0) + 1
            ranks[service.type_name] = rank
            name = service.type_name if rank == 1 else f"{service.type_name}#{rank}"
        for characteristic in service.characteristics:
            out[characteristic.id] = (Ref(key, name, characteristic.type_name), characteristic)
    return out
