"""Integration tests against a real `homed --demo` (see conftest.daemon).

Skipped when there is no binary at $HOMED_BIN (default <repo>/.build/debug/homed);
failing, not skipped, when HOMED_BIN names a file that is not there.
"""

import socket
import threading
import time

import pytest

from homed import Client, HomedError, pb
from homed.framing import DEFAULT_MAX_FRAME_SIZE, HEADER, FrameDecoder, encode_frame


# -- helpers ------------------------------------------------------------------

CALL_TIMEOUT = 10.0  # no test waits forever on a daemon that does not answer

@pytest.fixture
def client(daemon):
    c = Client.connect(daemon.socket_path, client_name="pytest", call_timeout=CALL_TIMEOUT)
    yield c
    c.close()


def find_lamp(client):
    """(accessory, {type_name: Characteristic} of its Lightbulb service)."""
    response = client.call("GetHome", pb.GetHomeRequest())
    for home in response.homes:
        for accessory in home.accessories:
            if accessory.name == "Lamp":
                for service in accessory.services:
                    if service.type_name == "Lightbulb":
                        return accessory, {c.type_name: c for c in service.characteristics}
    pytest.fail("the demo home has no accessory named Lamp with a Lightbulb service")


def number_value(characteristic, number):
    """A Value of the characteristic's own format."""
    fmt = characteristic.metadata.format
    if fmt == pb.FORMAT_FLOAT:
        return pb.Value(float_value=float(number))
    if fmt in (pb.FORMAT_UINT8, pb.FORMAT_UINT16, pb.FORMAT_UINT32, pb.FORMAT_UINT64):
        return pb.Value(uint_value=int(number))
    return pb.Value(int_value=int(number))


def number_of(value):
    kind = value.WhichOneof("kind")
    assert kind in ("int_value", "uint_value", "float_value"), f"not a number: {value}"
    return getattr(value, kind)


def read_one(client, cid):
    response = client.read([cid])
    assert len(response.reads) == 1
    read = response.reads[0]
    assert read.characteristic_id == cid
    assert read.code == pb.OK, read.message
    return read.value


def raw_connection(daemon, hello=True):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(daemon.socket_path)
    if hello:
        frame = pb.Frame(call_id=0)
        frame.hello.protocol_version = 1
        frame.hello.client_name = "pytest-raw"
        s.sendall(encode_frame(frame.SerializeToString()))
        reply = read_until_eof_or_frames(s, 1)[0][0]
        assert reply.WhichOneof("kind") == "hello_reply"
    return s


def read_until_eof_or_frames(s, want=None, timeout=5.0):
    """Read frames until `want` frames arrived or the peer closed; returns
    (frames, closed)."""
    decoder, frames = FrameDecoder(), []
    deadline = time.monotonic() + timeout
    while want is None or len(frames) < want:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            data = s.recv(65536)
        except socket.timeout:
            pytest.fail(f"the daemon neither answered nor closed within {timeout} s (got {frames})")
        except ConnectionResetError:
            return frames, True
        if not data:
            return frames, True
        frames += [pb.Frame.FromString(b) for b in decoder.feed(data)]
    return frames, False


# -- tests --------------------------------------------------------------------

def test_hello_reply(client):
    reply = client.hello_reply
    assert reply.protocol_version == 1
    assert reply.journal_id
    assert reply.connection_id > 0
    assert reply.max_frame_size in (0, DEFAULT_MAX_FRAME_SIZE)  # we asked for the default


def test_hello_with_unsupported_version_is_refused(daemon):
    with pytest.raises(HomedError) as err:
        Client.connect(daemon.socket_path, client_name="pytest-v99", protocol_version=99)
    assert err.value.code == pb.FAILED_PRECONDITION
    assert "99" in err.value.message


def test_get_status(client):
    status = client.get_status()
    assert status.protocol_version == 1
    assert status.connection_id == client.connection_id
    assert status.journal_id == client.hello_reply.journal_id
    assert status.accessories > 0


def test_get_home_has_rooms_and_the_lamp(client):
    response = client.call("home.v1.HomeService/GetHome", pb.GetHomeRequest())
    assert response.homes, "the demo has no home"
    assert any(len(home.rooms) > 0 for home in response.homes)
    accessory, chars = find_lamp(client)
    for name in ("On", "Brightness", "Hue", "Saturation"):
        assert name in chars, f"Lamp's Lightbulb has no {name}: {sorted(chars)}"
        assert chars[name].id > 0
        assert chars[name].accessory_id == accessory.id
    assert chars["On"].metadata.format == pb.FORMAT_BOOL
    assert chars["On"].properties.supports_event_notification


def test_get_home_in_pages_equals_one_response(client):
    whole = client.call("GetHome", pb.GetHomeRequest())
    assert client.get_home(page_size=1) == whole
    assert client.get_home() == whole


def test_a_stale_page_token_is_failed_precondition(client):
    with pytest.raises(HomedError) as raised:
        client.call("GetHome", pb.GetHomeRequest(page_size=1, page_token="9.1"))
    assert raised.value.code == pb.FAILED_PRECONDITION
    assert "'9.1'" in raised.value.message


def test_read_write_brightness_round_trips(client):
    _, chars = find_lamp(client)
    brightness = chars["Brightness"]
    before = number_of(read_one(client, brightness.id))
    target = 37 if before != 37 else 63
    response = client.write({brightness.id: number_value(brightness, target)})
    assert len(response.results) == 1
    result = response.results[0]
    assert result.characteristic_id == brightness.id
    assert result.code == pb.OK, result.message
    assert result.seq > 0 and response.seq >= result.seq
    assert number_of(read_one(client, brightness.id)) == target


def test_out_of_range_write_is_invalid_argument(client):
    _, chars = find_lamp(client)
    brightness = chars["Brightness"]
    before = number_of(read_one(client, brightness.id))
    try:
        response = client.write({brightness.id: number_value(brightness, 150)})
    except HomedError as e:  # the call failed as a whole
        code, message = e.code, e.message
    else:  # or the item did
        assert len(response.results) == 1
        code, message = response.results[0].code, response.results[0].message
    assert code == pb.INVALID_ARGUMENT, message
    assert "150" in message
    assert number_of(read_one(client, brightness.id)) == before


def test_subscribe_sees_a_write_from_another_connection(daemon, client):
    _, chars = find_lamp(client)
    on = chars["On"]
    request = pb.SubscribeRequest()
    request.filter.characteristic_ids.append(on.id)
    with client.subscribe(request) as subscription:
        first = subscription.get(timeout=5)
        assert first is not None and first.marker.kind == pb.MARKER_SUBSCRIBED, first

        with Client.connect(daemon.socket_path, client_name="pytest-writer", call_timeout=CALL_TIMEOUT) as writer:
            current = read_one(writer, on.id).bool_value
            response = writer.write({on.id: pb.Value(bool_value=not current)})
            assert response.results[0].code == pb.OK, response.results[0].message
            write_seq = response.results[0].seq

            deadline = time.monotonic() + 5
            found = None
            while found is None:
                message = subscription.get(timeout=max(0.01, deadline - time.monotonic()))
                assert message is not None, "the stream ended"
                for event in message.events:
                    assert event.value.characteristic_id == on.id, f"filter leaked: {event}"
                    if event.value.value.bool_value == (not current):
                        found = event
        assert found.kind == pb.EVENT_VALUE_CHANGED
        assert found.origin.kind == pb.ORIGIN_CLIENT
        assert found.origin.name == "pytest-writer"
        assert found.origin.connection_id == writer.connection_id
        if write_seq:
            assert found.seq == write_seq
        subscription.cancel()
        # The stream ends (CANCELLED, treated as a normal end after cancel()).
        deadline = time.monotonic() + 5
        while subscription.get(timeout=max(0.01, deadline - time.monotonic())) is not None:
            pass


def test_unknown_method_is_unimplemented(client):
    with pytest.raises(HomedError) as err:
        client.call("home.v1.HomeService/NoSuchMethod", b"")
    assert err.value.code == pb.UNIMPLEMENTED
    assert "NoSuchMethod" in err.value.message
    assert client.get_status().connection_id == client.connection_id  # still usable


def test_ping(client):
    assert client.ping(timeout=5) < 5


def test_concurrent_calls_are_multiplexed(client):
    _, chars = find_lamp(client)
    ids = [c.id for c in chars.values()]
    errors, results = [], []

    def worker():
        try:
            for _ in range(10):
                results.append(client.read(ids))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    assert len(results) == 80
    assert all([r.characteristic_id for r in resp.reads] == ids for resp in results)


@pytest.mark.parametrize("after_hello", [False, True], ids=["instead-of-hello", "after-hello"])
def test_garbage_closes_only_that_connection(daemon, client, after_hello):
    bystander = client
    s = raw_connection(daemon, hello=after_hello)
    try:
        s.sendall(HEADER.pack(16) + b"\xff" * 16)  # 16 bytes that are no Frame
        frames, closed = read_until_eof_or_frames(s)
        assert closed
        for frame in frames:  # at most a status on call 0 before the close
            assert frame.call_id == 0 and frame.WhichOneof("kind") == "status"
            assert frame.status.code != pb.OK
    finally:
        s.close()
    assert bystander.get_status().connection_id == bystander.connection_id
    with Client.connect(daemon.socket_path, client_name="pytest-after-garbage", call_timeout=CALL_TIMEOUT) as fresh:
        assert fresh.get_status().connection_id == fresh.connection_id


def test_oversized_length_is_resource_exhausted(daemon, client):
    s = raw_connection(daemon)
    try:
        s.sendall(HEADER.pack(DEFAULT_MAX_FRAME_SIZE + 1))
        frames, closed = read_until_eof_or_frames(s)
        assert closed
        assert frames and frames[-1].call_id == 0
        assert frames[-1].status.code == pb.RESOURCE_EXHAUSTED
    finally:
        s.close()
    assert client.get_status().connection_id == client.connection_id


def test_a_call_begun_is_answered_later_and_one_that_would_wait_is_not_sent(client):
    pending = client.begin("GetStatus")
    status = pending.result()
    assert status.connection_id == client.connection_id and pending.done()
    # The daemon's refusal is the result's.
    pending = client.begin("ChangeLayout", pb.LayoutRequest(rename=pb.RenameObject(id=987654, name="x")))
    with pytest.raises(HomedError) as refused:
        pending.result()
    assert refused.value.code == pb.NOT_FOUND
    # block=False while another thread writes: None, nothing sent, nothing left open.
    with client._send_lock:
        assert client.begin("GetStatus", block=False) is None
    assert client._core.calls == {} or all(c.method != "home.v1.HomeService/GetStatus"
                                           for c in client._core.calls.values())
    assert client.begin("GetStatus", block=False).result().protocol_version == 1
