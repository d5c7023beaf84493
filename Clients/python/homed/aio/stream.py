"""A server-streaming call (``Subscribe``, ``OpenProvider``) as an async
iterator of its messages."""

from __future__ import annotations

import asyncio
from typing import Optional

from ..client_core import StreamEnd

__all__ = ["Stream", "Subscription"]


class Stream:
    """The messages of one streaming call, in order.

    ``async for message in stream`` ends when the daemon ends the stream with
    OK, or with CANCELLED after :meth:`cancel`; any other status raises its
    HomedError (``Unavailable`` when the connection is lost). ``async with``
    cancels it on the way out."""

    def __init__(self, client, call, response_class=None):
        self._client = client
        self._call = call
        self._end = StreamEnd(response_class)

    @property
    def call_id(self) -> int:
        return self._call.call_id

    @property
    def client(self):
        """The connection the stream runs on."""
        return self._client

    @property
    def done(self) -> bool:
        """True once the stream has ended (its status, or the connection's end, was taken)."""
        return self._end.done

    async def get(self, timeout: Optional[float] = None):
        """The next message; None once the stream has ended normally. Raises
        TimeoutError when nothing comes within ``timeout`` seconds (the stream
        goes on)."""
        if self._end.done:
            return None
        if timeout is None:
            item = await self._call.items.get()
        else:
            try:
                item = await asyncio.wait_for(self._call.items.get(), timeout)
            except asyncio.TimeoutError:
                raise TimeoutError(f"no stream message within {timeout} s") from None
        return self._end.message(item)

    def __aiter__(self) -> "Stream":
        return self

    async def __anext__(self):
        message = await self.get()
        if message is None:
            raise StopAsyncIteration
        return message

    def cancel(self) -> None:
        """Asks the daemon to end the stream; iterating then stops after the
        messages already on their way."""
        if self._end.cancel():
            self._client.cancel_call(self._call)

    async def aclose(self) -> None:
        """Cancels the stream (the name asyncio code expects)."""
        self.cancel()

    async def __aenter__(self) -> "Stream":
        return self

    async def __aexit__(self, *exc) -> None:
        self.cancel()


#: A Subscribe stream is a Stream of SubscribeResponse messages.
Subscription = Stream
