"""The state of an accessory provider, with no I/O: which accessories it
serves, what the daemon has registered (:class:`~homed.refs.RefTable`), what
was removed while disconnected, the counters, the first command of a session,
the registrations to make, the commands to handle, the reports to send, and
when to connect again.

``homed.provider.Provider`` (threads) and ``homed.aio.Provider`` (asyncio) are
drivers over one :class:`ProviderCore` each (through
:class:`homed.provider_base.ProviderBase`): they make the calls and wait the
waits this module plans, so every decision is made once, here. Nothing here
locks: the threaded driver holds its lock while it uses the core."""

from __future__ import annotations

import collections
import logging
from typing import Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence

from . import proto as pb
from .accessories import accessory_message, without_values
from .commands import Job
from .errors import HomedError, Internal, InvalidArgument, NotFound, Unavailable, error_for
from .framing import DEFAULT_MAX_FRAME_SIZE
from .refs import Ref, RefTable
from .registration import RegistrationPlan
from .values import to_value

__all__ = ["ProviderCore", "Change", "Reconnecting", "opened_of", "open_refused"]

log = logging.getLogger("homed.provider")


def opened_of(command):
    """The ``ProviderOpened`` of a session's first command (None: the stream
    ended at once); raises when the stream began otherwise."""
    if command is None:
        raise Unavailable("the daemon ended the command stream at once")
    kind = command.WhichOneof("command")
    if kind != "opened":
        raise Internal(f"OpenProvider: the first command is {kind}, not opened")
    return command.opened


def open_refused(error: HomedError) -> HomedError:
    """Marks an OpenProvider refusal: ``permanent`` (retrying cannot help) and
    ``held`` (another connection holds the id: see :class:`Reconnecting`)."""
    # PERMISSION_DENIED: serving accessories needs the admin role, which no retry gives.
    error.permanent = error.code in (pb.INVALID_ARGUMENT, pb.ALREADY_EXISTS, pb.PERMISSION_DENIED)
    if error.code == pb.PERMISSION_DENIED and "needs the admin role" in error.message:
        error.message += ("; serving accessories needs the admin role: run the provider as the homed user "
                          "(User=homed in its unit) or add its user under roles.admins in homed's configuration, "
                          "then `systemctl reload homed`")
    error.held = error.code == pb.ALREADY_EXISTS
    return error


class Change(NamedTuple):
    """A change of the set of accessories, made in the core: what to register
    and remove now, if anything."""

    accessories: List[object]
    remove_keys: List[str]
    #: True when the daemon is to be told now (connected, and something to tell).
    now: bool
    #: The set before, restored when the daemon refuses an update.
    previous: Optional[object]


class Reconnecting:
    """When to connect again: after ``min_backoff`` seconds, doubling to
    ``max_backoff``, back to the minimum once a connection registered; and
    whether an error ends the provider. ALREADY_EXISTS (another connection
    holds the id) is retried for ``takeover_wait`` seconds, long enough for a
    hung earlier instance to lose its session by missing a ping."""

    def __init__(self, min_backoff: float, max_backoff: float, takeover_wait: float, provider_id: str = ""):
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.takeover_wait = takeover_wait
        self.provider_id = provider_id
        self.backoff = min_backoff
        self._held_since: Optional[float] = None

    def served(self, registered: bool) -> None:
        """A connection ended without an error; ``registered``: it registered."""
        self._held_since = None
        if registered:
            self.backoff = self.min_backoff

    def failed(self, error: BaseException, now: float) -> bool:
        """A connection failed with ``error`` at ``now``: True when it ends the
        provider (a HomedError marked permanent), False to connect again."""
        if isinstance(error, PermissionError):  # SocketNotPermitted: the socket is not ours to open
            error.permanent = True
            return True
        if not isinstance(error, HomedError):
            log.debug("provider %s: cannot connect: %s", self.provider_id, error)
            return False
        if getattr(error, "held", False):
            if self._held_since is None:
                self._held_since = now
            if now - self._held_since < self.takeover_wait:
                error.permanent = False
                log.warning("provider %s: %s; trying again", self.provider_id, error.message)
        if getattr(error, "permanent", False):
            return True
        log.info("provider %s: %s", self.provider_id, error)
        return False

    def wait(self) -> float:
        """How long to wait before the next connection (and doubles the next wait)."""
        wait = self.backoff
        self.backoff = min(self.backoff * 2, self.max_backoff)
        return wait


class ProviderCore:
    """What a provider knows and decides (see the module's docstring)."""

    def __init__(self, provider_id: str, accessories: Sequence = (), home_id: int = 0):
        self.provider_id = provider_id
        self.home_id = home_id
        self.accessories: "collections.OrderedDict[str, object]" = collections.OrderedDict()
        for accessory in accessories:
            message = accessory_message(accessory)
            if message.key in self.accessories:
                raise ValueError(f"accessory key {message.key!r} is given twice")
            self.accessories[message.key] = message
        self.table = RefTable()
        #: Keys removed while not connected: removed at the next registration.
        self.removed: set = set()
        #: Keys registered with their values at least once.
        self.sent_keys: set = set()
        #: The keys the daemon knew from this provider when the stream last opened.
        self.known_keys: List[str] = []
        #: The daemon's ping interval (ms), from the last ``opened``.
        self.ping_interval_ms = 0
        #: Registrations under way: a command naming ids not known yet waits for them.
        self.registering = 0
        #: Registrations that succeeded.
        self.registrations = 0
        self.counters: "collections.Counter[str]" = collections.Counter()

    # -- counters ---------------------------------------------------------------

    def count(self, name: str) -> None:
        self.counters[name] += 1

    @property
    def stats(self) -> Dict[str, int]:
        """``pings``, ``reads``, ``writes`` (commands answered), ``late`` (commands
        skipped because their deadline had passed), ``answers_dropped`` (answers
        the daemon no longer waited for), ``registrations``, ``sessions``,
        ``reconnects``."""
        stats = dict(self.counters)
        stats["registrations"] = self.registrations
        return stats

    # -- a session --------------------------------------------------------------

    def opened(self, command):
        """Takes in a session's first command (see :func:`opened_of`)."""
        opened = opened_of(command)
        self.known_keys = list(opened.known_keys)
        self.ping_interval_ms = opened.ping_interval_ms
        self.count("sessions")
        return opened

    def plan(self, accessories: Sequence, remove_keys: Sequence[str] = (), max_frame_size: int = 0):
        return RegistrationPlan(self.home_id, accessories, remove_keys,
                                max_frame_size or DEFAULT_MAX_FRAME_SIZE, self.provider_id)

    def session_plan(self, reads: bool, max_frame_size: int) -> RegistrationPlan:
        """Every accessory, for a new session, with the keys removed while
        disconnected that the daemon knows. ``reads``: the provider has a read
        handler, so values already sent once are left out and read afresh
        instead (the daemon then publishes only what changed while away)."""
        known = set(self.known_keys)
        removed = sorted(k for k in self.removed if k in known)
        accessories = list(self.accessories.values())
        if reads:
            accessories = [without_values(a) if a.key in self.sent_keys else a for a in accessories]
        plan = self.plan(accessories, removed, max_frame_size)
        plan.session = True
        return plan

    def installed(self, batch, response) -> None:
        """One call of a plan succeeded: the tables learn its ids."""
        self.table.install(batch.accessories, response, batch.forget)

    def registered(self, plan: RegistrationPlan) -> None:
        """Every call of a plan succeeded."""
        if plan.session:
            self.removed.clear()  # the others were not known to the daemon
        self.sent_keys.update(a.key for a in plan.accessories)
        self.registrations += 1

    # -- changing the set -------------------------------------------------------

    def stage_update(self, accessories: Iterable, connected: bool) -> "Change":
        """Adds accessories, or replaces those with the same keys; to register
        now when connected (else at the next registration)."""
        messages = [accessory_message(a) for a in accessories]
        previous = collections.OrderedDict(self.accessories)
        for message in messages:
            self.accessories[message.key] = message
            self.removed.discard(message.key)
        return Change(messages, [], connected, previous)

    def stage_remove(self, keys: Iterable[str], connected: bool) -> "Change":
        """Removes accessories from the set; from the daemon now when connected
        and it has them (this session's, or known from an earlier one), else at
        the next registration."""
        keys = list(keys)
        for key in keys:
            self.accessories.pop(key, None)
        if not connected:
            self.removed.update(keys)
            return Change([], [], False, None)
        # Known to the daemon: registered in this session, or from an earlier
        # one (the keys the session opened with: a device gone while away).
        known = [k for k in keys if k in self.table.accessory_ids or k in self.known_keys]
        self.known_keys = [k for k in self.known_keys if k not in known]
        return Change([], known, bool(known), None)

    def undo(self, change: "Change") -> None:
        """The daemon refused a change: the set is as it was before it."""
        if change.previous is not None:
            self.accessories = change.previous

    # -- commands ---------------------------------------------------------------

    def job(self, command, received_at: float) -> Job:
        return Job(command, self.provider_id, received_at)

    def refs_wait(self, job: Job, now: float) -> float:
        """How long to wait before looking up the command's Refs: while a
        registration is under way it may yet name ids not known now, until the
        command's deadline. 0: look them up now (``table.refs_of(job.ids)``)."""
        if not self.registering or self.table.knows_all(job.ids):
            return 0.0
        return max(0.0, job.wait_until - now)

    def begin(self, job: Job, has_handler: bool, now: float):
        """:meth:`Job.begin` with the Refs known now; a late command is counted
        (``late``) and logged at debug."""
        answer = job.begin(self.table.refs_of(job.ids), self.table.formats, has_handler, now)
        if job.late:
            self._skipped(job, now)
        return answer

    def _skipped(self, job: Job, now: float) -> None:
        self.count("late")
        log.debug("provider %s: %s %d skipped: its %d ms had passed %.0f ms before it could be handled",
                  self.provider_id, job.kind, job.request_id, job.command.timeout_ms,
                  (now - job.deadline) * 1000.0 if job.deadline is not None else 0.0)

    def answered(self, job: Job, response) -> None:
        """An answer was sent; ``response``: the AnswerCommandResponse (None when
        the connection was gone)."""
        self.count(job.kind + "s")
        if response is not None and not response.accepted:
            self.count("answers_dropped")
            log.warning("provider %s: the daemon dropped the answer to %s %d (it came after its %d ms)",
                        self.provider_id, job.kind, job.request_id, job.command.timeout_ms)

    # -- reports ----------------------------------------------------------------

    def value_report(self, values) -> "pb.ValueReport":
        """The ReportValues request for ``{ref: value}`` or ``[(ref, value), …]``.
        Raises NotFound for a ref not registered, InvalidArgument for a value
        its format cannot take."""
        pairs = list(values.items()) if isinstance(values, Mapping) else list(values)
        report = pb.ValueReport()
        for ref, value in pairs:
            ref = Ref(*ref)
            cid = self.table.ids.get(ref)
            if cid is None:
                raise NotFound(f"provider {self.provider_id!r} registered no characteristic {ref}")
            try:
                converted = to_value(value, self.table.format_of(cid))
            except (TypeError, ValueError) as error:
                raise InvalidArgument(f"{ref}: {error}") from None
            report.values.add(characteristic_id=cid, value=converted)
        return report

    def reachability_report(self, accessory_key: str, reachable: bool) -> "pb.ValueReport":
        accessory_id = self.table.accessory_ids.get(accessory_key)
        if accessory_id is None:
            raise NotFound(f"provider {self.provider_id!r} registered no accessory with key {accessory_key!r}")
        report = pb.ValueReport()
        report.reachability.add(accessory_id=accessory_id, reachable=bool(reachable))
        return report

    def report_seq(self, response) -> int:
        """The seq of a ReportValues response; raises the first refusal in it."""
        for rejected in response.rejected:
            if rejected.code != pb.OK:
                ref = self.table.refs.get(rejected.characteristic_id)
                raise error_for(rejected.code, f"{ref}: {rejected.message}" if ref else rejected.message)
        return response.seq

    def not_connected(self) -> HomedError:
        return Unavailable(f"provider {self.provider_id!r} is not connected to homed")
