"""A thread-based client for homed: one socket, one reader thread that
demultiplexes frames by call id and answers the daemon's pings."""

from __future__ import annotations

import itertools
import queue
import socket
import threading
import time
from typing import Dict, Optional

from google.protobuf.message import DecodeError

from . import proto as pb
from .errors import DaemonNotRunning, HomedError, error_for
from .framing import DEFAULT_MAX_FRAME_SIZE, FrameDecoder, FrameTooLarge, encode_frame
from .paging import HomePages
from .paths import default_socket_path, nothing_listens, resolve_socket_path

PROTOCOL_VERSION = 1


# Older code imports HomedError, default_socket_path and _serialize from here.
_serialize = pb.serialize_request
__all__ = ["Client", "Subscription", "HomedError", "default_socket_path", "PROTOCOL_VERSION"]


class _Call:
    __slots__ = ("call_id", "method", "items")

    def __init__(self, call_id: int, method: str):
        self.call_id = call_id
        self.method = method
        # ("message", bytes) | ("status", code, message) | ("error", HomedError)
        self.items: "queue.Queue[tuple]" = queue.Queue()


class Client:
    """A connection to homed. Thread-safe: calls may be made from many threads
    at once and are multiplexed on the one socket."""

    def __init__(self, sock: socket.socket, client_name: str, call_timeout: Optional[float] = None):
        self.client_name = client_name
        #: The timeout (seconds) of calls that do not give one; None = wait forever.
        self.call_timeout = call_timeout
        self.hello_reply = None
        self.go_away = None  # the GoAway frame body, once the daemon sent one
        self.max_frame_size = DEFAULT_MAX_FRAME_SIZE
        self._sock = sock
        self._decoder = FrameDecoder(DEFAULT_MAX_FRAME_SIZE)
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._calls: Dict[int, _Call] = {}
        self._ids = itertools.count(1)
        self._nonces = itertools.count(1)
        self._pings: Dict[int, threading.Event] = {}
        self._closed = False
        self._error: Optional[HomedError] = None
        self._reader: Optional[threading.Thread] = None

    # -- connection -----------------------------------------------------------

    @classmethod
    def connect(cls, path: Optional[str] = None, client_name: str = "python", *,
                timeout: float = 10.0, protocol_version: int = PROTOCOL_VERSION,
                capabilities=(), max_frame_size: int = 0,
                call_timeout: Optional[float] = None) -> "Client":
        """Connect and say hello (``path`` defaults to default_socket_path()).
        ``timeout`` bounds the connect and the hello; ``call_timeout`` is the
        default deadline of calls. Raises HomedError when the daemon refuses the
        hello (e.g. FAILED_PRECONDITION for an unsupported version),
        DaemonNotRunning (an Unavailable, and an OSError) when nothing listens
        at ``path``, and OSError for other connect failures."""
        path, source = resolve_socket_path(path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(path)
        except OSError as error:
            sock.close()
            if nothing_listens(error):
                raise DaemonNotRunning(path, source, error) from None
            raise
        except BaseException:
            sock.close()
            raise
        return cls.from_socket(sock, client_name, timeout=timeout, protocol_version=protocol_version,
                               capabilities=capabilities, max_frame_size=max_frame_size,
                               call_timeout=call_timeout)

    @classmethod
    def from_socket(cls, sock: socket.socket, client_name: str = "python", *,
                    timeout: float = 10.0, protocol_version: int = PROTOCOL_VERSION,
                    capabilities=(), max_frame_size: int = 0,
                    call_timeout: Optional[float] = None) -> "Client":
        """Say hello on an already connected stream socket (which the client owns from now on)."""
        try:
            sock.settimeout(timeout)
            client = cls(sock, client_name, call_timeout)
            client._hello(protocol_version, capabilities, max_frame_size)
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        return client

    def _hello(self, protocol_version, capabilities, max_frame_size):
        frame = pb.Frame(call_id=0)
        frame.hello.protocol_version = protocol_version
        frame.hello.client_name = self.client_name
        frame.hello.capabilities.extend(capabilities)
        frame.hello.max_frame_size = max_frame_size
        self._sock.sendall(encode_frame(frame.SerializeToString()))
        while True:
            data = self._sock.recv(65536)
            if not data:
                raise error_for(pb.UNAVAILABLE, "the daemon closed the connection during the hello")
            bodies = self._decoder.feed(data)
            if bodies:
                break
        reply = pb.Frame.FromString(bodies[0])
        kind = reply.WhichOneof("kind")
        if kind == "status":
            raise error_for(reply.status.code, reply.status.message)
        if kind != "hello_reply":
            raise error_for(pb.INTERNAL, f"expected a hello reply, got {kind or 'an empty frame'}")
        self.hello_reply = reply.hello_reply
        if reply.hello_reply.max_frame_size:
            self.max_frame_size = reply.hello_reply.max_frame_size
            self._decoder.max_frame_size = self.max_frame_size
        self._reader = threading.Thread(target=self._read_loop, args=(bodies[1:],),
                                        name=f"homed-reader-{self.client_name}", daemon=True)
        self._reader.start()

    @property
    def connection_id(self) -> int:
        return self.hello_reply.connection_id

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close the connection; open calls end with UNAVAILABLE."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._error = error_for(pb.UNAVAILABLE, "the client closed the connection")
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(5)
        self._sock.close()
        self._fail_all(self._error)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- reading ----------------------------------------------------------------

    def _read_loop(self, first_bodies):
        error = error_for(pb.UNAVAILABLE, "the daemon closed the connection")
        try:
            for body in first_bodies:
                self._dispatch(body)
            while True:
                data = self._sock.recv(65536)
                if not data:
                    break
                for body in self._decoder.feed(data):
                    self._dispatch(body)
        except FrameTooLarge as e:
            error = error_for(pb.RESOURCE_EXHAUSTED, str(e))
        except DecodeError as e:
            error = error_for(pb.INTERNAL, f"undecodable frame from the daemon: {e}")
        except OSError as e:
            error = error_for(pb.UNAVAILABLE, f"connection error: {e}")
        with self._lock:
            if self._error is None:  # a status on call 0 is the better reason
                self._error = error
            self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._fail_all(self._error)

    def _dispatch(self, body: bytes) -> None:
        frame = pb.Frame.FromString(body)
        kind = frame.WhichOneof("kind")
        if frame.call_id == 0:
            if kind == "ping":
                pong = pb.Frame(call_id=0)
                pong.pong.nonce = frame.ping.nonce
                try:
                    self._send(pong)
                except HomedError:
                    pass
            elif kind == "pong":
                with self._lock:
                    event = self._pings.pop(frame.pong.nonce, None)
                if event is not None:
                    event.set()
            elif kind == "go_away":
                self.go_away = frame.go_away
            elif kind == "status":  # about the connection: the reason, if it closes next
                with self._lock:
                    self._error = error_for(frame.status.code, frame.status.message)
            return
        with self._lock:
            call = self._calls.get(frame.call_id)
            if call is not None and kind == "status":
                del self._calls[frame.call_id]
        if call is None:
            return  # a late frame for a call we gave up on
        if kind == "message":
            call.items.put(("message", frame.message.payload))
        elif kind == "status":
            call.items.put(("status", frame.status.code, frame.status.message))

    def _closed_error(self) -> HomedError:
        error = self._error
        if error is None:
            return error_for(pb.UNAVAILABLE, "the connection is closed")
        return error_for(error.code, error.message)

    def _fail_all(self, error: HomedError) -> None:
        with self._lock:
            calls = list(self._calls.values())
            self._calls.clear()
            pings = list(self._pings.values())
            self._pings.clear()
        for call in calls:
            call.items.put(("error", error_for(error.code, error.message)))
        for event in pings:
            event.set()

    # -- writing ----------------------------------------------------------------

    def _send(self, frame) -> None:
        data = frame.SerializeToString()
        if len(data) > self.max_frame_size:
            raise error_for(pb.RESOURCE_EXHAUSTED,
                             f"frame of {len(data)} bytes exceeds the maximum of {self.max_frame_size}")
        with self._send_lock:
            if self._closed:
                raise self._closed_error()
            try:
                self._sock.sendall(encode_frame(data))
            except OSError as e:
                raise error_for(pb.UNAVAILABLE, f"connection error: {e}") from e

    def _open(self, method: str, request: bytes, timeout: Optional[float]) -> _Call:
        if self.go_away is not None:
            raise error_for(pb.UNAVAILABLE, f"the daemon is shutting down: {self.go_away.reason}")
        with self._lock:
            if self._closed:
                raise self._closed_error()
            call = _Call(next(self._ids), method)
            self._calls[call.call_id] = call
        frame = pb.Frame(call_id=call.call_id)
        frame.open.method = method
        frame.open.request = request
        if timeout is not None:
            frame.open.timeout_ms = max(0, int(timeout * 1000))
        try:
            self._send(frame)
        except HomedError:
            with self._lock:
                self._calls.pop(call.call_id, None)
            raise
        return call

    def _cancel(self, call: _Call) -> None:
        with self._lock:
            open_ = call.call_id in self._calls
        if open_:
            frame = pb.Frame(call_id=call.call_id)
            frame.cancel.SetInParent()
            try:
                self._send(frame)
            except HomedError:
                pass

    # -- calls ------------------------------------------------------------------

    def call_raw(self, method: str, request: bytes = b"", timeout: Optional[float] = None) -> list:
        """Open any method with raw request bytes; returns the response payloads
        (bytes) of a call that ended OK, else raises HomedError. The deadline
        (``timeout`` or the client's ``call_timeout``) is sent to the daemon; if
        no status arrives within it plus a second, the call is cancelled and
        DEADLINE_EXCEEDED raised."""
        if timeout is None:
            timeout = self.call_timeout
        call = self._open(pb.full_method_name(method), request, timeout)
        deadline = None if timeout is None else time.monotonic() + timeout + 1.0
        payloads = []
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                item = call.items.get(timeout=remaining)
            except queue.Empty:
                self._cancel(call)
                with self._lock:
                    self._calls.pop(call.call_id, None)
                raise error_for(pb.DEADLINE_EXCEEDED, f"{call.method}: no answer within {timeout} s") from None
            if item[0] == "message":
                payloads.append(item[1])
            elif item[0] == "status":
                if item[1] != pb.OK:
                    raise error_for(item[1], item[2])
                return payloads
            else:
                raise item[1]

    def call(self, method: str, request=None, timeout: Optional[float] = None):
        """A unary call: ``method`` is "GetHome" or "home.v1.HomeService/GetHome";
        ``request`` a message, a dict (JSON field names), raw bytes or None.
        Returns the response message (bytes for a method the schema does not
        declare) or raises the HomedError of the status (``NotFound``, …)."""
        types = pb.method_types(method)
        request_class, response_class = (types[0], types[1]) if types else (None, None)
        payloads = self.call_raw(method, _serialize(request, request_class), timeout)
        if len(payloads) != 1:
            raise error_for(pb.INTERNAL, f"{pb.full_method_name(method)}: expected one response message, got {len(payloads)}")
        return response_class.FromString(payloads[0]) if response_class else payloads[0]

    def stream(self, method: str, request=None, timeout: Optional[float] = None) -> "Subscription":
        """Open a server-streaming call (``Subscribe``, ``OpenProvider``); iterate
        the result for its response messages. ``timeout`` is how long the stream
        may live (None: until cancelled); it ends with DEADLINE_EXCEEDED then."""
        types = pb.method_types(method)
        request_class, response_class = (types[0], types[1]) if types else (None, None)
        call = self._open(pb.full_method_name(method), _serialize(request, request_class), timeout)
        return Subscription(self, call, response_class)

    def subscribe(self, request=None, timeout: Optional[float] = None) -> "Subscription":
        """Open a Subscribe stream; iterate the result for SubscribeResponse messages."""
        return self.stream("Subscribe", request if request is not None else pb.SubscribeRequest(), timeout)

    def ping(self, timeout: float = 5.0) -> float:
        """Ping the daemon; returns the round trip in seconds."""
        event = threading.Event()
        with self._lock:
            nonce = next(self._nonces)
            self._pings[nonce] = event
        frame = pb.Frame(call_id=0)
        frame.ping.nonce = nonce
        start = time.monotonic()
        self._send(frame)
        if not event.wait(timeout):
            with self._lock:
                self._pings.pop(nonce, None)
            raise error_for(pb.DEADLINE_EXCEEDED, f"no pong within {timeout} s")
        if self._closed:
            raise self._closed_error()
        return time.monotonic() - start

    # Convenience wrappers for the declared methods.
    def get_home(self, home_id: int = 0, page_size: int = 256, timeout: Optional[float] = None):
        """The whole home (or every home) as one GetHomeResponse, however large:
        asked in pages of ``page_size`` accessories (0: in one response, refused
        when larger than a frame), all cut from one snapshot, and put together
        here. A page refused as too large is asked for again, half as large."""
        pages = HomePages(home_id, page_size)
        while True:
            try:
                page = self.call("GetHome", pages.request(), timeout)
            except HomedError as error:
                if error.code == pb.RESOURCE_EXHAUSTED and pages.shrink():
                    continue
                raise
            if pages.add(page):
                return pages.home

    def get_status(self, timeout: Optional[float] = None):
        return self.call("GetStatus", pb.GetStatusRequest(), timeout)

    def read(self, characteristic_ids, fresh: bool = False, timeout: Optional[float] = None):
        return self.call("ReadCharacteristics", pb.ReadCharacteristicsRequest(
            characteristic_ids=list(characteristic_ids), fresh=fresh), timeout)

    def write(self, values: dict, atomic: bool = False, validate_only: bool = False,
              timeout: Optional[float] = None):
        """``values``: {characteristic_id: pb.Value}."""
        request = pb.WriteCharacteristicsRequest(atomic=atomic, validate_only=validate_only)
        for cid, value in values.items():
            request.writes.add(characteristic_id=cid, value=value)
        return self.call("WriteCharacteristics", request, timeout)


class Subscription:
    """A server stream (Subscribe, or any method opened with ``Client.stream``).
    Iterating yields its messages (SubscribeResponse for Subscribe) and ends
    when the daemon ends the stream with OK, or with CANCELLED after cancel();
    any other status raises HomedError."""

    def __init__(self, client: Client, call: _Call, message_class=None):
        self._client = client
        self._call = call
        # The method's response type (bytes for a method the schema does not declare).
        self._message_class = message_class if message_class is not None else pb.SubscribeResponse
        self._cancelled = False
        self._done = False

    @property
    def call_id(self) -> int:
        return self._call.call_id

    def get(self, timeout: Optional[float] = None):
        """The next SubscribeResponse; None once the stream has ended normally.
        Raises TimeoutError when nothing arrives within ``timeout`` seconds."""
        if self._done:
            return None
        try:
            item = self._call.items.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no stream message within {timeout} s") from None
        if item[0] == "message":
            return self._message_class.FromString(item[1]) if self._message_class else item[1]
        self._done = True
        if item[0] == "status":
            if item[1] == pb.OK or (item[1] == pb.CANCELLED and self._cancelled):
                return None
            raise error_for(item[1], item[2])
        if self._cancelled:
            return None
        raise item[1]

    def __iter__(self):
        return self

    def __next__(self):
        response = self.get()
        if response is None:
            raise StopIteration
        return response

    def cancel(self) -> None:
        """Ask the daemon to end the stream; iteration then stops after the
        messages already on their way."""
        if not self._done and not self._cancelled:
            self._cancelled = True
            self._client._cancel(self._call)

    close = cancel

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cancel()
