"""One read or write command of the daemon, from its receipt to its answer:
its deadline, what to ask the handler, and the answer made from what the
handler did.

No I/O and no clock here: the provider passes the time it received the command
and the time it is now (``time.monotonic()``), so that the decisions can be
tested without a daemon. The synchronous and the asyncio providers differ only
in how they wait for a registration and call the handler::

    job = Job(command, provider_id, received_at=now())
    refs = <the Refs of job.ids, once a registration in flight named them>
    answer = job.begin(refs, formats, has_handler, now())
    if job.late:        # the daemon has already given up: nothing to run or send
        return
    if answer is None:  # the handler decides
        try:
            answer = job.finish(handler(*job.args))
        except Exception as error:
            answer = job.failed(error)
    send(answer)
"""

from __future__ import annotations

from typing import List, Mapping, Optional, Sequence

from . import answers
from . import proto as pb
from .values import set_status

__all__ = ["Job", "DEFAULT_WAIT"]

#: How long (seconds) a command with no ``timeout_ms`` may wait for a
#: registration in flight to name its ids.
DEFAULT_WAIT = 5.0


class Job:
    """A ``read`` or ``write`` ProviderCommand being handled."""

    def __init__(self, command, provider_id: str, received_at: float):
        self.command = command
        self.provider_id = provider_id
        self.kind: str = command.WhichOneof("command")
        self.request_id: int = command.request_id
        self.received_at = received_at
        #: When the daemon stops waiting for the answer (the clock of
        #: ``received_at``); None when the command gives no timeout. Measured
        #: from when the provider took the command, a little after the daemon
        #: sent it: the deadline known here is never earlier than the daemon's.
        self.deadline: Optional[float] = (
            received_at + command.timeout_ms / 1000.0 if command.timeout_ms else None)
        #: True once :meth:`begin` found the deadline passed.
        self.late = False
        #: The handler's arguments, once :meth:`begin` left the answer to it:
        #: ``(refs,)`` for a read, ``({ref: value}, atomic)`` for a write.
        self.args: tuple = ()
        self._refs: List = []
        self._formats: Mapping[int, int] = {}

    @property
    def ids(self) -> List[int]:
        """The characteristic ids the command names, in its order."""
        if self.kind == "read":
            return list(self.command.read.characteristic_ids)
        return [w.characteristic_id for w in self.command.write.writes]

    @property
    def wait_until(self) -> float:
        """Until when waiting for a registration in flight may go on."""
        return self.deadline if self.deadline is not None else self.received_at + DEFAULT_WAIT

    def is_late(self, now: float) -> bool:
        """True when the daemon has stopped waiting: it has answered the caller
        DEADLINE_EXCEEDED and would drop an answer (``accepted: false``)."""
        return self.deadline is not None and now > self.deadline

    def begin(self, refs: Sequence, formats: Mapping[int, int], has_handler: bool, now: float):
        """Decides what to do with the command, once ``refs`` (the Ref of each of
        :attr:`ids`, or None) are known. Returns the answer when it needs no
        handler; None when the handler must run with :attr:`args`, or when the
        command is late (:attr:`late` set: run nothing, send nothing)."""
        if self.is_late(now):
            self.late = True
            return None
        self._refs = list(refs)
        self._formats = formats
        if self.kind == "read":
            if not has_handler:
                return answers.no_reader(self.command, self.provider_id)
            asked = answers.asked(self._refs)
            if not asked:
                return self.finish({})
            self.args = (asked,)
            return None
        if not has_handler:
            return answers.no_writer(self.command, self.provider_id)
        refusal = answers.atomic_write_refusal(self.command, self.provider_id, self._refs)
        if refusal is not None:
            return refusal
        values = answers.write_values(self.command, self._refs, formats)
        if not values:
            return self.finish(None)
        self.args = (values, self.command.write.atomic)
        return None

    def finish(self, result):
        """The answer from what the handler returned: ``{ref: value}`` (or None)
        for a read, None or ``{ref: error}`` for a write."""
        if self.kind == "read":
            return answers.read_answer(self.command, self.provider_id, self._refs, result or {}, self._formats)
        return answers.write_answer(self.command, self.provider_id, self._refs, result)

    def failed(self, error: BaseException):
        """The answer when the handler raised ``error``: every item fails with it."""
        return answers.handler_failed(self.command, error)

    def crashed(self, error: BaseException):
        """The answer when handling the command failed outside the handler (a
        bug): never leave the daemon waiting."""
        answer = pb.CommandAnswer(request_id=self.request_id)
        set_status(answer, error)
        return answer
