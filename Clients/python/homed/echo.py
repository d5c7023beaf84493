"""Writes confirmed by the device's state echo, with no I/O: for providers of
devices that answer nothing to a command (Zigbee2MQTT's `/set`, an MQTT command
topic), where the device's next state message is the only sign that it took the
value. A `Pending` write waits for each characteristic it wrote to
be read back within a tolerance (a brightness on the device's 0–255 scale), or
to be acknowledged by another one (a cover that starts moving took its new
target); writes that never see their echo end at their deadline, and the
driver answers DEADLINE_EXCEEDED for them.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Iterable, List, Optional, Set

from .refs import Ref

__all__ = ["Pending", "EchoMatcher", "matches"]


def matches(written: Any, echoed: Any, tolerance: float) -> bool:
    """Whether a value read back confirms a written one."""
    if isinstance(written, bool) or isinstance(echoed, bool):
        return isinstance(written, bool) and isinstance(echoed, bool) and written == echoed
    if isinstance(written, (int, float)) and isinstance(echoed, (int, float)):
        return abs(float(written) - float(echoed)) <= tolerance + 1e-9
    return written == echoed


class Pending:
    """One write command's values on one device, until echoed."""

    def __init__(self, device: str, values: Dict[Ref, Any], tolerances: Dict[Ref, float]):
        self.device = device
        self.waiting: Dict[Ref, Any] = dict(values)
        self.tolerances = tolerances
        self.echoed: Dict[Ref, Any] = {}

    @property
    def done(self) -> bool:
        return not self.waiting


class EchoMatcher:
    """Every write waiting for an echo, by device; thread-safe (state messages
    come on the MQTT thread, writes wait on the provider's workers)."""

    def __init__(self):
        self._lock = threading.Condition()
        self._pending: Dict[str, List[Pending]] = {}

    def add(self, device: str, values: Dict[Ref, Any], tolerances: Dict[Ref, float]) -> Pending:
        pending = Pending(device, values, tolerances)
        with self._lock:
            self._pending.setdefault(device, []).append(pending)
        return pending

    def observe(self, device: str, decoded: Dict[Ref, Any], acks: Iterable[Ref] = ()) -> Set[Ref]:
        """A state message of `device`, decoded: marks what it echoes (and
        what it acknowledges: those keep the value written). Returns the refs
        it confirmed (the driver does not report those apart: the write's
        acknowledgement sets them)."""
        confirmed: Set[Ref] = set()
        acks = set(acks)
        with self._lock:
            for pending in self._pending.get(device, []):
                for ref, written in list(pending.waiting.items()):
                    if ref in decoded and matches(written, decoded[ref], pending.tolerances.get(ref, 0.0)):
                        pending.echoed[ref] = decoded[ref]
                    elif ref in acks:
                        pending.echoed[ref] = written
                    else:
                        continue
                    del pending.waiting[ref]
                    confirmed.add(ref)
            if confirmed:
                self._lock.notify_all()
        return confirmed

    def wait(self, pending: Pending, timeout: Optional[float]) -> bool:
        """Waits (at most `timeout` seconds) until every value of `pending` was
        echoed; then, or at the deadline, forgets it. True when all were."""
        with self._lock:
            self._lock.wait_for(lambda: pending.done, timeout)
            self._forget(pending)
            return pending.done

    def cancel_device(self, device: str) -> None:
        """The device went away: its writes wait on until their deadline, but
        nothing said later (under a new registration) confirms them."""
        with self._lock:
            self._pending.pop(device, None)

    def _forget(self, pending: Pending) -> None:
        waiting = self._pending.get(pending.device, [])
        if pending in waiting:
            waiting.remove(pending)
        if not waiting:
            self._pending.pop(pending.device, None)
