"""Writes confirmed by the device's state, or refused by the device itself: a
Shelly answers each RPC call, and an error answer (its authentication, a
value it does not take) fails the write at once instead of at the deadline."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Tuple

from homed.echo import EchoMatcher, Pending

__all__ = ["EchoWithErrors", "refused"]


class EchoWithErrors(EchoMatcher):
    """homed.echo's matcher, and `fail()` for a device's own refusal."""

    def fail(self, device: str, refs: Iterable[Any], error: Tuple[int, str]) -> None:
        """The device refused these writes: they stop waiting, with `error` (code, message)."""
        refs = set(refs)
        with self._lock:
            for pending in self._pending.get(device, []):
                for ref in [r for r in pending.waiting if r in refs]:
                    del pending.waiting[ref]
                    refused(pending)[ref] = error
            self._lock.notify_all()


def refused(pending: Pending) -> Dict[Any, Tuple[int, str]]:
    """{ref: (code, message)} of the writes of `pending` the device refused."""
    if not hasattr(pending, "refused"):
        pending.refused = {}
    return pending.refused
