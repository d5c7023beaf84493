"""homed: a Python client for the homed home-automation daemon.

    import homed
    from homed import pb

    with homed.Client.connect(client_name="my-script") as client:
        home = client.call("GetHome", pb.GetHomeRequest())
        for response in client.subscribe(pb.SubscribeRequest()):
            ...

The same for asyncio is ``homed.aio`` (``client = await homed.aio.connect()``,
subscriptions as async iterators, a subscription that resumes across daemon
restarts, and an asyncio provider).

An accessory provider (devices brought into homed by this process) is
``homed.Provider`` (see ``homed.provider``).

Errors: every failed call raises a :class:`HomedError` (``code``, ``message``,
``code_name``) of its status code's own class — ``NotFound``,
``InvalidArgument``, ``PermissionDenied``, ``Unavailable``, … (see
``homed.errors``); ``DaemonNotRunning``, an ``Unavailable``, when nothing
listens on the socket, saying where its path came from and how to start homed.

Message classes come from the descriptor set ``home_v1.desc`` at run time
(``homed.pb.<MessageName>``); only the ``protobuf`` package is needed.
"""

from . import proto as pb
from .client import PROTOCOL_VERSION, Client, Subscription
from .cursor import StreamCursor
from .errors import (
    Aborted, AlreadyExists, Cancelled, DaemonNotRunning, DataLoss, DeadlineExceeded, FailedPrecondition, HomedError,
    Internal, InvalidArgument, NotFound, OutOfRange, PermissionDenied, ResourceExhausted, SocketNotPermitted,
    Unauthenticated, Unavailable, Unimplemented, Unknown, error_for,
)
from .framing import DEFAULT_MAX_FRAME_SIZE, FrameDecoder, FrameTooLarge, encode_frame
from .paths import default_socket_path
from .provider import Provider, Ref

__all__ = [
    "pb", "Client", "HomedError", "Subscription", "StreamCursor", "default_socket_path", "PROTOCOL_VERSION",
    "DEFAULT_MAX_FRAME_SIZE", "FrameDecoder", "FrameTooLarge", "encode_frame", "Provider", "Ref",
    # typed errors (homed.errors)
    "error_for", "Cancelled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
    "PermissionDenied", "SocketNotPermitted", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
    "Internal", "Unavailable", "DataLoss", "Unauthenticated", "DaemonNotRunning",
]
__version__ = "0.1.0"
