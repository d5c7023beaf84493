"""A subscription that outlives its connections, with the rule of the Swift
client's ``HomeClient.resumingSubscription``:

- when the connection is lost (a daemon restart or crash, a dropped socket) it
  connects again, waiting 100 ms before the first try and doubling to 2 s (back
  to 100 ms once a message arrives), and resumes where it stood;
- where it stood is a :class:`~homed.StreamCursor` fed every message: a new
  connection's request gets ``since_seq`` and ``journal_id`` from it, and no
  snapshot, once it has a resume point; events a resume repeats are dropped, so
  the events yielded have no gap and no duplicate;
- when the daemon cannot resume (its journal changed, or it no longer holds what
  was missed), the message with its RESYNC marker is yielded like any other,
  followed by the fresh snapshot the daemon sends;
- the first connection's failure is raised (a daemon that is not running, say),
  and so is any error other than the daemon being unavailable (a filter naming
  an unknown id, say); ending the iteration closes the connection.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Awaitable, Callable, NamedTuple, Optional, Union

from .. import proto as pb
from ..cursor import StreamCursor
from ..errors import HomedError, Unavailable
from .client import Client
from .stream import Stream

__all__ = ["ResumingSubscription", "ResumedMessage", "resuming_subscription"]

FIRST_BACKOFF = 0.1
MAX_BACKOFF = 2.0

#: ``make_request(client)`` (a function or a coroutine function), or a request to copy.
MakeRequest = Union[Callable[[Client], Union[object, Awaitable[object]]], object]


class ResumedMessage(NamedTuple):
    """One stream message and the connection it arrived on."""

    #: The SubscribeResponse as the daemon sent it, less the events a resume repeated.
    message: object
    #: Counts connections, from 1: a new value means the stream reconnected.
    connection: int
    #: The connection the message came on: for its id, or to read the home again.
    client: Client


def resuming_subscription(make_request: MakeRequest = None, path: Optional[str] = None,
                          client_name: str = "python", **options) -> "ResumingSubscription":
    """``async for element in homed.aio.resuming_subscription(make_request)``:
    see :class:`ResumingSubscription`."""
    return ResumingSubscription(make_request, path, client_name, **options)


class ResumingSubscription:
    """An async iterator of :class:`ResumedMessage` that reconnects and resumes
    across daemon restarts (see the module's docstring for the rule).

    :param make_request: builds the SubscribeRequest for each new connection,
        given the new client (names may have to be resolved again after a
        restart): a function or a coroutine function. A SubscribeRequest (or
        None, for everything) is used as it is on every connection.
    :param path: the daemon's socket (None: ``$HOMED_SOCKET``, else the default).
    :param cursor: where an earlier stream stopped, to resume from.
    :param timeout: bounds each connect and hello.

    ``async with`` (or :meth:`aclose`) ends it and closes the connection."""

    def __init__(self, make_request: MakeRequest = None, path: Optional[str] = None, client_name: str = "python",
                 *, cursor: Optional[StreamCursor] = None, timeout: float = 10.0,
                 first_backoff: float = FIRST_BACKOFF, max_backoff: float = MAX_BACKOFF):
        self.path = path
        self.client_name = client_name
        #: Where the stream stands: what a resume starts from.
        self.cursor = cursor if cursor is not None else StreamCursor()
        self.timeout = timeout
        self.first_backoff = first_backoff
        self.max_backoff = max_backoff
        #: How many connections carried the stream so far.
        self.connections = 0
        self._make_request = make_request
        self._backoff = first_backoff
        self._client: Optional[Client] = None
        self._stream: Optional[Stream] = None
        self._closed = False

    @property
    def client(self) -> Optional[Client]:
        """The current connection, if any."""
        return self._client

    def __aiter__(self) -> "ResumingSubscription":
        return self

    async def __anext__(self) -> ResumedMessage:
        while not self._closed:
            if self._stream is None:
                try:
                    await self._connect()
                except HomedError as error:
                    # The first connection's failure is the caller's to see; a
                    # daemon that went away is waited for.
                    if self.connections == 0 or error.code != pb.UNAVAILABLE:
                        await self.aclose()
                        raise
                    await asyncio.sleep(self._backoff)
                    self._backoff = min(self._backoff * 2, self.max_backoff)
                    continue
            try:
                message = await self._stream.get()
                if message is None:
                    raise Unavailable("the daemon ended the stream")
            except HomedError as error:
                if self._closed:
                    break
                if error.code == pb.UNAVAILABLE:
                    await self._drop_connection()  # and connect again
                    continue
                await self.aclose()
                raise
            except BaseException:
                await self.aclose()
                raise
            self._backoff = self.first_backoff
            events = self.cursor.accept(message)
            del message.events[:]
            message.events.extend(events)
            return ResumedMessage(message, self.connections, self._client)
        raise StopAsyncIteration

    async def _connect(self) -> None:
        client = await Client.connect(self.path, self.client_name, timeout=self.timeout)
        try:
            request = await self._request(client)
            self.cursor.resume(request)  # since_seq and journal_id, no snapshot, once it has a resume point
            stream = client.subscribe(request)
        except BaseException:
            await client.close()
            raise
        self.connections += 1
        self._client, self._stream = client, stream

    async def _request(self, client: Client):
        make = self._make_request
        if make is None:
            return pb.SubscribeRequest()
        if isinstance(make, pb.SubscribeRequest):
            request = pb.SubscribeRequest()
            request.CopyFrom(make)
            return request
        request = make(client)
        if inspect.isawaitable(request):
            request = await request
        if not isinstance(request, pb.SubscribeRequest):
            raise TypeError(f"make_request returned {type(request).__name__}, not a SubscribeRequest")
        return request

    async def _drop_connection(self) -> None:
        client, self._client, self._stream = self._client, None, None
        if client is not None:
            await client.close()

    async def aclose(self) -> None:
        """Ends the iteration: cancels the stream and closes the connection."""
        self._closed = True
        if self._stream is not None:
            self._stream.cancel()
        await self._drop_connection()

    async def __aenter__(self) -> "ResumingSubscription":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()
