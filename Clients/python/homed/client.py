"""A thread-based client for homed: one socket, one reader thread that
demultiplexes frames by call id and answers the daemon's pings."""

from __future__ import annotations

import itertools
import os
import queue
import socket
import threading
import time
from typing import Dict, Optional

from google.protobuf import json_format
from google.protobuf.message import DecodeError

from . import proto as pb
from .framing import DEFAULT_MAX_FRAME_SIZE, FrameDecoder, FrameTooLarge, encode_frame

PROTOCOL_VERSION = 1


class HomedError(Exception):
    """A call (or the connection) ended with a non-OK status."""

    def __init__(self, code: int, message: str):
        self.code = int(code)
        self.message = message
        super().__init__(f"{pb.status_name(self.code)}: {message}")

    @property
    def code_name(self) -> str:
        return pb.status_name(self.code)


def default_socket_path() -> str:
    """DESIGN §3: $HOMED_SOCKET, else $XDG_RUNTIME_DIR/homed/homed.sock, else
    /run/homed/homed.sock as root, else /tmp/homed-$UID/homed.sock."""
    env = os.environ.get("HOMED_SOCKET")
    if env:
        return env
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "homed", "homed.sock")
    if os.geteuid() == 0:
        return "/run/homed/homed.sock"
    return f"/tmp/homed-{os.getuid()}/homed.sock"


def _serialize(request, request_class) -> bytes:
    if request is None:
        return b""
    if isinstance(request, (bytes, bytearray)):
        return bytes(request)
    if isinstance(request, dict):
        if request_class is None:
            raise TypeError("a dict request needs a method the schema declares")
        return json_format.ParseDict(request, request_class()).SerializeToString()
    if request_class is not None and request.DESCRIPTOR.full_name != request_class.DESCRIPTOR.full_name:
        raise TypeError(f"expected {request_class.DESCRIPTOR.full_name}, got {request.DESCRIPTOR.full_name}")
    return request.SerializeToString()


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
        hello (e.g. FAILED_PRECONDITION for an unsupported version) and OSError
        when nothing listens at ``path``."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(path or default_socket_path())
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
                raise HomedError(pb.UNAVAILABLE, "the daemon closed the connection during the hello")
            bodies = self._decoder.feed(data)
            if bodies:
                break
        reply = pb.Frame.FromString(bodies[0])
        kind = reply.WhichOneof("kind")
        if kind == "status":
            raise HomedError(reply.status.code, reply.status.message)
        if kind != "hello_reply":
            raise HomedError(pb.INTERNAL, f"expected a hello reply, got {kind or 'an empty frame'}")
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
            self._error = HomedError(pb.UNAVAILABLE, "the client closed the connection")
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
        error = HomedError(pb.UNAVAILABLE, "the daemon closed the connection")
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
            error = HomedError(pb.RESOURCE_EXHAUSTED, str(e))
        except DecodeError as e:
            error = HomedError(pb.INTERNAL, f"undecodable frame from the daemon: {e}")
        except OSError as e:
            error = HomedError(pb.UNAVAILABLE, f"connection error: {e}")
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
                    self._error = HomedError(frame.status.code, frame.status.message)
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
            return HomedError(pb.UNAVAILABLE, "the connection is closed")
        return HomedError(error.code, error.message)

    def _fail_all(self, error: HomedError) -> None:
        with self._lock:
            calls = list(self._calls.values())
            self._calls.clear()
            pings = list(self._pings.values())
            self._pings.clear()
        for call in calls:
            call.items.put(("error", HomedError(error.code, error.message)))
        for event in pings:
            event.set()

    # -- writing ----------------------------------------------------------------

    def _send(self, frame) -> None:
        data = frame.SerializeToString()
        if len(data) > self.max_frame_size:
            raise HomedError(pb.RESOURCE_EXHAUSTED,
                             f"frame of {len(data)} bytes exceeds the maximum of {self.max_frame_size}")
        with self._send_lock:
            if self._closed:
                raise self._closed_error()
            try:
                self._sock.sendall(encode_frame(data))
            except OSError as e:
                raise HomedError(pb.UNAVAILABLE, f"connection error: {e}") from e

    def _open(self, method: str, request: bytes, timeout: Optional[float]) -> _Call:
        if self.go_away is not None:
            raise HomedError(pb.UNAVAILABLE, f"the daemon is shutting down: {self.go_away.reason}")
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
                raise HomedError(pb.DEADLINE_EXCEEDED, f"{call.method}: no answer within {timeout} s") from None
            if item[0] == "message":
                payloads.append(item[1])
            elif item[0] == "status":
                if item[1] != pb.OK:
                    raise HomedError(item[1], item[2])
                return payloads
            else:
                raise item[1]

    def call(self, method: str, request=None, timeout: Optional[float] = None):
        """A unary call: ``method`` is "GetHome" or "home.v1.HomeService/GetHome";
        ``request`` a message, a dict (JSON field names), raw bytes or None.
        Returns the response message (bytes for a method the schema does not
        declare) or raises HomedError(code, message)."""
        types = pb.method_types(method)
        request_class, response_class = (types[0], types[1]) if types else (None, None)
        payloads = self.call_raw(method, _serialize(request, request_class), timeout)
        if len(payloads) != 1:
            raise HomedError(pb.INTERNAL, f"{pb.full_method_name(method)}: expected one response message, got {len(payloads)}")
        return response_class.FromString(payloads[0]) if response_class else payloads[0]

    def subscribe(self, request=None) -> "Subscription":
        """Open a Subscribe stream; iterate the result for SubscribeResponse messages."""
        body = _serialize(request, pb.SubscribeRequest)
        return Subscription(self, self._open(pb.full_method_name("Subscribe"), body, None))

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
            raise HomedError(pb.DEADLINE_EXCEEDED, f"no pong within {timeout} s")
        if self._closed:
            raise self._closed_error()
        return time.monotonic() - start

    # Convenience wrappers for the declared methods.
    def get_home(self, home_id: int = 0, page_size: int = 256, timeout: Optional[float] = None):
        """The whole home (or every home) as one GetHomeResponse, however large:
        asked in pages of ``page_size`` accessories (0: in one response, refused
        when larger than a frame), all cut from one snapshot, and put together
        here. A page refused as too large is asked for again, half as large."""
        token = ""
        home = None
        while True:
            try:
                page = self.call("GetHome", pb.GetHomeRequest(home_id=home_id, page_size=page_size, page_token=token),
                                 timeout)
            except HomedError as error:
                if error.code == pb.RESOURCE_EXHAUSTED and page_size > 1:
                    page_size //= 2
                    continue
                raise
            if home is None:
                home = page  # the first page: every home with all its tables
            else:
                if (page.seq, page.journal_id) != (home.seq, home.journal_id):
                    raise HomedError(pb.INVALID_ARGUMENT, f"a GetHome page at seq {page.seq} follows pages at seq {home.seq}")
                homes = {h.id: h for h in home.homes}
                for part in page.homes:
                    if part.id not in homes:
                        raise HomedError(pb.INVALID_ARGUMENT,
                                         f"a GetHome page names home {part.id}, which the first page did not")
                    homes[part.id].accessories.extend(part.accessories)
            token = page.next_page_token
            if not token:
                home.next_page_token = ""
                return home

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
    """A Subscribe stream. Iterating yields SubscribeResponse messages and ends
    when the daemon ends the stream with OK, or with CANCELLED after cancel();
    any other status raises HomedError."""

    def __init__(self, client: Client, call: _Call):
        self._client = client
        self._call = call
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
            return pb.SubscribeResponse.FromString(item[1])
        self._done = True
        if item[0] == "status":
            if item[1] == pb.OK or (item[1] == pb.CANCELLED and self._cancelled):
                return None
            raise HomedError(item[1], item[2])
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
