"""The connection's core with no socket: the hello, what each received frame
does to the open calls, the frames it answers with, and why a connection
ended, fed by hand-made bytes."""

import os
import queue
import sys

import pytest


from homed import HomedError, pb
from homed.client_core import Call, Connection, StreamEnd, unary_item
from homed.framing import FrameDecoder, FrameTooLarge, encode_frame


def wire(**fields) -> bytes:
    return encode_frame(pb.Frame(**fields).SerializeToString())


def frames(data: bytes):
    return [pb.Frame.FromString(body) for body in FrameDecoder().feed(data)]


def new_call(call_id, method):
    return Call(call_id, method, queue.Queue())


def drained(call):
    items = []
    while not call.items.empty():
        items.append(call.items.get_nowait())
    return items


@pytest.fixture
def connection():
    c = Connection("unit", "/run/test.sock")
    assert c.receive_hello(wire(call_id=0, hello_reply=pb.HelloReply(connection_id=4, max_frame_size=70000))) == []
    return c


def test_the_hello_names_the_client_and_its_reply_sets_the_frame_size():
    c = Connection("unit")
    hello = frames(c.hello(1, ["batch-events"], 100))[0].hello
    assert (hello.client_name, list(hello.capabilities), hello.max_frame_size) == ("unit", ["batch-events"], 100)
    reply = wire(call_id=0, hello_reply=pb.HelloReply(connection_id=9, max_frame_size=70000))
    after = wire(call_id=0, ping=pb.Ping(nonce=3))
    data = reply + after
    assert c.receive_hello(data[:5]) is None  # not whole yet
    rest = c.receive_hello(data[5:])
    assert c.hello_reply.connection_id == 9 and c.max_frame_size == 70000 and c.decoder.max_frame_size == 70000
    assert len(rest) == 1 and frames(c.receive_bodies(rest)[0])[0].pong.nonce == 3


def test_a_refused_hello_raises_the_status_and_a_stranger_is_not_homed():
    c = Connection("unit", "/run/x.sock")
    with pytest.raises(HomedError) as refused:
        c.receive_hello(wire(call_id=0, status=pb.CallStatus(code=pb.FAILED_PRECONDITION, message="version")))
    assert refused.value.code == pb.FAILED_PRECONDITION
    with pytest.raises(HomedError) as stranger:
        Connection("unit", "/run/x.sock").receive_hello(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    assert stranger.value.code == pb.UNAVAILABLE and "/run/x.sock is not homed's socket" in stranger.value.message
    with pytest.raises(HomedError) as closed:
        Connection("unit").receive_hello(b"")
    assert closed.value.code == pb.UNAVAILABLE and "during the hello" in closed.value.message


def test_frames_reach_their_call_in_order_and_a_status_ends_it(connection):
    call, data = connection.open(new_call, "ReadCharacteristics", b"\x01", timeout=2.5)
    opened = frames(data)[0]
    assert opened.call_id == call.call_id == 1
    assert opened.open.method == "home.v1.HomeService/ReadCharacteristics" and opened.open.timeout_ms == 2500
    connection.receive(wire(call_id=1, message=pb.CallMessage(payload=b"a")) +
                       wire(call_id=1, status=pb.CallStatus(code=pb.OK)) +
                       wire(call_id=1, message=pb.CallMessage(payload=b"late")))  # after the end: dropped
    assert drained(call) == [("message", b"a"), ("status", pb.OK, "")]
    assert connection.calls == {} and connection.cancel(call) is None


def test_pings_are_answered_and_pongs_wake_their_waiter(connection):
    replies = connection.receive(wire(call_id=0, ping=pb.Ping(nonce=77)))
    assert frames(replies[0])[0].pong.nonce == 77
    woken = []
    nonce, data = connection.ping(woken.append)
    assert frames(data)[0].ping.nonce == nonce
    assert connection.receive(wire(call_id=0, pong=pb.Pong(nonce=nonce))) == [] and woken == [None]


def test_a_status_on_call_0_is_the_reason_only_when_the_connection_closes_right_after(connection):
    call, _ = connection.open(new_call, "GetHome", b"", None)
    connection.receive(wire(call_id=0, status=pb.CallStatus(code=pb.ALREADY_EXISTS, message="call 1 is open")))
    connection.receive(wire(call_id=0, ping=pb.Ping(nonce=1)))  # the connection carried on
    assert connection.lost(None).code == pb.UNAVAILABLE
    other = Connection("unit")
    other.receive_hello(wire(call_id=0, hello_reply=pb.HelloReply()))
    other.receive(wire(call_id=0, status=pb.CallStatus(code=pb.RESOURCE_EXHAUSTED, message="frame too large")))
    assert other.lost(None).message == "frame too large"


def test_why_a_connection_ended_and_every_open_call_and_ping_told_so(connection):
    call, _ = connection.open(new_call, "Subscribe", b"", None)
    woken = []
    connection.ping(woken.append)
    connection.receive(encode_frame(b"\x00" * 10)[:6])  # a frame begun, never finished
    error = connection.lost(None)
    assert error.code == pb.UNAVAILABLE and "inside a frame" in error.message
    connection.fail_all()
    (kind, failed), = drained(call)
    assert kind == "error" and failed.code == pb.UNAVAILABLE and failed is not error
    assert woken[0].code == pb.UNAVAILABLE
    with pytest.raises(HomedError) as refused:
        connection.open(new_call, "GetHome", b"", None)
    assert refused.value.code == pb.UNAVAILABLE
    assert Connection("x").lost(FrameTooLarge("frame of 9 bytes")).code == pb.RESOURCE_EXHAUSTED


def test_after_a_go_away_and_above_the_frame_size_nothing_is_opened(connection):
    with pytest.raises(HomedError) as too_large:
        connection.open(new_call, "GetHome", b"x" * 70000, None)
    assert too_large.value.code == pb.RESOURCE_EXHAUSTED and connection.calls == {}
    connection.receive(wire(call_id=0, go_away=pb.GoAway(reason="restart", last_call_id=0)))
    with pytest.raises(HomedError) as going:
        connection.open(new_call, "GetHome", b"", None)
    assert going.value.code == pb.UNAVAILABLE and "restart" in going.value.message


def test_a_closed_connection_says_the_client_closed_it(connection):
    assert connection.close() and not connection.close()
    assert connection.lost(None).message == "the client closed the connection"


def test_items_read_as_a_unary_answer_or_a_stream():
    payloads = []
    assert not unary_item(("message", b"a"), payloads)
    assert unary_item(("status", pb.OK, ""), payloads) and payloads == [b"a"]
    with pytest.raises(HomedError) as failed:
        unary_item(("status", pb.NOT_FOUND, "no"), [])
    assert failed.value.code == pb.NOT_FOUND

    stream = StreamEnd(pb.ProviderCommand)
    assert stream.message(("message", pb.ProviderCommand(request_id=5).SerializeToString())).request_id == 5
    with pytest.raises(HomedError):
        StreamEnd().message(("status", pb.CANCELLED, "cancelled"))  # not asked for: an error
    assert stream.cancel() and not stream.cancel()
    assert stream.message(("status", pb.CANCELLED, "cancelled")) is None and stream.done
    assert not stream.cancel()
