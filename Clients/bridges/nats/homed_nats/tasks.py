"""Ending tasks and waiting for acknowledgements so that a cancel is never lost.

Python 3.11's ``asyncio.wait_for`` returns the awaited result when that result
and a cancel of the waiting task arrive in the same turn of the event loop: the
cancel is dropped and the task goes on. A task the bridge cancels to start
again must end, or the bridge waits for it for ever; so the waits here are
built on ``asyncio.wait``, which never takes a cancel for itself."""

from __future__ import annotations

import asyncio
from typing import Iterable, Optional

__all__ = ["end_all", "result_within"]

#: How long one cancel is given before the task is cancelled again.
CANCEL_AGAIN_AFTER = 0.5


async def end_all(tasks: Iterable[asyncio.Future]) -> None:
    """Cancels every task and returns once all have ended, cancelling again a
    task that went on after a cancel (one dropped by a library's wait). Their
    outcomes are taken, so none is reported as never retrieved."""
    tasks = list(tasks)
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=CANCEL_AGAIN_AFTER)
    for task in tasks:
        if not task.cancelled():
            task.exception()


async def result_within(future: asyncio.Future, timeout: float) -> Optional[object]:
    """The future's result, or None when it has none within `timeout` seconds
    (the future is left alone). A cancel of the caller is raised, even when the
    result came in the same turn."""
    await asyncio.wait((future,), timeout=timeout)
    if not future.done():
        return None
    return future.result()
