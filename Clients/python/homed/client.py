"""A thread-based client for homed: one socket, one reader thread that
demultiplexes frames by call id and answers the daemon's pings.

This module is the threaded driver: it reads and writes the socket and waits.
What the frames mean, the open calls and why the connection ended are
:class:`homed.client_core.Connection`'s, which the asyncio client drives too."""

from __future__ import annotations

import queue
import socket
import threading
import time
from typing import Optional

from . import proto as pb
from .client_core import (
    DEADLINE_GRACE, PROTOCOL_VERSION, Call, ClientBase, Connection, StreamEnd, read_request, request_of,
    response_of, unary_item, write_request,
)
from .errors import DaemonNotRunning, DeadlineExceeded, HomedError, SocketNotPermitted, Unavailable
from .paging import HomePages
from .paths import default_socket_path, nothing_listens, resolve_socket_path

_READ_SIZE = 65536

# Older code imports HomedError, default_socket_path and _serialize from here.
_serialize = pb.serialize_request
__all__ = ["Client", "Subscription", "PendingCall", "HomedError", "default_socket_path", "PROTOCOL_VERSION"]


def _call(call_id: int, method: str) -> Call:
    """A call whose items the reader thread puts and the calling threads wait for."""
    return Call(call_id, method, queue.Queue())


class Client(ClientBase):
    """A connection to homed. Thread-safe: calls may be made from many threads
    at once and are multiplexed on the one socket."""

    def __init__(self, sock: socket.socket, client_name: str, call_timeout: Optional[float] = None,
                 path: str = ""):
        self.client_name = client_name
        #: The timeout (seconds) of calls that do not give one; None = wait forever.
        self.call_timeout = call_timeout
        self._sock = sock
        self._core = Connection(client_name, path)
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()  # guards the core
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
            if isinstance(error, PermissionError):
                raise SocketNotPermitted(path, error) from None
            raise
        except BaseException:
            sock.close()
            raise
        return cls.from_socket(sock, client_name, timeout=timeout, protocol_version=protocol_version,
                               capabilities=capabilities, max_frame_size=max_frame_size,
                               call_timeout=call_timeout, path=path)

    @classmethod
    def from_socket(cls, sock: socket.socket, client_name: str = "python", *,
                    timeout: float = 10.0, protocol_version: int = PROTOCOL_VERSION,
                    capabilities=(), max_frame_size: int = 0,
                    call_timeout: Optional[float] = None, path: str = "") -> "Client":
        """Say hello on an already connected stream socket (which the client owns from now on)."""
        try:
            sock.settimeout(timeout)
            client = cls(sock, client_name, call_timeout, path)
            client._hello(protocol_version, capabilities, max_frame_size)
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        return client

    def _hello(self, protocol_version, capabilities, max_frame_size):
        self._sock.sendall(self._core.hello(protocol_version, capabilities, max_frame_size))
        rest = None
        while rest is None:
            rest = self._core.receive_hello(self._sock.recv(_READ_SIZE))
        self._reader = threading.Thread(target=self._read_loop, args=(rest,),
                                        name=f"homed-reader-{self.client_name}", daemon=True)
        self._reader.start()

    def close(self) -> None:
        """Close the connection; open calls end with UNAVAILABLE."""
        with self._lock:
            if not self._core.close():
                return
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(5)
        self._sock.close()
        with self._lock:
            self._core.fail_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- reading ----------------------------------------------------------------

    def _read_loop(self, first_bodies):
        failure = None
        try:
            with self._lock:
                replies = self._core.receive_bodies(first_bodies)
            self._send_all(replies)
            while True:
                data = self._sock.recv(_READ_SIZE)
                if not data:
                    break
                with self._lock:
                    replies = self._core.receive(data)
                self._send_all(replies)
        except Exception as error:  # noqa: BLE001 - never leave a call waiting
            failure = error
        with self._lock:
            self._core.lost(failure)
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        with self._lock:
            self._core.fail_all()

    # -- writing ----------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        with self._send_lock:
            if self._core.closed:
                raise self._core.closed_error()
            try:
                self._sock.sendall(data)
            except OSError as e:
                raise Unavailable(f"connection error: {e}") from e

    def _write_nowait(self, data: bytes) -> bool:
        """Writes one frame unless that would wait: for another thread's write,
        or for room in the socket's buffer (a daemon not reading). False: nothing
        was written. When the buffer takes only part of the frame, the rest is
        written by a thread of its own, which holds the send lock until the frame
        is whole (no other frame may come between its parts); this one goes on."""
        if not self._send_lock.acquire(blocking=False):
            return False
        handed_over = False
        try:
            if self._core.closed:
                raise self._core.closed_error()
            try:
                sent = self._sock.send(data, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return False
            except OSError as e:
                raise Unavailable(f"connection error: {e}") from e
            if sent < len(data):
                threading.Thread(target=self._finish_write, args=(data[sent:],), daemon=True,
                                 name=f"homed-writer-{self.client_name}").start()
                handed_over = True
            return True
        finally:
            if not handed_over:
                self._send_lock.release()

    def _finish_write(self, rest: bytes) -> None:
        """The rest of a frame _write_nowait began (the send lock is held for it)."""
        try:
            self._sock.sendall(rest)
        except OSError:
            pass  # the connection is gone: the reader ends it, and its calls with it
        finally:
            self._send_lock.release()

    def _open(self, method: str, request: bytes, timeout: Optional[float], block: bool = True) -> Optional[Call]:
        with self._lock:
            call, data = self._core.open(_call, method, request, timeout)
        try:
            if block:
                self._write(data)
            elif not self._write_nowait(data):
                with self._lock:
                    self._core.forget(call)
                return None
        except HomedError:
            with self._lock:
                self._core.forget(call)
            raise
        return call

    def _cancel(self, call: Call) -> None:
        with self._lock:
            data = self._core.cancel(call)
        if data is not None:
            self._send_all([data])

    # -- calls ------------------------------------------------------------------

    def call_raw(self, method: str, request: bytes = b"", timeout: Optional[float] = None) -> list:
        """Open any method with raw request bytes; returns the response payloads
        (bytes) of a call that ended OK, else raises HomedError. The deadline
        (``timeout`` or the client's ``call_timeout``) is sent to the daemon; if
        no status arrives within it plus a second, the call is cancelled and
        DEADLINE_EXCEEDED raised."""
        return self.begin_raw(method, request, timeout).result_raw()

    def begin_raw(self, method: str, request: bytes = b"", timeout: Optional[float] = None,
                  block: bool = True) -> Optional["PendingCall"]:
        """Sends a unary call with raw request bytes and returns at once, before
        its answer: :meth:`PendingCall.result_raw` waits for that. ``block=False``
        never waits for the socket either (another thread writing, a daemon not
        reading): it returns None then, and nothing was sent. Raises HomedError
        when the connection is closed."""
        if timeout is None:
            timeout = self.call_timeout
        call = self._open(method, request, timeout, block)
        return None if call is None else PendingCall(self, call, timeout)

    def begin(self, method: str, request=None, timeout: Optional[float] = None,
              block: bool = True) -> Optional["PendingCall"]:
        """:meth:`call` in two steps: sends the call and returns a
        :class:`PendingCall` at once (``block=False``: None when sending would
        wait, nothing sent); its :meth:`~PendingCall.result` is what ``call``
        returns or raises."""
        data, response_class = request_of(method, request)
        pending = self.begin_raw(method, data, timeout, block)
        if pending is not None:
            pending.response_class = response_class
        return pending

    def call(self, method: str, request=None, timeout: Optional[float] = None):
        """A unary call: ``method`` is "GetHome" or "home.v1.HomeService/GetHome";
        ``request`` a message, a dict (JSON field names), raw bytes or None.
        Returns the response message (bytes for a method the schema does not
        declare) or raises the HomedError of the status (``NotFound``, …)."""
        data, response_class = request_of(method, request)
        return response_of(method, self.call_raw(method, data, timeout), response_class)

    def stream(self, method: str, request=None, timeout: Optional[float] = None) -> "Subscription":
        """Open a server-streaming call (``Subscribe``, ``OpenProvider``); iterate
        the result for its response messages. ``timeout`` is how long the stream
        may live (None: until cancelled); it ends with DEADLINE_EXCEEDED then."""
        data, response_class = request_of(method, request)
        return Subscription(self, self._open(method, data, timeout), response_class)

    def subscribe(self, request=None, timeout: Optional[float] = None) -> "Subscription":
        """Open a Subscribe stream; iterate the result for SubscribeResponse messages."""
        return self.stream("Subscribe", request if request is not None else pb.SubscribeRequest(), timeout)

    def ping(self, timeout: float = 5.0) -> float:
        """Ping the daemon; returns the round trip in seconds."""
        event = threading.Event()
        with self._lock:
            nonce, data = self._core.ping(lambda error: event.set())
        start = time.monotonic()
        self._write(data)
        if not event.wait(timeout):
            with self._lock:
                self._core.forget_ping(nonce)
            raise DeadlineExceeded(f"no pong within {timeout} s")
        if self._core.closed:
            raise self._core.closed_error()
        return time.monotonic() - start

    # Convenience wrappers for the declared methods.
    def get_home(self, home_id: int = 0, page_size: int = 256, timeout: Optional[float] = None):
        """The whole home (or every home) as one GetHomeResponse, however large:
        asked in pages of ``page_size`` accessories (0: in one response, refused
        when larger than a frame), all cut from one snapshot, and put together
        here. A page refused as too large is asked for again, half as large."""
        pages = HomePages(home_id, page_size)
        request = pages.request()
        while request is not None:
            try:
                request = pages.take(self.call("GetHome", request, timeout))
            except HomedError as error:
                request = pages.refused(error)
        return pages.home

    def get_status(self, timeout: Optional[float] = None):
        return self.call("GetStatus", pb.GetStatusRequest(), timeout)

    def read(self, characteristic_ids, fresh: bool = False, timeout: Optional[float] = None):
        return self.call("ReadCharacteristics", read_request(characteristic_ids, fresh), timeout)

    def write(self, values: dict, atomic: bool = False, validate_only: bool = False,
              timeout: Optional[float] = None, conditions: Optional[dict] = None):
        """``values``: {characteristic_id: pb.Value}. ``conditions``:
        {characteristic_id: what the write expects} (a ``CharacteristicRead``, a
        ``pb.Value``, a change seq or a ``pb.WriteCondition``): the item fails with
        FAILED_PRECONDITION, nothing written, when it does not hold."""
        return self.call(
            "WriteCharacteristics", write_request(values, atomic, validate_only, conditions), timeout)


class PendingCall:
    """A unary call sent and not yet answered (:meth:`Client.begin`)."""

    def __init__(self, client: Client, call: Call, timeout: Optional[float]):
        self._client = client
        self._call = call
        self._timeout = timeout
        self._deadline = None if timeout is None else time.monotonic() + timeout + DEADLINE_GRACE
        self._payloads: list = []
        self._outcome = None  # ("ok", payloads) | ("error", HomedError), once ended
        self.response_class = None

    @property
    def method(self) -> str:
        return self._call.method

    def done(self) -> bool:
        """True once the answer is in (result() then returns or raises at once)."""
        self._take(block=False)
        return self._outcome is not None

    def result_raw(self) -> list:
        """The response payloads (bytes) of a call that ended OK, else raises its
        HomedError. When no status arrives within the call's deadline plus a
        second, the call is cancelled and DEADLINE_EXCEEDED raised."""
        self._take(block=True)
        if self._outcome[0] == "error":
            raise self._outcome[1]
        return self._outcome[1]

    def result(self):
        """The response message (as :meth:`Client.call` returns it), else raises."""
        return response_of(self._call.method, self.result_raw(), self.response_class)

    def _take(self, block: bool) -> None:
        client, call = self._client, self._call
        while self._outcome is None:
            try:
                if block:
                    remaining = None if self._deadline is None else max(0.0, self._deadline - time.monotonic())
                    item = call.items.get(timeout=remaining)
                else:
                    item = call.items.get_nowait()
            except queue.Empty:
                if not block:
                    return
                client._cancel(call)
                with client._lock:
                    client._core.forget(call)
                self._outcome = ("error", DeadlineExceeded(f"{call.method}: no answer within {self._timeout} s"))
                return
            try:
                if unary_item(item, self._payloads):
                    self._outcome = ("ok", self._payloads)
            except HomedError as error:
                self._outcome = ("error", error)


class Subscription:
    """A server stream (Subscribe, or any method opened with ``Client.stream``).
    Iterating yields its messages (SubscribeResponse for Subscribe) and ends
    when the daemon ends the stream with OK, or with CANCELLED after cancel();
    any other status raises HomedError."""

    def __init__(self, client: Client, call: Call, message_class=None):
        self._client = client
        self._call = call
        # The method's response type (bytes for a method the schema does not declare).
        self._end = StreamEnd(message_class if message_class is not None else pb.SubscribeResponse)

    @property
    def call_id(self) -> int:
        return self._call.call_id

    def get(self, timeout: Optional[float] = None):
        """The next SubscribeResponse; None once the stream has ended normally.
        Raises TimeoutError when nothing arrives within ``timeout`` seconds."""
        if self._end.done:
            return None
        try:
            item = self._call.items.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no stream message within {timeout} s") from None
        return self._end.message(item)

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
        if self._end.cancel():
            self._client._cancel(self._call)

    close = cancel

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cancel()

