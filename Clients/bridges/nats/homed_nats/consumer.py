"""A stream's records after a position, in order, each once: a pull consumer
of its own (ephemeral, no acknowledgements) whose messages come to a callback.

The pull requests are made here, not with nats-py's ``fetch``: ``fetch`` waits
for each message of a batch in a task of its own, which held a remote reader
to about half the records a second a callback takes (Clients/bridges/nats/
README.md, "Benchmarks"). A pull consumer, not a push one, because a reader in
another account reaches the stream only through the JetStream API it imports
(the answers to a pull request come back as that request's replies; a push
consumer's deliveries would need an import of their own).

One request of ``batch`` messages is open at a time, and the next is made only
while fewer than ``batch`` messages wait to be taken: a reader that does not
take is not sent more. At a gap in the consumer's delivery count (a connection
cut while messages were in flight), or a consumer the server no longer has
(a server restart), the consumer is broken: its owner closes it and makes
another after the last record it took, so nothing is skipped."""

from __future__ import annotations

import asyncio
import collections
import json
from typing import Deque, List, Optional

import nats.errors
import nats.js.errors
from nats.js import api

__all__ = ["StreamConsumer"]

#: How long the server holds one pull request with nothing to send.
REQUEST_EXPIRES = 5.0


class StreamConsumer:
    """Every message of `stream` after `start_after` that `filter_subjects`
    select. :attr:`broken` (with :attr:`why`) once it can deliver no more in
    order. `api_prefix` is the JetStream API's subject prefix as this
    connection reaches it (another account's import)."""

    def __init__(self, nc, js, stream: str, filter_subjects: List[str], start_after: int, batch: int = 1024,
                 api_prefix: str = "$JS.API", quiet_check: float = 1.0):
        self.nc = nc
        self.js = js
        self.stream = stream
        self.filter_subjects = filter_subjects
        self.start_after = start_after
        self.batch = batch
        self.api_prefix = api_prefix
        # Nothing for `quiet_check` seconds: the server is asked whether it still
        # has the consumer (a restart of a server loses it, and says nothing).
        self.quiet_check = quiet_check
        self.broken = False
        self.why = ""
        self.name: Optional[str] = None
        self._messages: Deque = collections.deque()
        self._arrived = asyncio.Event()
        self._delivered = 0  # the consumer's count of the messages given so far
        self._outstanding = 0  # messages the open request may still bring
        self._requested_at = 0.0
        self._last_look = 0.0
        self._sub = None
        self._inbox = ""
        self._next = ""

    async def start(self) -> "StreamConsumer":
        config = api.ConsumerConfig(deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
                                    opt_start_seq=self.start_after + 1, ack_policy=api.AckPolicy.NONE,
                                    filter_subjects=list(self.filter_subjects), inactive_threshold=60.0,
                                    mem_storage=True)
        info = await self.js.add_consumer(self.stream, config=config)
        self.name = info.name
        self._next = f"{self.api_prefix}.CONSUMER.MSG.NEXT.{self.stream}.{self.name}"
        self._inbox = self.nc.new_inbox()
        self._sub = await self.nc.subscribe(self._inbox, cb=self._on_message)
        self._last_look = asyncio.get_running_loop().time()
        await self._request()
        return self

    async def _request(self) -> None:
        self._outstanding = self.batch
        self._requested_at = asyncio.get_running_loop().time()
        body = json.dumps({"batch": self.batch, "expires": int(REQUEST_EXPIRES * 1e9)}).encode()
        await self.nc.publish(self._next, body, reply=self._inbox)

    async def _on_message(self, msg) -> None:
        if self.broken:
            return
        status = (msg.headers or {}).get(api.Header.STATUS) if not msg.data else None
        if status:
            if status in ("404", "408"):
                # The request ended (nothing more now, or it expired): another.
                self._outstanding = 0
                await self._request_if_room()
            elif status == "409":
                # The consumer deleted, or the stream's leader changed: not to be
                # asked again (a request refused for too many waiting is a 409 too,
                # and a new consumer is as good).
                self._break(f"the server ended the pull: {(msg.headers or {}).get(api.Header.DESCRIPTION, '')}")
            return  # 100: a heartbeat
        delivered = msg.metadata.sequence.consumer
        if delivered != self._delivered + 1:
            self._break(f"delivery {delivered} after {self._delivered}")
            return
        self._delivered = delivered
        self._last_look = asyncio.get_running_loop().time()
        self._messages.append(msg)
        self._outstanding -= 1
        self._arrived.set()
        if self._outstanding <= 0:
            await self._request_if_room()

    async def _request_if_room(self) -> None:
        if not self.broken and self._outstanding <= 0 and len(self._messages) < self.batch:
            await self._request()

    def _break(self, why: str) -> None:
        self.broken, self.why = True, why
        self._arrived.set()

    async def take(self, timeout: float) -> List:
        """The messages given since the last take, in order; [] when none came
        within `timeout` seconds, or once broken. After a quiet `quiet_check`
        seconds it first asks the server whether the consumer is still there,
        so that a caller whose own timeouts cancel it sooner still learns."""
        loop = asyncio.get_running_loop()
        if not self._messages and not self.broken:
            if loop.time() - self._last_look >= self.quiet_check:
                self._last_look = loop.time()  # one look a quiet period, even if this call is cancelled
                if not await self.alive():
                    return []
            if self._outstanding > 0 and loop.time() > self._requested_at + REQUEST_EXPIRES + 1:
                await self._request()  # its end never came (lost on a reconnect): another
            # asyncio.wait, not wait_for: a cancel of the reader is never dropped
            # (homed_nats.tasks says why).
            waiter = asyncio.ensure_future(self._arrived.wait())
            try:
                await asyncio.wait((waiter,), timeout=timeout)
            finally:
                waiter.cancel()
            if not self._messages and not self.broken:
                return []
        self._arrived.clear()
        taken = list(self._messages)
        self._messages.clear()
        await self._request_if_room()
        return taken

    async def alive(self) -> bool:
        """False (and broken) when the server no longer has the consumer (one a
        restart of a server lost); True when it has, or cannot say now."""
        try:
            await self.js.consumer_info(self.stream, self.name)
        except nats.js.errors.NotFoundError:
            self._break(f"the server no longer has consumer {self.name}")
            return False
        except (nats.errors.Error, asyncio.TimeoutError):
            pass
        return True

    async def close(self) -> None:
        self.broken = True
        if self._sub is not None:
            sub, self._sub = self._sub, None
            try:
                await asyncio.wait_for(sub.unsubscribe(), 2)  # the consumer ends by itself when idle anyway
            except (Exception, asyncio.TimeoutError):  # noqa: BLE001
                pass
