"""Unit tests of the framing and of the client's demultiplexing, against an
in-test fake daemon on a socket.socketpair(). No homed binary needed."""

import socket
import struct
import threading
import time

import pytest

from homed import Client, HomedError, pb
from homed.framing import FrameDecoder, FrameTooLarge, encode_frame, read_frames


# -- framing ------------------------------------------------------------------

def frame_bytes(call_id, **kind):
    return pb.Frame(call_id=call_id, **kind).SerializeToString()


def test_encode_prefixes_a_big_endian_length():
    body = frame_bytes(0, ping=pb.Ping(nonce=7))
    data = encode_frame(body)
    assert data[:4] == struct.pack(">I", len(body))
    assert data[4:] == body
    assert encode_frame(b"") == b"\0\0\0\0"


def test_decoder_handles_every_split():
    bodies = [frame_bytes(i, ping=pb.Ping(nonce=i * 1000)) for i in range(5)] + [b""]
    stream = b"".join(encode_frame(b) for b in bodies)
    for cut in range(1, 9):  # chunk sizes 1..8 bytes, so headers split too
        decoder, got = FrameDecoder(), []
        for i in range(0, len(stream), cut):
            got += decoder.feed(stream[i:i + cut])
        assert got == bodies
        assert decoder.pending == 0
    decoder = FrameDecoder()
    assert decoder.feed(stream) == bodies  # all at once


def test_decoder_refuses_a_length_above_the_maximum_before_buffering_it():
    decoder = FrameDecoder(max_frame_size=100)
    assert decoder.feed(encode_frame(b"x" * 100)) == [b"x" * 100]
    with pytest.raises(FrameTooLarge):
        decoder.feed(struct.pack(">I", 101))


def test_decoder_reports_a_truncated_frame():
    decoder = FrameDecoder()
    assert decoder.feed(encode_frame(b"abcdef")[:7]) == []
    assert decoder.pending == 7


def test_read_frames_over_a_socketpair_with_split_writes():
    a, b = socket.socketpair()
    bodies = [frame_bytes(1, message=pb.CallMessage(payload=bytes([i]) * (i * 997))) for i in range(40)]
    stream = b"".join(encode_frame(x) for x in bodies)

    def writer():
        for i in range(0, len(stream), 333):
            a.sendall(stream[i:i + 333])
        a.close()

    t = threading.Thread(target=writer)
    t.start()
    assert list(read_frames(b, FrameDecoder())) == bodies
    t.join()
    b.close()


def test_read_frames_raises_on_eof_inside_a_frame():
    a, b = socket.socketpair()
    a.sendall(encode_frame(b"abcdef")[:6])
    a.close()
    with pytest.raises(EOFError):
        list(read_frames(b, FrameDecoder()))
    b.close()


# -- a fake daemon --------------------------------------------------------------

class FakeDaemon:
    """Speaks the daemon's side of the protocol on one end of a socketpair.
    GetStatus answers at once; ReadCharacteristics answers after the request's
    first id in milliseconds (so answers come out of order); Subscribe sends
    three messages, then waits for a cancel; anything else is UNIMPLEMENTED.
    Every frame it writes goes out in 3-byte pieces to exercise split reads."""

    def __init__(self, refuse_hello=None, deaf=False):
        self.client_sock, self.sock = socket.socketpair()
        self.refuse_hello = refuse_hello
        self.deaf = deaf  # reads nothing after the hello (a daemon that hangs)
        self.hello = None
        self.pongs = []
        self.cancelled = []
        self.write_lock = threading.Lock()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def send(self, frame):
        data = encode_frame(frame.SerializeToString())
        with self.write_lock:
            for i in range(0, len(data), 3):
                self.sock.sendall(data[i:i + 3])

    def run(self):
        try:
            for body in read_frames(self.sock, FrameDecoder()):
                self.handle(pb.Frame.FromString(body))
                if self.deaf:
                    return
        except OSError:
            pass

    def handle(self, frame):
        kind = frame.WhichOneof("kind")
        if kind == "hello":
            self.hello = frame.hello
            if self.refuse_hello:
                self.send(pb.Frame(call_id=0, status=pb.CallStatus(code=self.refuse_hello, message="no")))
                self.sock.shutdown(socket.SHUT_RDWR)
                return
            self.send(pb.Frame(call_id=0, hello_reply=pb.HelloReply(
                protocol_version=1, server_name="fake", connection_id=9, max_frame_size=4 << 20,
                journal_id="fake-journal")))
        elif kind == "ping":
            self.send(pb.Frame(call_id=0, pong=pb.Pong(nonce=frame.ping.nonce)))
        elif kind == "pong":
            self.pongs.append(frame.pong.nonce)
        elif kind == "cancel":
            self.cancelled.append(frame.call_id)
            self.send(pb.Frame(call_id=frame.call_id, status=pb.CallStatus(code=pb.CANCELLED, message="cancelled")))
        elif kind == "open":
            method, cid = frame.open.method, frame.call_id
            if method == "home.v1.HomeService/GetStatus":
                self.reply(cid, pb.GetStatusResponse(connection_id=9, journal_id="fake-journal"))
            elif method == "home.v1.HomeService/ReadCharacteristics":
                request = pb.ReadCharacteristicsRequest.FromString(frame.open.request)
                if request.characteristic_ids[0] == 99:
                    self.send(pb.Frame(call_id=cid, status=pb.CallStatus(
                        code=pb.NOT_FOUND, message="no characteristic with id 99")))
                    return
                delay = request.characteristic_ids[0] / 1000

                def later():
                    time.sleep(delay)
                    response = pb.ReadCharacteristicsResponse()
                    for i in request.characteristic_ids:
                        response.reads.add(characteristic_id=i, value=pb.Value(int_value=i * 10))
                    self.reply(cid, response)

                threading.Thread(target=later, daemon=True).start()
            elif method == "home.v1.HomeService/Subscribe":
                for seq in (1, 2, 3):
                    response = pb.SubscribeResponse(journal_id="fake-journal")
                    response.events.add(seq=seq, kind=pb.EVENT_VALUE_CHANGED)
                    self.send(pb.Frame(call_id=cid, message=pb.CallMessage(payload=response.SerializeToString())))
            else:
                self.send(pb.Frame(call_id=cid, status=pb.CallStatus(
                    code=pb.UNIMPLEMENTED, message=f"unknown method {method}")))

    def reply(self, cid, message):
        self.send(pb.Frame(call_id=cid, message=pb.CallMessage(payload=message.SerializeToString())))
        self.send(pb.Frame(call_id=cid, status=pb.CallStatus(code=pb.OK)))

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def fake():
    d = FakeDaemon()
    yield d
    d.close()


@pytest.fixture
def client(fake):
    c = Client.from_socket(fake.client_sock, client_name="unit")
    yield c
    c.close()


def test_hello(fake, client):
    assert fake.hello.protocol_version == 1
    assert fake.hello.client_name == "unit"
    assert fake.hello.max_frame_size == 0
    assert client.hello_reply.journal_id == "fake-journal"
    assert client.connection_id == 9


def test_refused_hello_raises_the_status():
    d = FakeDaemon(refuse_hello=pb.FAILED_PRECONDITION)
    with pytest.raises(HomedError) as err:
        Client.from_socket(d.client_sock, client_name="unit")
    assert err.value.code == pb.FAILED_PRECONDITION
    assert err.value.code_name == "FAILED_PRECONDITION"
    d.close()


def test_unary_call(client):
    status = client.call("GetStatus")
    assert status.connection_id == 9
    response = client.call("ReadCharacteristics", {"characteristicIds": [5, 6]})
    assert [(r.characteristic_id, r.value.int_value) for r in response.reads] == [(5, 50), (6, 60)]


def test_error_status_raises(client):
    with pytest.raises(HomedError) as err:
        client.read([99])
    assert err.value.code == pb.NOT_FOUND
    assert err.value.message == "no characteristic with id 99"
    with pytest.raises(HomedError) as err:
        client.call("home.v1.HomeService/Nope", b"")
    assert err.value.code == pb.UNIMPLEMENTED


def test_calls_are_demultiplexed_when_answered_out_of_order(client):
    results = {}

    def read(first):
        results[first] = client.read([first, first + 1])

    threads = [threading.Thread(target=read, args=(ms,)) for ms in (300, 10, 150, 50, 200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert sorted(results) == [10, 50, 150, 200, 300]
    for first, response in results.items():
        assert [r.characteristic_id for r in response.reads] == [first, first + 1]


def test_subscribe_iterates_then_ends_on_cancel(fake, client):
    subscription = client.subscribe(pb.SubscribeRequest())
    seqs = [subscription.get(timeout=5).events[0].seq for _ in range(3)]
    assert seqs == [1, 2, 3]
    with pytest.raises(TimeoutError):
        subscription.get(timeout=0.05)
    subscription.cancel()
    assert list(subscription) == []
    assert fake.cancelled == [subscription.call_id]


def test_client_answers_the_daemons_ping(fake, client):
    fake.send(pb.Frame(call_id=0, ping=pb.Ping(nonce=12345)))
    deadline = time.monotonic() + 5
    while not fake.pongs and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fake.pongs == [12345]


def test_client_ping(client):
    assert client.ping(timeout=5) < 5


def test_go_away_is_recorded_and_refuses_new_calls(fake, client):
    fake.send(pb.Frame(call_id=0, go_away=pb.GoAway(reason="shutting down", last_call_id=0)))
    deadline = time.monotonic() + 5
    while client.go_away is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert client.go_away.reason == "shutting down"
    with pytest.raises(HomedError) as err:
        client.get_status()
    assert err.value.code == pb.UNAVAILABLE


def test_open_calls_fail_when_the_connection_drops(fake, client):
    subscription = client.subscribe(pb.SubscribeRequest())
    for _ in range(3):
        subscription.get(timeout=5)
    fake.send(pb.Frame(call_id=0, status=pb.CallStatus(code=pb.RESOURCE_EXHAUSTED, message="too big")))
    fake.close()
    with pytest.raises(HomedError) as err:
        subscription.get(timeout=5)
    assert err.value.code == pb.RESOURCE_EXHAUSTED  # the daemon's reason, not a bare EOF
    with pytest.raises(HomedError):
        client.get_status()


def test_dict_and_message_requests_encode_the_same():
    from homed.client import _serialize
    message = pb.ReadCharacteristicsRequest(characteristic_ids=[7, 8])
    assert _serialize({"characteristicIds": [7, 8]}, pb.ReadCharacteristicsRequest) == message.SerializeToString()
    with pytest.raises(TypeError):
        _serialize(pb.GetHomeRequest(), pb.ReadCharacteristicsRequest)


def test_default_socket_path(monkeypatch):
    from homed import default_socket_path
    monkeypatch.setenv("HOMED_SOCKET", "/x/y.sock")
    assert default_socket_path() == "/x/y.sock"
    monkeypatch.delenv("HOMED_SOCKET")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    assert default_socket_path() == "/run/user/1000/homed/homed.sock"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setattr("os.geteuid", lambda: 0)
    assert default_socket_path() == "/run/homed/homed.sock"
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    monkeypatch.setattr("os.getuid", lambda: 1000)
    assert default_socket_path() == "/tmp/homed-1000/homed.sock"


def test_a_call_begun_without_blocking_never_waits_for_a_daemon_that_does_not_read():
    d = FakeDaemon(deaf=True)
    c = Client.from_socket(d.client_sock, client_name="unit")
    try:
        big = pb.ReadCharacteristicsRequest(characteristic_ids=list(range(1, 20000)))  # about 60 KB a frame
        sent = 0
        for _ in range(1000):
            if c.begin("ReadCharacteristics", big, block=False) is None:
                break
            sent += 1
        else:
            pytest.fail("the socket's buffer never filled")
        # What fitted was sent (the last frame perhaps in part, finished by a thread
        # of its own); then None at once, nothing sent, and that call not left open.
        assert sent >= 1
        assert c.begin("GetStatus", block=False) is None
        assert len(c._core.calls) == sent
    finally:
        c.close()  # ends the calls, and a frame's rest still waiting to be written
        d.close()
