"""homed: a Python client for the homed home-automation daemon.

    import homed
    from homed import pb

    with homed.Client.connect(client_name="my-script") as client:
        home = client.call("GetHome", pb.GetHomeRequest())
        for response in client.subscribe(pb.SubscribeRequest()):
            ...

An accessory provider (devices brought into homed by this process) is
``homed.Provider`` (see ``homed.provider``).

Message classes come from the descriptor set ``home_v1.desc`` at run time
(``homed.pb.<MessageName>``); only the ``protobuf`` package is needed.
"""

from . import proto as pb
from .client import PROTOCOL_VERSION, Client, HomedError, Subscription, default_socket_path
from .cursor import StreamCursor
from .framing import DEFAULT_MAX_FRAME_SIZE, FrameDecoder, FrameTooLarge, encode_frame
from .provider import Provider, Ref

__all__ = [
    "pb", "Client", "HomedError", "Subscription", "StreamCursor", "default_socket_path", "PROTOCOL_VERSION",
    "DEFAULT_MAX_FRAME_SIZE", "FrameDecoder", "FrameTooLarge", "encode_frame", "Provider", "Ref",
]
__version__ = "0.1.0"
