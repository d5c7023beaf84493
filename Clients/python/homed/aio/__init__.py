"""homed for asyncio.

    import asyncio
    import homed.aio
    from homed import pb

    async def main():
        async with homed.aio.connect(client_name="my-script") as client:
            home = await client.get_home()
            async for response in client.subscribe(pb.SubscribeRequest()):
                ...

    asyncio.run(main())

- :func:`connect` / :class:`Client`: one connection (``client = await
  connect()``, or ``async with connect() as client``); ``call``, ``get_home``,
  ``read``, ``write``, ``get_status``, ``ping``, ``subscribe``, ``close``.
- :class:`Stream` (``client.subscribe(...)``): a stream as an async iterator.
- :func:`resuming_subscription`: a subscription that reconnects with backoff and
  resumes from its cursor across daemon restarts (the Swift client's rule).
- :class:`Provider`: an accessory provider with coroutine handlers.

Errors are the typed errors of ``homed.errors`` (``homed.NotFound``, …;
``homed.DaemonNotRunning`` when nothing listens on the socket).
"""

from ..errors import DaemonNotRunning, HomedError
from .client import Client, connect
from .provider import Provider
from .resuming import ResumedMessage, ResumingSubscription, resuming_subscription
from .stream import Stream, Subscription

__all__ = [
    "connect", "Client", "Stream", "Subscription", "resuming_subscription", "ResumingSubscription",
    "ResumedMessage", "Provider", "HomedError", "DaemonNotRunning",
]
