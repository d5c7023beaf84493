"""The asyncio connection to homed: a hello, then one reader task that
demultiplexes frames by call id, answers the daemon's pings at once, records its
go-away, and fails every open call when the connection closes (with the status
the daemon sent on call 0 just before, when it did: that is the reason).

This module is the asyncio driver: it reads and writes the streams and
awaits. What the frames mean, the open calls and why the connection ended are
:class:`homed.client_core.Connection`'s, which the threaded client drives too."""

from __future__ import annotations

import asyncio
import time
from typing import List, Optional

from .. import proto as pb
from ..client_core import NOT_HOMED  # noqa: F401 - named here first; kept for those who import it from here
from ..client_core import (
    DEADLINE_GRACE, PROTOCOL_VERSION, Call, ClientBase, Connection, read_request, request_of, response_of,
    unary_item, write_request,
)
from ..errors import DaemonNotRunning, DeadlineExceeded, HomedError, SocketNotPermitted, Unavailable
from ..paging import HomePages
from ..paths import nothing_listens, resolve_socket_path
from .stream import Stream

_TIMEOUT_SCOPE = getattr(asyncio, "timeout", None)  # Python 3.11+

__all__ = ["Client", "connect"]

_READ_SIZE = 65536


def _call(call_id: int, method: str) -> Call:
    """A call whose items the reader task puts and the calling tasks await."""
    return Call(call_id, method, asyncio.Queue())


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


class Client(ClientBase):
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
        self._reader = reader
        self._writer = writer
        self._core = Connection(client_name, path)
        self._drain_lock = asyncio.Lock()
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
            if isinstance(error, PermissionError):
                raise SocketNotPermitted(path, error) from None
            raise
        client = cls(reader, writer, client_name, path, call_timeout)
        try:
            await asyncio.wait_for(client._hello(protocol_version, capabilities, max_frame_size), timeout)
        except asyncio.TimeoutError:
            client._abort()
            raise DeadlineExceeded(f"no answer to the hello from {path} within {timeout} s: is it homed's socket? "
                                   f"(the socket path is from {source})") from None
        except OSError as error:
            # The daemon went away between accept and hello (a restart): as
            # unavailable as a daemon not there, so that whoever reconnects
            # (ResumingSubscription, a provider) tries again.
            client._abort()
            raise Unavailable(f"the connection to {path} closed during the hello ({error.strerror or error}); "
                              f"is homed restarting?") from None
        except BaseException:
            client._abort()
            raise
        return client

    async def _hello(self, protocol_version: int, capabilities, max_frame_size: int) -> None:
        self._writer.write(self._core.hello(protocol_version, capabilities, max_frame_size))
        await self._writer.drain()
        rest = None
        while rest is None:
            rest = self._core.receive_hello(await self._reader.read(_READ_SIZE))
        self._reader_task = asyncio.ensure_future(self._read_loop(rest))

    async def close(self) -> None:
        """Closes the connection; open calls end with UNAVAILABLE."""
        if self._core.close():
            self._writer.close()
            task = self._reader_task
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                await asyncio.wait([task], timeout=5)
            self._core.fail_all()
        try:
            await asyncio.wait_for(self._writer.wait_closed(), 5)
        except (OSError, asyncio.TimeoutError, asyncio.CancelledError):
            pass

    def _abort(self) -> None:
        """Closes without waiting (a failed connect)."""
        self._core.closed = True
        if self._reader_task is not None:
            self._reader_task.cancel()
        self._writer.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # -- reading ------------------------------------------------------------------

    async def _read_loop(self, first_bodies: List[bytes]) -> None:
        failure = None
        try:
            self._send_all(self._core.receive_bodies(first_bodies))
            while True:
                data = await self._reader.read(_READ_SIZE)
                if not data:
                    break
                self._send_all(self._core.receive(data))
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - never leave a call waiting
            failure = error
        self._core.lost(failure)
        self._writer.close()
        self._core.fail_all()

    # -- writing ------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        """Queues one frame on the transport, at once (asyncio buffers it)."""
        if self._core.closed:
            raise self._core.closed_error()
        self._writer.write(data)

    async def _drain(self) -> None:
        """Waits while the transport's buffer is full (one waiter at a time:
        older Pythons do not allow concurrent drains)."""
        async with self._drain_lock:
            try:
                await self._writer.drain()
            except OSError as e:
                raise Unavailable(f"connection error: {e}") from e

    def open_call(self, method: str, request: bytes = b"", timeout: Optional[float] = None) -> Call:
        """Opens a call (any method, raw request bytes) and returns it; its
        frames arrive on ``call.items``. For new kinds of calls; use
        :meth:`call` and :meth:`stream`."""
        call, data = self._core.open(_call, method, request, timeout)
        try:
            self._write(data)
        except HomedError:
            self._core.forget(call)
            raise
        return call

    def cancel_call(self, call: Call) -> None:
        """Asks the daemon to end a call (it ends with CANCELLED)."""
        data = self._core.cancel(call)
        if data is not None:
            self._send_all([data])

    def _give_up(self, call: Call) -> None:
        self.cancel_call(call)
        self._core.forget(call)

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
            if _TIMEOUT_SCOPE is not None:
                # A deadline on this task (3.11+): wait_for would run the
                # collection in a task of its own, a hop of the event loop each way.
                async with _TIMEOUT_SCOPE(timeout + DEADLINE_GRACE):
                    return await self._collect(call)
            return await asyncio.wait_for(self._collect(call), timeout + DEADLINE_GRACE)
        except asyncio.TimeoutError:
            self._give_up(call)
            raise DeadlineExceeded(f"{call.method}: no answer within {timeout} s") from None
        except BaseException:
            self._give_up(call)
            raise

    @staticmethod
    async def _collect(call: Call) -> List[bytes]:
        payloads: List[bytes] = []
        while not unary_item(await call.items.get(), payloads):
            pass
        return payloads

    async def call(self, method: str, request=None, timeout: Optional[float] = None):
        """A unary call: ``method`` is "GetHome" or "home.v1.HomeService/GetHome";
        ``request`` a message, a dict (JSON field names), raw bytes or None.
        Returns the response message (bytes for a method the schema does not
        declare), or raises the HomedError of the status (``NotFound``, …)."""
        data, response_class = request_of(method, request)
        return response_of(method, await self.call_raw(method, data, timeout), response_class)

    def stream(self, method: str, request=None, timeout: Optional[float] = None) -> Stream:
        """Opens a server-streaming call (``Subscribe``, ``OpenProvider``) and
        returns it as a :class:`Stream` of its response messages. ``timeout`` is
        how long the stream may live (None: until cancelled)."""
        data, response_class = request_of(method, request)
        return Stream(self, self.open_call(method, data, timeout), response_class)

    def subscribe(self, request=None) -> Stream:
        """A Subscribe stream: ``async for response in client.subscribe(request)``
        yields SubscribeResponse messages; ``async with`` (or ``cancel()``) ends it."""
        return self.stream("Subscribe", request if request is not None else pb.SubscribeRequest())

    async def ping(self, timeout: float = 5.0) -> float:
        """Pings the daemon; returns the round trip in seconds."""
        waiter = asyncio.get_running_loop().create_future()

        def wake(error: Optional[HomedError]) -> None:
            if waiter.done():
                return
            if error is None:
                waiter.set_result(None)
            else:
                waiter.set_exception(error)

        nonce, data = self._core.ping(wake)
        start = time.monotonic()
        try:
            self._write(data)
            await asyncio.wait_for(waiter, timeout)
        except asyncio.TimeoutError:
            raise DeadlineExceeded(f"no pong within {timeout} s") from None
        finally:
            self._core.forget_ping(nonce)
        return time.monotonic() - start

    # -- the declared methods, conveniently -----------------------------------------

    async def get_home(self, home_id: int = 0, page_size: int = 256, timeout: Optional[float] = None):
        """The whole home (or every home) as one GetHomeResponse, however large:
        asked in pages of ``page_size`` accessories cut from one snapshot (0: one
        response, refused when larger than a frame) and put together here."""
        pages = HomePages(home_id, page_size)
        request = pages.request()
        while request is not None:
            try:
                request = pages.take(await self.call("GetHome", request, timeout))
            except HomedError as error:
                request = pages.refused(error)
        return pages.home

    async def get_status(self, timeout: Optional[float] = None):
        return await self.call("GetStatus", pb.GetStatusRequest(), timeout)

    async def read(self, characteristic_ids, fresh: bool = False, timeout: Optional[float] = None):
        """ReadCharacteristics: one result per id, each with its value or error."""
        return await self.call("ReadCharacteristics", read_request(characteristic_ids, fresh), timeout)

    async def write(self, values: dict, atomic: bool = False, validate_only: bool = False,
                    timeout: Optional[float] = None, conditions: Optional[dict] = None):
        """WriteCharacteristics of ``{characteristic_id: pb.Value}``: one result per
        item, each with its ``seq`` or its error. ``conditions`` as in the
        synchronous client's ``write``."""
        return await self.call(
            "WriteCharacteristics", write_request(values, atomic, validate_only, conditions), timeout)
