"""homed.aio's side of the wire against an in-test fake daemon on a temporary
Unix socket: what a broken or hostile peer does to open calls (a garbage frame,
an oversized length, a close inside a frame, a status on call 0), pings both
ways, go-away, a hello never answered and a socket that is not homed's. Every
case ends in a HomedError naming what happened, never in a hang. No homed
binary needed."""

import asyncio
import os
import shutil
import tempfile

import pytest

import homed
import homed.aio
from homed import pb
from homed.framing import DEFAULT_MAX_FRAME_SIZE, HEADER, FrameDecoder, encode_frame

WAIT = 5.0


def run(coroutine, timeout: float = 20.0):
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


def frame(call_id, **kind) -> bytes:
    return encode_frame(pb.Frame(call_id=call_id, **kind).SerializeToString())


HELLO_REPLY = frame(0, hello_reply=pb.HelloReply(protocol_version=1, server_name="fake", connection_id=9,
                                                 journal_id="fake-journal"))


class FakeDaemon:
    """A Unix socket server speaking the daemon's side. ``on_open(daemon,
    writer, frame)`` answers each call (default: GetStatus at once, anything
    else UNIMPLEMENTED); ``greeting`` is what it sends for the hello (None:
    nothing, ever). Records pongs, cancels and the hello."""

    def __init__(self, on_open=None, greeting=HELLO_REPLY):
        self.on_open = on_open or FakeDaemon.answer_status
        self.greeting = greeting
        self.hello = None
        self.pongs = []
        self.cancelled = []
        self.directory = tempfile.mkdtemp(prefix="homed-fake-", dir="/tmp")
        self.path = os.path.join(self.directory, "fake.sock")
        self.server = None

    async def __aenter__(self):
        self.server = await asyncio.start_unix_server(self.serve, path=self.path)
        return self

    async def __aexit__(self, *exc):
        self.server.close()
        await self.server.wait_closed()
        shutil.rmtree(self.directory, ignore_errors=True)

    async def serve(self, reader, writer):
        decoder = FrameDecoder()
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    return
                for body in decoder.feed(data):
                    await self.handle(writer, pb.Frame.FromString(body))
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def handle(self, writer, request):
        kind = request.WhichOneof("kind")
        if kind == "hello":
            self.hello = request.hello
            if self.greeting is not None:
                writer.write(self.greeting)
        elif kind == "pong":
            self.pongs.append(request.pong.nonce)
        elif kind == "ping":
            writer.write(frame(0, pong=pb.Pong(nonce=request.ping.nonce)))
        elif kind == "cancel":
            self.cancelled.append(request.call_id)
            writer.write(frame(request.call_id, status=pb.CallStatus(code=pb.CANCELLED, message="cancelled")))
        elif kind == "open":
            await self.on_open(self, writer, request)
        await writer.drain()

    @staticmethod
    async def answer_status(daemon, writer, request):
        if request.open.method.endswith("/GetStatus"):
            payload = pb.GetStatusResponse(connection_id=9).SerializeToString()
            writer.write(frame(request.call_id, message=pb.CallMessage(payload=payload)))
            writer.write(frame(request.call_id, status=pb.CallStatus(code=pb.OK)))
        elif request.open.method.endswith("/Subscribe"):
            for seq in (1, 2):
                response = pb.SubscribeResponse(journal_id="fake-journal")
                response.events.add(seq=seq, kind=pb.EVENT_VALUE_CHANGED)
                writer.write(frame(request.call_id, message=pb.CallMessage(payload=response.SerializeToString())))
        else:
            writer.write(frame(request.call_id, status=pb.CallStatus(code=pb.UNIMPLEMENTED, message="no")))


def answering_with(data: bytes, close: bool = True):
    """An on_open that sends these bytes for any call (then closes)."""
    async def on_open(daemon, writer, request):
        writer.write(data)
        await writer.drain()
        if close:
            writer.close()
    return on_open


async def failed_call(on_open):
    async with FakeDaemon(on_open) as daemon:
        client = await homed.aio.connect(daemon.path, timeout=WAIT, call_timeout=WAIT)
        try:
            with pytest.raises(homed.HomedError) as raised:
                await client.get_status()
            with pytest.raises(homed.HomedError):  # and the connection is done with
                await client.get_status()
            assert client.closed
            return raised.value
        finally:
            await client.close()


def test_a_garbage_frame_fails_the_open_call():
    error = run(failed_call(answering_with(HEADER.pack(16) + b"\xff" * 16, close=False)))
    assert isinstance(error, homed.Internal) and "undecodable frame" in error.message


def test_an_oversized_length_fails_the_open_call():
    error = run(failed_call(answering_with(HEADER.pack(DEFAULT_MAX_FRAME_SIZE + 1), close=False)))
    assert isinstance(error, homed.ResourceExhausted) and str(DEFAULT_MAX_FRAME_SIZE + 1) in error.message


def test_a_close_inside_a_frame_fails_the_open_call():
    error = run(failed_call(answering_with(HEADER.pack(10) + b"\x08\x01\x12")))
    assert isinstance(error, homed.Unavailable) and "inside a frame" in error.message


def test_a_close_fails_open_calls_with_the_status_on_call_0_just_before():
    reason = frame(0, status=pb.CallStatus(code=pb.RESOURCE_EXHAUSTED, message="frame too large"))
    error = run(failed_call(answering_with(reason)))
    assert isinstance(error, homed.ResourceExhausted) and error.message == "frame too large"


def test_a_plain_close_fails_open_calls_and_streams_with_unavailable():
    async def body():
        async def subscribe_then_close(daemon, writer, request):
            await FakeDaemon.answer_status(daemon, writer, request)
            if request.open.method.endswith("/Subscribe"):
                await writer.drain()
                writer.close()

        async with FakeDaemon(subscribe_then_close) as daemon:
            async with homed.aio.connect(daemon.path, timeout=WAIT) as client:
                stream = client.subscribe()
                assert [(await stream.get(WAIT)).events[0].seq for _ in range(2)] == [1, 2]
                with pytest.raises(homed.Unavailable):
                    await stream.get(WAIT)
    run(body())


def test_calls_streams_pings_cancel_and_go_away():
    async def body():
        async with FakeDaemon() as daemon:
            async with homed.aio.connect(daemon.path, client_name="unit", timeout=WAIT) as client:
                assert daemon.hello.client_name == "unit" and daemon.hello.protocol_version == 1
                assert client.hello_reply.journal_id == "fake-journal" and client.connection_id == 9
                assert (await client.call("GetStatus", {})).connection_id == 9
                with pytest.raises(homed.Unimplemented):
                    await client.call("Nope")
                stream = client.subscribe(pb.SubscribeRequest())
                assert [(await stream.get(WAIT)).events[0].seq for _ in range(2)] == [1, 2]
                with pytest.raises(TimeoutError):
                    await stream.get(0.05)
                stream.cancel()
                assert [m async for m in stream] == [] and daemon.cancelled == [stream.call_id]
                assert await client.ping(WAIT) < WAIT
                # The daemon's ping is answered by the reader, without any call waiting.
                server_writer = await _server_writer(daemon, client)
                server_writer.write(frame(0, ping=pb.Ping(nonce=4242)))
                await _until(lambda: daemon.pongs == [4242])
                server_writer.write(frame(0, go_away=pb.GoAway(reason="shutting down")))
                await _until(lambda: client.go_away is not None)
                with pytest.raises(homed.Unavailable) as refused:
                    await client.get_status()
                assert "shutting down" in refused.value.message
    run(body())


async def _server_writer(daemon, client):
    """The fake daemon's writer for this client's connection: opened by a call
    whose on_open hands it over."""
    handed = asyncio.get_running_loop().create_future()

    async def hand_over(_daemon, writer, request):
        handed.set_result(writer)
        writer.write(frame(request.call_id, status=pb.CallStatus(code=pb.OK)))

    daemon.on_open = hand_over
    await client.call_raw("Handover")
    return await asyncio.wait_for(handed, WAIT)


async def _until(condition, timeout: float = WAIT):
    async def poll():
        while not condition():
            await asyncio.sleep(0.01)
    await asyncio.wait_for(poll(), timeout)


def test_a_call_with_no_answer_ends_with_deadline_exceeded_and_is_cancelled():
    async def never(daemon, writer, request):
        pass

    async def body():
        async with FakeDaemon(never) as daemon:
            async with homed.aio.connect(daemon.path, timeout=WAIT) as client:
                with pytest.raises(homed.DeadlineExceeded):
                    await client.get_status(timeout=0.1)  # the daemon's deadline, plus a second
                await _until(lambda: len(daemon.cancelled) == 1)
    run(body())


def test_a_refused_hello_raises_the_daemons_status():
    async def body():
        refusal = frame(0, status=pb.CallStatus(code=pb.FAILED_PRECONDITION, message="protocol 99 is not spoken"))
        async with FakeDaemon(greeting=refusal) as daemon:
            with pytest.raises(homed.FailedPrecondition) as raised:
                await homed.aio.connect(daemon.path, timeout=WAIT)
            assert "99" in raised.value.message
    run(body())


def test_a_hello_never_answered_is_a_clear_timeout():
    async def body():
        async with FakeDaemon(greeting=None) as daemon:
            with pytest.raises(homed.DeadlineExceeded) as raised:
                await homed.aio.connect(daemon.path, timeout=0.3)
            assert daemon.path in raised.value.message and "hello" in raised.value.message
            assert "the `path` argument" in raised.value.message
    run(body())


@pytest.mark.parametrize("greeting", [b"SSH-2.0-OpenSSH_9.6\r\n", b"\x00\x00\x00\x03abc"],
                         ids=["oversized-length", "undecodable"])
def test_a_socket_that_is_not_homeds_says_so(greeting):
    async def body():
        async with FakeDaemon(greeting=greeting) as daemon:
            with pytest.raises(homed.Unavailable) as raised:
                await homed.aio.connect(daemon.path, timeout=WAIT)
            assert f"{daemon.path} is not homed's socket" in raised.value.message
    run(body())


def test_a_connection_reset_during_the_hello_is_unavailable():
    """A daemon restarting between accept and hello resets the connection: that
    is Unavailable (so a resuming subscription or a provider tries again), not a
    ConnectionResetError that ends them."""
    import socket
    import struct
    import threading

    directory = tempfile.mkdtemp(prefix="homed-aio-reset-", dir="/tmp")
    path = os.path.join(directory, "reset.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)

    def reset_the_first():
        conn, _ = server.accept()
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()  # RST, as a killed daemon's socket

    thread = threading.Thread(target=reset_the_first, daemon=True)
    thread.start()

    async def body():
        with pytest.raises(homed.Unavailable) as raised:
            await homed.aio.connect(path, timeout=WAIT)
        assert f"the connection to {path} closed during the hello" in raised.value.message

    try:
        run(body())
    finally:
        thread.join(5)
        server.close()
        shutil.rmtree(directory, ignore_errors=True)
