"""The drivers of ``homed.home``: the calls a :class:`~homed.home.Home` asks
for, made on a connection, so that a program that only wants the home kept up
to date writes one loop.

    home = homed.Home()
    for changes in homed.following.follow(client, home):           # one connection
        ...
    async for element, changes in homed.following.follow_async(home):   # across connections
        ...

The replica decides (what is skipped, when a GetHome is needed); these only
read, call and wait. A program with needs of its own (the Home Assistant bridge
waits for a run of layout changes to end before it loads again) writes its own
loop around the replica the same way.
"""

from __future__ import annotations

from typing import AsyncIterator, Iterator, Optional, Tuple

from . import proto as pb
from .home import Changes, Home

__all__ = ["follow", "follow_async"]


def _request(home: Home, request):
    copy = pb.SubscribeRequest()
    if request is not None:
        copy.CopyFrom(request)
    return home.resume(copy)


def follow(client, home: Home, request=None, *, timeout: Optional[float] = None) -> Iterator[Changes]:
    """On a ``homed.Client``: loads the home if it never was, subscribes with
    ``request`` (a ``SubscribeRequest``; its filter, policy…) from where the home
    stands, and yields the :class:`~homed.home.Changes` of every message, the
    home loaded again first whenever it asks. With ``timeout``, an empty
    ``Changes`` every ``timeout`` seconds of a quiet stream (the caller's turn to
    look at something else). Ends with the stream; raises its error (``homed.Unavailable``
    for a lost connection: subscribe again with the same home to resume)."""
    if not home.loaded:
        home.load(client.get_home())
    with client.subscribe(_request(home, request)) as stream:
        while True:
            try:
                message = stream.get(timeout)
            except TimeoutError:
                yield Changes()
                continue
            if message is None:
                return
            changes = home.apply(message)
            if home.needs_load:
                home.load(client.get_home())
            yield changes


async def follow_async(home: Home, request=None, path: Optional[str] = None, client_name: str = "python",
                       **options) -> AsyncIterator[Tuple[object, Changes]]:
    """Across connections, on ``homed.aio.resuming_subscription`` (its
    reconnection and backoff; ``options`` are its keyword arguments): yields
    ``(ResumedMessage, Changes)`` for every message, the home loaded (on that
    message's connection) whenever it asks: at the first message, after a
    layout event, after a resync. Keep the same ``home`` to follow again later."""
    from .aio.resuming import resuming_subscription

    subscription = resuming_subscription(lambda client: _request(home, request), path, client_name, **options)
    async with subscription:
        async for element in subscription:
            changes = home.apply(element.message)
            if home.needs_load:
                home.load(await element.client.get_home())
            yield element, changes
