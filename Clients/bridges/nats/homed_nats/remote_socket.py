"""The remote socket: homed's own protocol on a local Unix socket, each call
carried over NATS to the site's homed-nats (README.md, "The remote socket").

Framing, hello, pings, call ids, cancels and deadlines are the socket's
(docs/protocol.md), kept here; unary calls go by request/reply to
`homed.<site>.call.<Method>` (calls.py, at the home); `Subscribe` is served
from the stream and the bucket (follow.py); `ModifySubscription` changes a
subscription of this connection. What NATS cannot carry (a provider session, a
backup) is UNIMPLEMENTED naming the method; NATS away is UNAVAILABLE naming the
server, and the socket stays up and carries calls again once it is back.
"""

from __future__ import annotations

import asyncio
import collections
import errno
import hashlib
import itertools
import logging
import os
import socket
import stat
from typing import Dict, Optional

import nats.errors

import homed
from homed import pb
from homed.framing import FrameDecoder, FrameTooLarge, encode_frame

from . import __version__
from .calls import HDR_TIMEOUT, NOT_CARRIED, call_subject
from .config import Settings
from .follow import Scope, Site, Subscription
from .layout import HDR_STATUS

log = logging.getLogger("homed-nats-remote")

__all__ = ["RemoteSocket", "default_socket_path", "SocketInUse"]

MAX_FRAME = 4 * 1024 * 1024
MIN_FRAME = 65536
MAX_STREAMS = 64
HELLO_TIMEOUT = 5.0
ORIGINS = 65536  # the seqs of writes made through this socket, for their events' origin
DEFAULT_CALL_TIMEOUT = 30.0
ORIGIN_METHODS = ("WriteCharacteristics",)  # whose answers name the events they caused (their seq)
FIRST_CONNECT = 3.0  # how long after its start the socket waits for NATS before saying UNAVAILABLE


class SocketInUse(Exception):
    pass


def default_socket_path(settings: Settings) -> str:
    """Where the remote socket of these servers, site and credentials lives:
    $XDG_RUNTIME_DIR/homed/, else /tmp/homed-$UID/; the name carries the site
    and a digest of the servers and credentials, so two homes never share one."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    directory = os.path.join(base, "homed") if base else f"/tmp/homed-{os.getuid()}"
    key = "\n".join(sorted(settings.servers) + [settings.names.prefix, settings.creds_file or "",
                                                settings.username or ""])
    digest = hashlib.sha256(key.encode()).hexdigest()[:10]
    return os.path.join(directory, f"nats-{settings.names.site}-{digest}.sock")


def _prepare_directory(path: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    info = os.stat(directory)
    if info.st_uid != os.getuid():
        raise SocketInUse(f"socket directory {directory} belongs to uid {info.st_uid}, not to this user "
                          f"({os.getuid()}): refused")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
        raise SocketInUse(f"socket directory {directory} is writable by others "
                          f"(mode {stat.S_IMODE(info.st_mode):o}): refused")


def _live(path: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1)
        probe.connect(path)
        return True
    except OSError as error:
        if error.errno in (errno.ECONNREFUSED, errno.ENOENT):
            return False
        raise
    finally:
        probe.close()


class Connection:
    def __init__(self, server: "RemoteSocket", reader, writer, connection_id: int):
        self.server = server
        self.reader, self.writer = reader, writer
        self.id = connection_id
        self.client_name = ""
        self.max_frame = MAX_FRAME
        self.calls: Dict[int, asyncio.Task] = {}
        self.subscriptions: Dict[int, Subscription] = {}
        self.closed = False

    def write(self, frame) -> None:
        if self.closed:
            return
        data = frame.SerializeToString()
        self.writer.write(encode_frame(data))

    async def flush(self) -> None:
        try:
            await self.writer.drain()
        except (ConnectionError, OSError):
            self.closed = True

    def status(self, call_id: int, code: int, message: str = "") -> None:
        self.write(pb.Frame(call_id=call_id, status=pb.CallStatus(code=code, message=message)))

    async def run(self) -> None:
        decoder = FrameDecoder(MAX_FRAME)
        try:
            if not await self._hello(decoder):
                return
            while not self.closed:
                data = await self.reader.read(65536)
                if not data:
                    return
                try:
                    bodies = decoder.feed(data)
                except FrameTooLarge as error:
                    self.status(0, pb.RESOURCE_EXHAUSTED, f"{error}")
                    await self.flush()
                    return
                if not self._bodies(bodies):
                    await self.flush()
                    return
                await self.flush()
        except (ConnectionError, OSError):
            pass
        except Exception:  # noqa: BLE001 - one connection's failure must not end the socket: said, then closed
            log.exception("connection %d (%s): closed after an unexpected error", self.id, self.client_name)
        finally:
            self.closed = True
            for subscription in list(self.subscriptions.values()):
                subscription.cancelled = True
            for task in list(self.calls.values()):
                task.cancel()
            try:
                self.writer.close()
            except Exception:  # noqa: BLE001
                pass

    async def _hello(self, decoder) -> bool:
        bodies = []
        try:
            async with asyncio.timeout(HELLO_TIMEOUT):
                while not bodies:
                    data = await self.reader.read(65536)
                    if not data:
                        return False
                    bodies = decoder.feed(data)
        except TimeoutError:
            self.status(0, pb.DEADLINE_EXCEEDED, f"no hello within {HELLO_TIMEOUT:g} s")
            await self.flush()
            return False
        except FrameTooLarge as error:
            self.status(0, pb.RESOURCE_EXHAUSTED, str(error))
            await self.flush()
            return False
        try:
            frame = pb.Frame.FromString(bodies[0])
        except Exception:  # noqa: BLE001
            frame = pb.Frame()
        if frame.WhichOneof("kind") != "hello":
            self.status(0, pb.FAILED_PRECONDITION, "the first frame must be a hello")
            await self.flush()
            return False
        hello = frame.hello
        if hello.protocol_version != 1:
            self.status(0, pb.FAILED_PRECONDITION, f"protocol version {hello.protocol_version} is not spoken here "
                                                   f"(homed-nats-remote speaks 1)")
            await self.flush()
            return False
        try:
            journal = await self.server.journal()
        except homed.HomedError as error:
            self.status(0, error.code, error.message)
            await self.flush()
            return False
        self.client_name = hello.client_name
        if hello.max_frame_size:
            self.max_frame = max(MIN_FRAME, min(MAX_FRAME, hello.max_frame_size))
        decoder.max_frame_size = self.max_frame
        reply = pb.Frame(call_id=0)
        reply.hello_reply.protocol_version = 1
        reply.hello_reply.server_name = "homed-nats-remote"
        reply.hello_reply.server_version = __version__
        reply.hello_reply.connection_id = self.id
        reply.hello_reply.max_frame_size = self.max_frame
        reply.hello_reply.capabilities.append("batch-events")
        reply.hello_reply.journal_id = journal
        self.write(reply)
        going_on = self._bodies(bodies[1:])
        await self.flush()
        return going_on

    def _bodies(self, bodies) -> bool:
        """Takes in frames; False when one does not decode (said on call 0: the connection ends)."""
        for body in bodies:
            try:
                frame = pb.Frame.FromString(body)
            except Exception as error:  # noqa: BLE001 - a frame that does not decode ends the connection
                self.status(0, pb.INVALID_ARGUMENT, f"a frame that is no home.v1.Frame: {error}")
                return False
            self._frame(frame)
        return True

    def _frame(self, frame) -> None:
        kind = frame.WhichOneof("kind")
        call_id = frame.call_id
        if kind == "ping":
            self.write(pb.Frame(call_id=0, pong=pb.Pong(nonce=frame.ping.nonce)))
        elif kind == "pong":
            pass
        elif kind == "hello":
            self.status(0, pb.FAILED_PRECONDITION, "a second hello: the connection has said hello already")
        elif kind == "cancel":
            task = self.calls.get(call_id)
            if task is not None:
                if call_id in self.subscriptions:
                    self.subscriptions[call_id].cancelled = True
                task.cancel()
        elif kind == "open":
            if call_id == 0:
                self.status(0, pb.INVALID_ARGUMENT, "a call needs a call id of 1 or more")
            elif call_id in self.calls:
                self.status(0, pb.ALREADY_EXISTS, f"call {call_id} is still open")
            else:
                self.calls[call_id] = asyncio.ensure_future(self._call(call_id, frame.open))

    async def _call(self, call_id: int, open_) -> None:
        method = open_.method.rpartition("/")[2]
        try:
            code, message = await self._dispatch(call_id, method, open_)
        except asyncio.CancelledError:
            if self.server.stopping is not None and self.server.stopping.is_set():
                code, message = pb.UNAVAILABLE, f"{method}: homed-nats-remote is stopping"
            else:
                code, message = pb.CANCELLED, f"{method}: cancelled by the client"
        except homed.HomedError as error:
            code, message = error.code, error.message
        except Exception as error:  # noqa: BLE001 - one call's failure is that call's
            log.exception("%s: failed", method)
            code, message = pb.INTERNAL, f"homed-nats-remote: {method}: {error}"
        finally:
            self.calls.pop(call_id, None)
            self.subscriptions.pop(call_id, None)
        self.status(call_id, code, message)
        await self.flush()

    async def _dispatch(self, call_id: int, method: str, open_):
        types = pb.method_types(open_.method)
        if types is None:
            return pb.UNIMPLEMENTED, f"unknown method {open_.method!r}"
        if method in NOT_CARRIED:
            return pb.UNIMPLEMENTED, (f"{method} is not carried by the remote socket over NATS "
                                      f"({NOT_CARRIED[method]}): use homed's own socket at the home")
        timeout = open_.timeout_ms / 1000 if open_.HasField("timeout_ms") else None
        if timeout == 0:
            return pb.DEADLINE_EXCEEDED, f"{method}: the call's deadline had passed when it came"
        try:
            request = types[0].FromString(open_.request)
        except Exception as error:  # noqa: BLE001
            return pb.INVALID_ARGUMENT, f"{method}: the request is no {types[0].DESCRIPTOR.full_name} ({error})"
        if method == "Subscribe":
            return await self._subscribe(call_id, request, timeout)
        if method == "ModifySubscription":
            return self._modify(call_id, request)
        writing = method in ORIGIN_METHODS
        if writing:
            self.server.writes_in_flight += 1
        try:
            payload = await self.server.unary(method, open_.request, timeout)
            if method == "WriteCharacteristics":
                for result in pb.WriteCharacteristicsResponse.FromString(payload).results:
                    if result.seq:
                        self.server.remember(result.seq, self.id, self.client_name)
        finally:
            if writing:
                self.server.writes_in_flight -= 1
        if len(payload) + 32 > self.max_frame:
            return pb.RESOURCE_EXHAUSTED, (f"{method}: the answer is {len(payload)} bytes, over this connection's "
                                           f"frame size ({self.max_frame}); ask for less (GetHome: page_size)")
        if method == "GetStatus":
            status = pb.GetStatusResponse.FromString(payload)
            status.connection_id = self.id
            status.socket_path = self.server.path
            payload = status.SerializeToString()
        self.write(pb.Frame(call_id=call_id, message=pb.CallMessage(payload=payload)))
        return pb.OK, ""

    def _modify(self, call_id: int, request):
        subscription = self.subscriptions.get(request.call_id)
        if subscription is None:
            return pb.NOT_FOUND, f"no subscription on call {request.call_id} of this connection"
        subscription.scope.add(request.add)
        subscription.scope.remove(request.remove)
        response = pb.ModifySubscriptionResponse(seq=subscription.seq)
        self.write(pb.Frame(call_id=call_id, message=pb.CallMessage(payload=response.SerializeToString())))
        return pb.OK, ""

    async def _subscribe(self, call_id: int, request, timeout: Optional[float]):
        if len(self.subscriptions) >= MAX_STREAMS:
            return pb.RESOURCE_EXHAUSTED, f"too many open streams on this connection (limit {MAX_STREAMS})"
        site = await self.server.site()

        async def send(message) -> None:
            self.write(pb.Frame(call_id=call_id, message=pb.CallMessage(payload=message.SerializeToString())))
            await self.flush()

        subscription = Subscription(site, request, send, self.server, self.id, self.max_frame)
        self.subscriptions[call_id] = subscription

        async def run():
            try:
                await subscription.start()
            except (nats.errors.Error, asyncio.TimeoutError, OSError) as error:
                raise self.server.unavailable(error) from None
            await subscription.follow()

        try:
            if timeout is None:
                await run()
            else:
                try:
                    async with asyncio.timeout(timeout):
                        await run()
                except TimeoutError:
                    return pb.DEADLINE_EXCEEDED, f"Subscribe: the stream's deadline ({timeout:g} s) passed"
        finally:
            await subscription.close()
        return pb.OK, ""


class RemoteSocket:
    """Serves `path` until stopped: `await RemoteSocket(settings, path).serve()`."""

    def __init__(self, settings: Settings, path: str, js_prefix: Optional[str] = None,
                 exit_when_idle: Optional[float] = None):
        self.settings = settings
        self.names = settings.names
        self.path = path
        self.js_prefix = js_prefix
        self.exit_when_idle = exit_when_idle
        self.nc = None
        self._site: Optional[Site] = None
        self._journal = ""
        self.connections: Dict[int, Connection] = {}
        self.origins: Dict[int, tuple] = {}
        self.writes_in_flight = 0
        self._order: collections.deque = collections.deque()
        self._ids = itertools.count(1)
        self.stopping: Optional[asyncio.Event] = None
        self.loop = None
        self.started = 0.0

    # -- NATS -------------------------------------------------------------------------

    @property
    def servers(self) -> str:
        return ", ".join(self.settings.servers)

    def unavailable(self, error=None) -> homed.HomedError:
        why = f" ({error or type(error).__name__})" if error is not None else ""
        return homed.error_for(pb.UNAVAILABLE, f"cannot reach the NATS server {self.servers}{why}; "
                                               f"homed-nats-remote tries again every 2 s")

    def connected(self):
        if self.nc is None or not self.nc.is_connected:
            raise self.unavailable()
        return self.nc

    async def _connect(self) -> None:
        from .bridge import connect_nats
        self.nc = await connect_nats(self.settings, f"homed-nats-remote ({self.names.site})", stopping=self.stopping)
        log.info("connected to the NATS server %s", self.nc.connected_url.netloc if self.nc.connected_url else "?")

    async def _first_connection(self) -> None:
        """Just started (by `homectl --nats`, say), the socket listens before NATS
        answers: a first client waits for the first connection a little, rather
        than hearing UNAVAILABLE from a server that is there."""
        if self.nc is None and self.loop is not None and self.loop.time() - self.started < FIRST_CONNECT:
            deadline = self.started + FIRST_CONNECT
            while self.nc is None and self.loop.time() < deadline:
                await asyncio.sleep(0.02)

    async def site(self) -> Site:
        await self._first_connection()
        nc = self.connected()
        if self._site is None:
            js = nc.jetstream(timeout=5, prefix=self.js_prefix) if self.js_prefix else nc.jetstream(timeout=5)
            self._site = Site(nc, js, self.names, api_prefix=self.js_prefix or "$JS.API")
        return self._site

    async def journal(self) -> str:
        """The journal a hello names: the bucket's cursor's (the last one seen while NATS is away)."""
        try:
            site = await self.site()
            cursor = await asyncio.wait_for(site.get("cursor"), 3)
            if cursor and cursor.get("journal"):
                self._journal = cursor["journal"]
        except homed.HomedError:
            if not self._journal:
                raise
        except (nats.errors.Error, asyncio.TimeoutError, OSError) as error:
            if not self._journal:
                raise self.unavailable(error) from None
        if not self._journal:
            raise homed.error_for(pb.UNAVAILABLE, f"homed-nats has not published site {self.names.site} on "
                                                  f"{self.servers} yet (no cursor in bucket {self.names.bucket})")
        return self._journal

    async def unary(self, method: str, request: bytes, timeout: Optional[float]) -> bytes:
        await self._first_connection()
        nc = self.connected()
        subject = call_subject(self.names.prefix, self.names.site, method)
        headers = {HDR_TIMEOUT: str(int(timeout * 1000))} if timeout is not None else None
        wait = (timeout if timeout is not None else DEFAULT_CALL_TIMEOUT) + 1.0
        try:
            msg = await nc.request(subject, request, timeout=wait, headers=headers)
        except nats.errors.NoRespondersError:
            raise homed.error_for(pb.UNAVAILABLE, f"{method}: no homed-nats answers on {subject} at {self.servers} "
                                                  f"(is the bridge of site {self.names.site} running?)") from None
        except nats.errors.TimeoutError:
            raise homed.error_for(pb.DEADLINE_EXCEEDED, f"{method}: no answer on {subject} within {wait:g} s") \
                from None
        except (nats.errors.Error, OSError) as error:
            raise self.unavailable(error) from None
        code = (msg.headers or {}).get(HDR_STATUS)
        if code is None or not code.lstrip("-").isdigit():
            raise homed.error_for(pb.INTERNAL, f"{method}: an answer on {subject} without {HDR_STATUS}")
        if int(code) != pb.OK:
            status = pb.CallStatus.FromString(msg.data or b"")
            raise homed.error_for(status.code or int(code), status.message)
        return msg.data or b""

    def remember(self, seq: int, connection_id: int, name: str) -> None:
        self.origins[seq] = (connection_id, name)
        self._order.append(seq)
        while len(self._order) > ORIGINS:
            self.origins.pop(self._order.popleft(), None)

    # -- the socket -------------------------------------------------------------------

    def stop(self) -> None:
        if self.loop is not None and self.stopping is not None:
            self.loop.call_soon_threadsafe(self.stopping.set)

    def run(self) -> None:
        asyncio.run(self.serve())

    async def serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.started = self.loop.time()
        self.stopping = asyncio.Event()
        _prepare_directory(self.path)
        if os.path.exists(self.path):
            if _live(self.path):
                raise SocketInUse(f"another program is listening on {self.path}")
            os.unlink(self.path)
        previous = os.umask(0o177)  # never wider than the owner's, not even between bind and chmod
        try:
            server = await asyncio.start_unix_server(self._accept, path=self.path, limit=MAX_FRAME)
        finally:
            os.umask(previous)
        with open(self.path + ".pid", "w") as f:
            f.write(f"{os.getpid()}\n")  # who serves it: for `kill`, and for tests that clean up by pid
        log.info("homed's protocol on %s, carried over NATS %s to site %s", self.path, self.servers,
                 self.names.site)
        connecting = asyncio.ensure_future(self._connect())
        idle = asyncio.ensure_future(self._idle()) if self.exit_when_idle else None
        try:
            await self.stopping.wait()
        finally:
            server.close()
            for connection in list(self.connections.values()):
                connection.write(pb.Frame(call_id=0, go_away=pb.GoAway(reason="homed-nats-remote is stopping")))
                for subscription in list(connection.subscriptions.values()):
                    subscription.cancelled = True
                for task in list(connection.calls.values()):
                    task.cancel()
            await asyncio.sleep(0)
            for task in [connecting, idle]:
                if task is not None:
                    task.cancel()
            for leftover in (self.path, self.path + ".pid"):
                try:
                    os.unlink(leftover)
                except OSError:
                    pass
            if self.nc is not None:
                try:
                    await asyncio.wait_for(self.nc.close(), 2)
                except Exception:  # noqa: BLE001
                    pass
            log.info("stopped")

    async def _idle(self) -> None:
        quiet = 0.0
        while True:
            await asyncio.sleep(1)
            quiet = 0.0 if self.connections else quiet + 1
            if quiet >= self.exit_when_idle:
                log.info("no client for %g s: stopping", self.exit_when_idle)
                self.stopping.set()
                return

    async def _accept(self, reader, writer) -> None:
        connection = Connection(self, reader, writer, next(self._ids))
        self.connections[connection.id] = connection
        try:
            await connection.run()
        finally:
            self.connections.pop(connection.id, None)
