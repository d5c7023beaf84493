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

A replica of the home kept by a subscription, with homectl's paths, is
``homed.Home`` (see ``homed.home``): no I/O, fed GetHome answers and stream messages;
``homed.following`` drives it on a connection (``follow``) or across them (``follow_async``).

Errors: every failed call raises a :class:`HomedError` (``code``, ``message``,
``code_name``) of its status code's own class — ``NotFound``,
``InvalidArgument``, ``PermissionDenied``, ``Unavailable``, … (see
``homed.errors``); ``DaemonNotRunning``, an ``Unavailable``, when nothing
listens on the socket, saying where its path came from and how to start homed.

Message classes come from the descriptor set ``home_v1.desc`` at run time
(``homed.pb.<MessageName>``); only the ``protobuf`` package is needed.

Nothing is imported until it is first used (``homed.Client`` imports
``homed.client`` then): ``homed.requirements``, which a program runs before
anything else, must load even when ``protobuf`` is missing or of the wrong version.
"""

from importlib import import_module

# name → (module, attribute; None for the module itself)
_EXPORTS = {"pb": ("proto", None), "Client": ("client", "Client"), "Subscription": ("client", "Subscription"),
            "PROTOCOL_VERSION": ("client", "PROTOCOL_VERSION"), "StreamCursor": ("cursor", "StreamCursor"),
            "DEFAULT_MAX_FRAME_SIZE": ("framing", "DEFAULT_MAX_FRAME_SIZE"),
            "FrameDecoder": ("framing", "FrameDecoder"), "FrameTooLarge": ("framing", "FrameTooLarge"),
            "encode_frame": ("framing", "encode_frame"), "default_socket_path": ("paths", "default_socket_path"),
            "Provider": ("provider", "Provider"), "Ref": ("provider", "Ref"),
            "home": ("home", None), "Home": ("home", "Home"), "following": ("following", None)}
_ERRORS = ["error_for", "Cancelled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
           "PermissionDenied", "SocketNotPermitted", "ResourceExhausted", "FailedPrecondition", "Aborted",
           "OutOfRange", "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated",
           "DaemonNotRunning", "HomedError"]
_EXPORTS.update({name: ("errors", name) for name in _ERRORS})

__all__ = sorted(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name):
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'homed' has no attribute {name!r}") from None
    value = import_module(f".{module}", __name__)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
