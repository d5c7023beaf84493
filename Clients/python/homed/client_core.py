"""The state of one connection to homed, with no I/O: the hello, the open
calls by id, the frames to send, what each frame received means, the pings
waiting for their pongs, the go-away, and why the connection ended.

``homed.client.Client`` (a socket and a reader thread) and
``homed.aio.Client`` (asyncio streams and a reader task) are drivers over one
:class:`Connection` each: they read bytes and hand them to it, and write the
bytes it gives them. A call is the driver's object with ``call_id``,
``method`` and ``items``, a queue (``queue.Queue`` or ``asyncio.Queue``) into
which the connection puts, in order, ``("message", payload)``, then
``("status", code, message)`` or ``("error", HomedError)``. Nothing here locks:
the threaded driver holds its lock while it uses the connection."""

from __future__ import annotations

import itertools
from typing import Callable, Dict, List, Optional, Tuple

from google.protobuf.message import DecodeError

from . import proto as pb
from .errors import HomedError, Internal, ResourceExhausted, Unavailable, error_for
from .framing import DEFAULT_MAX_FRAME_SIZE, FrameDecoder, FrameTooLarge, encode_frame

__all__ = [
    "PROTOCOL_VERSION", "DEADLINE_GRACE", "NOT_HOMED", "Connection", "Call", "ClientBase", "StreamEnd", "unary_item",
    "request_of", "response_of", "read_request", "write_request",
]

PROTOCOL_VERSION = 1
#: How much longer than a call's deadline a client waits for the daemon's own
#: DEADLINE_EXCEEDED before giving up on the call by itself.
DEADLINE_GRACE = 1.0
#: Said of a socket where another program answers: bytes that are no homed frame.
NOT_HOMED = "the program listening there does not speak homed's protocol"

#: A ping waiter: called with None when the pong came, else with the error
#: that ended the connection.
PingWaiter = Callable[[Optional[HomedError]], None]


class Call:
    """One open call: ``items`` is the driver's queue, into which the
    connection puts what it receives for the call, in order."""

    __slots__ = ("call_id", "method", "items")

    def __init__(self, call_id: int, method: str, items):
        self.call_id = call_id
        self.method = method
        # ("message", bytes) | ("status", code, message) | ("error", HomedError)
        self.items = items


class Connection:
    """One connection's protocol state (see the module's docstring).

    ``where`` names the socket in messages (its path, when known)."""

    def __init__(self, client_name: str, where: str = ""):
        self.client_name = client_name
        self.where = where or "this socket"
        self.hello_reply = None
        self.go_away = None  # the GoAway frame body, once the daemon sent one
        self.max_frame_size = DEFAULT_MAX_FRAME_SIZE
        self.decoder = FrameDecoder(DEFAULT_MAX_FRAME_SIZE)
        self.calls: Dict[int, object] = {}
        self.closed = False
        #: Why the connection ended (None while it lives).
        self.error: Optional[HomedError] = None
        # A status on call 0, until another frame comes: the reason when the
        # connection closes right after it.
        self._status: Optional[HomedError] = None
        self._ids = itertools.count(1)
        self._nonces = itertools.count(1)
        self._pings: Dict[int, PingWaiter] = {}

    # -- the hello ----------------------------------------------------------------

    def hello(self, protocol_version: int = PROTOCOL_VERSION, capabilities=(), max_frame_size: int = 0) -> bytes:
        """The hello to send first."""
        frame = pb.Frame(call_id=0)
        frame.hello.protocol_version = protocol_version
        frame.hello.client_name = self.client_name
        frame.hello.capabilities.extend(capabilities)
        frame.hello.max_frame_size = max_frame_size
        return encode_frame(frame.SerializeToString())

    def receive_hello(self, data: bytes) -> Optional[List[bytes]]:
        """Takes in bytes read while waiting for the hello reply (b"": the
        daemon closed the connection). None until the reply is whole; then the
        frame bodies that came after it, for :meth:`receive_bodies`. Raises the
        daemon's refusal, or Unavailable when what answers is not homed."""
        if not data:
            raise Unavailable(f"the daemon on {self.where} closed the connection during the hello")
        try:
            bodies = self.decoder.feed(data)
        except FrameTooLarge as error:  # a "length" from a program that is not homed
            raise Unavailable(f"{self.where} is not homed's socket: {NOT_HOMED} ({error})") from None
        if not bodies:
            return None
        try:
            reply = pb.Frame.FromString(bodies[0])
        except DecodeError as error:
            raise Unavailable(f"{self.where} is not homed's socket: {NOT_HOMED} ({error})") from None
        kind = reply.WhichOneof("kind")
        if kind == "status" and reply.call_id == 0:
            raise error_for(reply.status.code, reply.status.message)
        if kind != "hello_reply":
            raise Unavailable(f"{self.where} is not homed's socket: {NOT_HOMED} "
                              f"(its first frame is {kind or 'empty'}, not a hello reply)")
        self.hello_reply = reply.hello_reply
        if reply.hello_reply.max_frame_size:
            self.max_frame_size = reply.hello_reply.max_frame_size
            self.decoder.max_frame_size = self.max_frame_size
        return bodies[1:]

    # -- receiving ----------------------------------------------------------------

    def receive(self, data: bytes) -> List[bytes]:
        """Takes in bytes read from the connection; returns the frames to send
        back at once (pongs). Raises FrameTooLarge or DecodeError when the
        connection is unusable (give them to :meth:`lost`)."""
        return self.receive_bodies(self.decoder.feed(data))

    def receive_bodies(self, bodies: List[bytes]) -> List[bytes]:
        replies = []
        for body in bodies:
            reply = self._frame(pb.Frame.FromString(body))
            if reply is not None:
                replies.append(reply)
        return replies

    def _frame(self, frame) -> Optional[bytes]:
        kind = frame.WhichOneof("kind")
        self._status = None
        if frame.call_id == 0:
            if kind == "ping":  # answered at once, whatever else is going on
                pong = pb.Frame(call_id=0)
                pong.pong.nonce = frame.ping.nonce
                return encode_frame(pong.SerializeToString())
            if kind == "pong":
                waiter = self._pings.pop(frame.pong.nonce, None)
                if waiter is not None:
                    waiter(None)
            elif kind == "go_away":
                self.go_away = frame.go_away
            elif kind == "status":  # about the connection: the reason, if it closes next
                self._status = error_for(frame.status.code, frame.status.message)
            return None
        call = self.calls.get(frame.call_id)
        if call is None:
            return None  # a late frame for a call given up on
        if kind == "message":
            call.items.put_nowait(("message", frame.message.payload))
        elif kind == "status":
            del self.calls[frame.call_id]
            call.items.put_nowait(("status", frame.status.code, frame.status.message))
        return None

    # -- the end ------------------------------------------------------------------

    def lost(self, failure: Optional[BaseException] = None) -> HomedError:
        """The connection ended: the daemon closed it (``failure`` None) or
        reading it failed with ``failure``. Returns why, which is the status
        the daemon sent on call 0 just before, when it did."""
        if failure is None:
            error: HomedError = Unavailable("the daemon closed the connection")
            if self.decoder.pending:
                error = Unavailable(f"the daemon closed the connection inside a frame "
                                    f"({self.decoder.pending} bytes of it had come)")
        elif isinstance(failure, FrameTooLarge):
            error = ResourceExhausted(f"the daemon sent a frame too large: {failure}")
        elif isinstance(failure, DecodeError):
            error = Internal(f"undecodable frame from the daemon: {failure}")
        elif isinstance(failure, OSError):
            error = Unavailable(f"connection error: {failure}")
        else:
            error = Internal(f"reading the connection failed: {failure!r}")
        if self.error is None:
            self.error = self._status or error
        self.closed = True
        return self.error

    def close(self) -> bool:
        """The client closes the connection; False when it was closed already."""
        if self.closed:
            return False
        self.closed = True
        self.error = Unavailable("the client closed the connection")
        return True

    def closed_error(self) -> HomedError:
        """A fresh copy of why the connection ended, for a call made after."""
        return self.error.copy() if self.error is not None else Unavailable("the connection is closed")

    def fail_all(self) -> None:
        """Ends every open call and ping with why the connection ended."""
        error = self.closed_error()
        calls, self.calls = list(self.calls.values()), {}
        pings, self._pings = list(self._pings.values()), {}
        for call in calls:
            call.items.put_nowait(("error", error.copy()))
        for waiter in pings:
            waiter(error.copy())

    # -- sending ------------------------------------------------------------------

    def encode(self, frame) -> bytes:
        """A frame to send, length-prefixed; raises when it may not be sent."""
        data = frame.SerializeToString()
        if len(data) > self.max_frame_size:
            raise ResourceExhausted(f"frame of {len(data)} bytes exceeds the maximum of {self.max_frame_size}")
        if self.closed:
            raise self.closed_error()
        return encode_frame(data)

    def open(self, make_call: Callable[[int, str], object], method: str, request: bytes,
             timeout: Optional[float]) -> Tuple[object, bytes]:
        """Opens a call: ``make_call(call_id, full method name)`` makes the
        driver's call object. Returns it and the frame to send; the call is
        open until its status, :meth:`forget` or the connection's end."""
        if self.go_away is not None:
            raise Unavailable(f"the daemon is shutting down: {self.go_away.reason}")
        if self.closed:
            raise self.closed_error()
        call = make_call(next(self._ids), pb.full_method_name(method))
        frame = pb.Frame(call_id=call.call_id)
        frame.open.method = call.method
        frame.open.request = request
        if timeout is not None:
            frame.open.timeout_ms = max(0, int(timeout * 1000))
        data = self.encode(frame)
        self.calls[call.call_id] = call
        return call, data

    def forget(self, call) -> None:
        """Stops taking frames for a call (a call given up on)."""
        self.calls.pop(call.call_id, None)

    def cancel(self, call) -> Optional[bytes]:
        """The frame that cancels an open call; None when it is not open."""
        if call.call_id not in self.calls or self.closed:
            return None
        frame = pb.Frame(call_id=call.call_id)
        frame.cancel.SetInParent()
        return self.encode(frame)

    def ping(self, waiter: PingWaiter) -> Tuple[int, bytes]:
        """A ping to send: its nonce and frame; ``waiter`` is called when its
        pong comes or the connection ends."""
        nonce = next(self._nonces)
        frame = pb.Frame(call_id=0)
        frame.ping.nonce = nonce
        data = self.encode(frame)
        self._pings[nonce] = waiter
        return nonce, data

    def forget_ping(self, nonce: int) -> None:
        self._pings.pop(nonce, None)


class ClientBase:
    """What both clients tell of their connection, read from their
    :class:`Connection` (``_core``); and the sending of the frames it answers
    with, through the driver's ``_write``."""

    _core: Connection

    @property
    def hello_reply(self):
        return self._core.hello_reply

    @property
    def go_away(self):
        """The GoAway frame body, once the daemon sent one."""
        return self._core.go_away

    @property
    def max_frame_size(self) -> int:
        return self._core.max_frame_size

    @property
    def connection_id(self) -> int:
        return self.hello_reply.connection_id

    @property
    def closed(self) -> bool:
        return self._core.closed

    def _write(self, data: bytes) -> None:
        raise NotImplementedError

    def _send_all(self, frames) -> None:
        """Sends frames the connection answers with at once (pongs, cancels);
        a connection already gone needs none."""
        for data in frames:
            try:
                self._write(data)
            except HomedError:
                pass


# -- calls' items -------------------------------------------------------------------

def unary_item(item, payloads: list) -> bool:
    """Takes one item of a unary call into ``payloads``: True once the call
    ended OK; raises the HomedError of any other end."""
    if item[0] == "message":
        payloads.append(item[1])
        return False
    if item[0] == "status":
        if item[1] != pb.OK:
            raise error_for(item[1], item[2])
        return True
    raise item[1]


class StreamEnd:
    """How a streaming call's items read as messages: the payloads decoded
    with the method's response class, None once the stream ended normally (OK;
    or after :attr:`cancelled`, CANCELLED or the connection's end), the
    HomedError of any other end raised."""

    def __init__(self, message_class=None):
        self.message_class = message_class
        self.cancelled = False
        self.done = False

    def message(self, item):
        if item[0] == "message":
            return self.message_class.FromString(item[1]) if self.message_class else item[1]
        self.done = True
        if item[0] == "status":
            if item[1] == pb.OK or (item[1] == pb.CANCELLED and self.cancelled):
                return None
            raise error_for(item[1], item[2])
        if self.cancelled:
            return None
        raise item[1]

    def cancel(self) -> bool:
        """True when a cancel should be sent (the stream is still running)."""
        if self.done or self.cancelled:
            return False
        self.cancelled = True
        return True


# -- requests and responses ------------------------------------------------------------

def request_of(method: str, request) -> Tuple[bytes, Optional[type]]:
    """A call's request bytes (from a message, a dict of JSON names, bytes or
    None) and its response class (None for a method the schema does not declare)."""
    types = pb.method_types(method)
    request_class, response_class = (types[0], types[1]) if types else (None, None)
    return pb.serialize_request(request, request_class), response_class


def response_of(method: str, payloads: List[bytes], response_class):
    """A unary call's response: its one message, decoded."""
    if len(payloads) != 1:
        raise Internal(f"{pb.full_method_name(method)}: expected one response message, got {len(payloads)}")
    return response_class.FromString(payloads[0]) if response_class else payloads[0]


def read_request(characteristic_ids, fresh: bool = False):
    return pb.ReadCharacteristicsRequest(characteristic_ids=list(characteristic_ids), fresh=fresh)


def write_request(values: dict, atomic: bool = False, validate_only: bool = False,
                  conditions: Optional[dict] = None):
    """WriteCharacteristics of ``{characteristic_id: pb.Value}``; ``conditions``
    (``{characteristic_id: condition}``) makes those writes conditional (see
    ``write_condition``)."""
    conditions = conditions or {}
    unknown = set(conditions) - set(values)
    if unknown:
        raise ValueError(f"conditions for characteristics that are not written: {sorted(unknown)}")
    request = pb.WriteCharacteristicsRequest(atomic=atomic, validate_only=validate_only)
    for cid, value in values.items():
        write = request.writes.add(characteristic_id=cid, value=value)
        if cid in conditions:
            write.condition.CopyFrom(write_condition(conditions[cid]))
    return request


def write_condition(condition):
    """A ``pb.WriteCondition`` from what a caller has at hand: a ``WriteCondition``
    as it is; a ``CharacteristicRead`` (the value it read and its ``change_seq``:
    both must still hold); a ``pb.Value`` (that value); an int (that change seq)."""
    if isinstance(condition, pb.WriteCondition):
        return condition
    if isinstance(condition, pb.CharacteristicRead):
        made = pb.WriteCondition(seq=condition.change_seq)
        if condition.HasField("value"):
            made.value.CopyFrom(condition.value)
        return made
    if isinstance(condition, pb.Value):
        return pb.WriteCondition(value=condition)
    if isinstance(condition, int) and not isinstance(condition, bool) and condition >= 0:
        return pb.WriteCondition(seq=condition)
    raise TypeError(
        f"a write condition is a WriteCondition, a CharacteristicRead, a Value or a seq (int >= 0), "
        f"not {condition!r}")
