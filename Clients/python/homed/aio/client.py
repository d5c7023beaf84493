"""The asyncio connection to homed: a hello, then one reader task that
demultiplexes frames by call id, answers the daemon's pings at once, records its
go-away, and fails every open call when the connection closes (with the status
the daemon sent on call 0 just before, when it did: that is the reason)."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Dict, List, Optional

from google.protobuf.message import DecodeError

from .. import proto as pb
from ..client import PROTOCOL_VERSION
from ..errors import (
    DaemonNotRunning, DeadlineExceeded, HomedError, Internal, ResourceExhausted, Unavailable, error_for,
)
from ..framing import DEFAULT_MAX_FRAME_SIZE, FrameDecoder, FrameTooLarge, encode_frame
from ..paging import HomePages
from ..paths import nothing_listens, resolve_socket_path
from .stream import Stream

__all__ = ["Client", "connect"]

_READ_SIZE = 65536
#: How much longer than a call's deadline the client waits for the daemon's own
#: DEADLINE_EXCEEDED before giving up on the call by itself.
_DEADLINE_GRACE = 1.0
#: Said of a socket where another program answers: bytes that are no homed frame.
NOT_HOMED = "the program listening there does not speak homed's protocol"


class _Call:
    """One open call: what the reader task received for it, in order."""

    __slots__ = ("call_id", "method", "items")

    def __init__(self, call_id: int, method: str):
        self.call_id = call_id
        self.method = method
        # ("message", bytes) | ("status", code, message) | ("error", HomedError)
        self.items: "asyncio.Queue[tuple]" = asyncio.Queue()


def connect(path: Optional[str] = None, client_name: str = "python", *, timeout: float = 10.0,
            call_timeout: Optional[float] = None, **options) -> "_Connecting":
    """``client = await homed.aio.connect()``, or ``async with
    homed.aio.connect() as client:`` (closed on the way out); see
    :meth:`Client.connect` for the arguments and errors."""
    return _Connecting(Client.connect(path, client_name, timeout=timeout, call_timeout=call_timeout, **options))


class _Connecting:
    """A connection being made: awaitable (the Client), or an async context
    manager that closes the Client it made."""

    def __init__(self, connecting):
        self._connecting = connecting
        self._client: Optional["Client"] = None

    def __await__(self):
        return self._connecting.__await__()

    async def __aenter__(self) -> "Client":
        self._client = await self._connecting
        return self._client

    async def __aexit__(self, *exc) -> None:
        await self._client.close()


class Client:
    """One connection to homed, for one event loop. Calls may be made from many
    tasks at once; they are multiplexed on the connection. ``async with`` closes
    it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_name: str,
                 path: str = "", call_timeout: Optional[float] = None):
        self.client_name = client_name
        #: The socket path connected to.
        self.path = path
        #: The timeout (seconds) of calls that do not give one; None = wait forever.
        self.call_timeout = call_timeout
        self.hello_reply = None
        self.go_away = None  # the GoAway frame body, once the daemon sent one
        self.max_frame_size = DEFAULT_MAX_FRAME_SIZE
        self._reader = reader
        self._writer = writer
        self._decoder = FrameDecoder(DEFAULT_MAX_FRAME_SIZE)
        self._drain_lock = asyncio.Lock()
        self._calls: Dict[int, _Call] = {}
        self._ids = itertools.count(1)
        self._nonces = itertools.count(1)
        self._pings: Dict[int, "asyncio.Future[None]"] = {}
        self._closed = False
        self._error: Optional[HomedError] = None
        self._connection_status: Optional[HomedError] = None  # a status on call 0, until another frame comes
        self._reader_task: Optional["asyncio.Task[None]"] = None

    # -- connecting ---------------------------------------------------------------

    @classmethod
    async def connect(cls, path: Optional[str] = None, client_name: str = "python", *, timeout: float = 10.0,
                      call_timeout: Optional[float] = None, protocol_version: int = PROTOCOL_VERSION,
                      capabilities=(), max_frame_size: int = 0) -> "Client":
        """Connects to ``path`` (None: ``$HOMED_SOCKET``, else the default) and
        says hello. ``timeout`` bounds the connect and the hello;
        ``call_timeout`` is the default deadline of calls.

        Raises :class:`~homed.DaemonNotRunning` when nothing listens there (its
        message names the path, where it came from and how to start homed),
        :class:`~homed.DeadlineExceeded` when something accepts but never answers
        the hello, :class:`~homed.Unavailable` when what answers is not homed,
        the daemon's error when it refuses the hello (FAILED_PRECONDITION for a
        protocol version it does not speak), and ``OSError`` for other connect
        failures (a socket you may not open: PermissionError)."""
        path, source = resolve_socket_path(path)
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), timeout)
        except asyncio.TimeoutError:
            raise DeadlineExceeded(f"cannot reach homed: connecting to {path} took more than {timeout} s "
                                   f"(the socket path is from {source})") from None
        except OSError as error:
            if nothing_listens(error):
                raise DaemonNotRunning(path, source, error) from None
            raise
        client = cls(reader, writer, client_name, path, call_timeout)
        try:
            await asyncio.wait_for(client._hello(protocol_version, capabilities, max_frame_size), timeout)
        except asyncio.TimeoutError:
            client._abort()
            raise DeadlineExceeded(f"no answer to the hello from {path} within {timeout} s: is it homed's socket? "
                                   f"(the socket path is from {source})") from None
        except BaseException:
            client._abort()
            raise
        return client

    async def _hello(self, protocol_version: int, capabilities, max_frame_size: int) -> None:
        frame = pb.Frame(call_id=0)
        frame.hello.protocol_version = protocol_version
        frame.hello.client_name = self.client_name
        frame.hello.capabilities.extend(capabilities)
        frame.hello.max_frame_size = max_frame_size
        self._writer.write(encode_frame(frame.SerializeToString()))
        await self._writer.drain()
        bodies: List[bytes] = []
        while not bodies:
            data = await self._reader.read(_READ_SIZE)
            if not data:
                raise Unavailable(f"the daemon on {self.path} closed the connection during the hello")
            try:
                bodies = self._decoder.feed(data)
            except FrameTooLarge as error:  # a "length" from a program that is not homed
                raise Unavailable(f"{self.path} is not homed's socket: {NOT_HOMED} ({error})") from None
        try:
            reply = pb.Frame.FromString(bodies[0])
        except DecodeError as error:
            raise Unavailable(f"{self.path} is not homed's socket: {NOT_HOMED} ({error})") from None
        kind = reply.WhichOneof("kind")
        if kind == "status" and reply.call_id == 0:
            raise error_for(reply.status.code, reply.status.message)
        if kind != "hello_reply":
            raise Unavailable(f"{self.path} is not homed's socket: {NOT_HOMED} "
                              f"(its first frame is {kind or 'empty'}, not a hello reply)")
        self.hello_reply = reply.hello_reply
        if reply.hello_reply.max_frame_size:
            self.max_frame_size = reply.hello_reply.max_frame_size
            self._decoder.max_frame_size = self.max_frame_size
        self._reader_task = asyncio.ensure_future(self._read_loop(bodies[1:]))

    @property
    def connection_id(self) -> int:
        return self.hello_reply.connection_id

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        """Closes the connection; open calls end with UNAVAILABLE."""
        if not self._closed:
            self._closed = True
            self._error = Unavailable("the client closed the connection")
            self._writer.close()
            task = self._reader_task
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                await asyncio.wait([task], timeout=5)
            self._fail_all(self._error)
        try:
            await asyncio.wait_for(self._writer.wait_closed(), 5)
        except (OSError, asyncio.TimeoutError, asyncio.CancelledError):
            pass

    def _abort(self) -> None:
        """Closes without waiting (a failed connect)."""
        self._closed = True
        if self._reader_task is not None:
            self._reader_task.cancel()
        self._writer.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # -- reading ------------------------------------------------------------------

    async def _read_loop(self, first_bodies: List[bytes]) -> None:
        error: HomedError = Unavailable("the daemon closed the connection")
        try:
            for body in first_bodies:
                self._dispatch(body)
            while True:
                data = await self._reader.read(_READ_SIZE)
                if not data:
                    if self._decoder.pending:
                        error = Unavailable(f"the daemon closed the connection inside a frame "
                                            f"({self._decoder.pending} bytes of it had come)")
                    break
                for body in self._decoder.feed(data):
                    self._dispatch(body)
        except FrameTooLarge as e:
            error = ResourceExhausted(f"the daemon sent a frame too large: {e}")
        except DecodeError as e:
            error = Internal(f"undecodable frame from the daemon: {e}")
        except OSError as e:
            error = Unavailable(f"connection error: {e}")
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - never leave a call waiting
            error = Internal(f"reading the connection failed: {e!r}")
        if self._error is None:
            # A status on call 0 right before the close is why it closed.
            self._error = self._connection_status or error
        self._closed = True
        self._writer.close()
        self._fail_all(self._error)

    def _dispatch(self, body: bytes) -> None:
        frame = pb.Frame.FromString(body)
        kind = frame.WhichOneof("kind")
        self._connection_status = None
        if frame.call_id == 0:
            if kind == "ping":  # answered at once, whatever else is going on
                pong = pb.Frame(call_id=0)
                pong.pong.nonce = frame.ping.nonce
                try:
                    self._write(pong)
                except HomedError:
                    pass
            elif kind == "pong":
                waiter = self._pings.pop(frame.pong.nonce, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)
            elif kind == "go_away":
                self.go_away = frame.go_away
            elif kind == "status":  # about the connection: the reason, if it closes next
                self._connection_status = error_for(frame.status.code, frame.status.message)
            return
        call = self._calls.get(frame.call_id)
        if call is None:
            return  # a late frame for a call given up on
        if kind == "message":
            call.items.put_nowait(("message", frame.message.payload))
        elif kind == "status":
            del self._calls[frame.call_id]
            call.items.put_nowait(("status", frame.status.code, frame.status.message))

    def _closed_error(self) -> HomedError:
        return self._error.copy() if self._error is not None else Unavailable("the connection is closed")

    def _fail_all(self, error: HomedError) -> None:
        calls, self._calls = list(self._calls.values()), {}
        pings, self._pings = list(self._pings.values()), {}
        for call in calls:
            call.items.put_nowait(("error", error.copy()))
        for waiter in pings:
            if not waiter.done():
                waiter.set_exception(error.copy())

    # -- writing ------------------------------------------------------------------

    def _write(self, frame) -> None:
        """Queues one frame on the transport, at once (asyncio buffers it)."""
        data = frame.SerializeToString()
        if len(data) > self.max_frame_size:
            raise ResourceExhausted(f"frame of {len(data)} bytes exceeds the maximum of {self.max_frame_size}")
        if self._closed:
            raise self._closed_error()
        self._writer.write(encode_frame(data))

    async def _drain(self) -> None:
        """Waits while the transport's buffer is full (one waiter at a time:
        older Pythons do not allow concurrent drains)."""
        async with self._drain_lock:
            try:
                await self._writer.drain()
            except OSError as e:
                raise Unavailable(f"connection error: {e}") from e

    def open_call(self, method: str, request: bytes = b"", timeout: Optional[float] = None) -> _Call:
        """Opens a call (any method, raw request bytes) and returns it; its
        frames arrive on ``call.items``. For new kinds of calls; use
        :meth:`call` and :meth:`stream`."""
        if self.go_away is not None:
            raise Unavailable(f"the daemon is shutting down: {self.go_away.reason}")
        if self._closed:
            raise self._closed_error()
        call = _Call(next(self._ids), pb.full_method_name(method))
        frame = pb.Frame(call_id=call.call_id)
        frame.open.method = call.method
        frame.open.request = request
        if timeout is not None:
            frame.open.timeout_ms = max(0, int(timeout * 1000))
        self._calls[call.call_id] = call
        try:
            self._write(frame)
        except HomedError:
            self._calls.pop(call.call_id, None)
            raise
        return call

    def cancel_call(self, call: _Call) -> None:
        """Asks the daemon to end a call (it ends with CANCELLED)."""
        if call.call_id in self._calls and not self._closed:
            frame = pb.Frame(call_id=call.call_id)
            frame.cancel.SetInParent()
            try:
                self._write(frame)
            except HomedError:
                pass

    def _give_up(self, call: _Call) -> None:
        self.cancel_call(call)
        self._calls.pop(call.call_id, None)

    # -- calls --------------------------------------------------------------------

    async def call_raw(self, method: str, request: bytes = b"", timeout: Optional[float] = None) -> List[bytes]:
        """Any method with raw request bytes; returns the response payloads of a
        call that ended OK, else raises the HomedError of its status. The
        deadline (``timeout``, else the client's ``call_timeout``) is sent to the
        daemon; with no status a second after it, the call is cancelled and
        DeadlineExceeded raised. Cancelling the task cancels the call."""
        if timeout is None:
            timeout = self.call_timeout
        call = self.open_call(method, request, timeout)
        try:
            await self._drain()
            if timeout is None:
                return await self._collect(call)
            return await asyncio.wait_for(self._collect(call), timeout + _DEADLINE_GRACE)
        except asyncio.TimeoutError:
            self._give_up(call)
            raise DeadlineExceeded(f"{call.method}: no answer within {timeout} s") from None
        except BaseException:
            self._give_up(call)
            raise

    @staticmethod
    async def _collect(call: _Call) -> List[bytes]:
        payloads = []
        while True:
            item = await call.items.get()
            if item[0] == "message":
                payloads.append(item[1])
            elif item[0] == "status":
                if item[1] != pb.OK:
                    raise error_for(item[1], item[2])
                return payloads
            else:
                raise item[1]

    async def call(self, method: str, request=None, timeout: Optional[float] = None):
        """A unary call: ``method`` is "GetHome" or "home.v1.HomeService/GetHome";
        ``request`` a message, a dict (JSON field names), raw bytes or None.
        Returns the response message (bytes for a method the schema does not
        declare), or raises the HomedError of the status (``NotFound``, …)."""
        types = pb.method_types(method)
        request_class, response_class = (types[0], types[1]) if types else (None, None)
        payloads = await self.call_raw(method, pb.serialize_request(request, request_class), timeout)
        if len(payloads) != 1:
            raise Internal(f"{pb.full_method_name(method)}: expected one response message, got {len(payloads)}")
        return response_class.FromString(payloads[0]) if response_class else payloads[0]

    def stream(self, method: str, request=None, timeout: Optional[float] = None) -> Stream:
        """Opens a server-streaming call (``Subscribe``, ``OpenProvider``) and
        returns it as a :class:`Stream` of its response messages. ``timeout`` is
        how long the stream may live (None: until cancelled)."""
        types = pb.method_types(method)
        request_class, response_class = (types[0], types[1]) if types else (None, None)
        call = self.open_call(method, pb.serialize_request(request, request_class), timeout)
        return Stream(self, call, response_class)

    def subscribe(self, request=None) -> Stream:
        """A Subscribe stream: ``async for response in client.subscribe(request)``
        yields SubscribeResponse messages; ``async with`` (or ``cancel()``) ends it."""
        return self.stream("Subscribe", request if request is not None else pb.SubscribeRequest())

    async def ping(self, timeout: float = 5.0) -> float:
        """Pings the daemon; returns the round trip in seconds."""
        nonce = next(self._nonces)
        waiter = asyncio.get_running_loop().create_future()
        self._pings[nonce] = waiter
        frame = pb.Frame(call_id=0)
        frame.ping.nonce = nonce
        start = time.monotonic()
        try:
            self._write(frame)
            await asyncio.wait_for(waiter, timeout)
        except asyncio.TimeoutError:
            raise DeadlineExceeded(f"no pong within {timeout} s") from None
        finally:
            self._pings.pop(nonce, None)
        return time.monotonic() - start

    # -- the declared methods, conveniently -----------------------------------------

    async def get_home(self, home_id: int = 0, page_size: int = 256, timeout: Optional[float] = None):
        """The whole home (or every home) as one GetHomeResponse, however large:
        asked in pages of ``page_size`` accessories cut from one snapshot (0: one
        response, refused when larger than a frame) and put together here."""
        pages = HomePages(home_id, page_size)
        while True:
            try:
                page = await self.call("GetHome", pages.request(), timeout)
            except ResourceExhausted:
                if pages.shrink():
                    continue
                raise
            if pages.add(page):
                return pages.home

    async def get_status(self, timeout: Optional[float] = None):
        return await self.call("GetStatus", pb.GetStatusRequest(), timeout)

    async def read(self, characteristic_ids, fresh: bool = False, timeout: Optional[float] = None):
        """ReadCharacteristics: one result per id, each with its value or error."""
        return await self.call("ReadCharacteristics", pb.ReadCharacteristicsRequest(
            characteristic_ids=list(characteristic_ids), fresh=fresh), timeout)

    async def write(self, values: dict, atomic: bool = False, validate_only: bool = False,
                    timeout: Optional[float] = None):
        """WriteCharacteristics of ``{characteristic_id: pb.Value}``: one result per
        item, each with its ``seq`` or its error."""
        request = pb.WriteCharacteristicsRequest(atomic=atomic, validate_only=validate_only)
        for cid, value in values.items():
            request.writes.add(characteristic_id=cid, value=value)
        return await self.call("WriteCharacteristics", request, timeout)
