"""Decode the golden frames in Tests/Fixtures/frames and check every value the
README there promises; and check Scripts/make-golden-frames.py reproduces them."""

import subprocess
import sys

import pytest

from conftest import REPO
from homed import pb
from homed.framing import FrameDecoder

FRAMES = REPO / "Tests" / "Fixtures" / "frames"


def load(name):
    data = (FRAMES / name).read_bytes()
    decoder = FrameDecoder()
    bodies = decoder.feed(data)
    assert len(bodies) == 1 and decoder.pending == 0, f"{name} is not exactly one frame"
    assert int.from_bytes(data[:4], "big") == len(data) - 4
    frame = pb.Frame.FromString(bodies[0])
    assert frame.SerializeToString() == bodies[0], "re-encoding differs: not canonical"
    return frame


def test_hello():
    frame = load("hello.bin")
    assert frame.call_id == 0
    assert frame.WhichOneof("kind") == "hello"
    assert frame.hello.protocol_version == 1
    assert frame.hello.client_name == "homectl"
    assert list(frame.hello.capabilities) == []
    assert frame.hello.max_frame_size == 0


def test_open_read_characteristics():
    frame = load("open_read_characteristics.bin")
    assert frame.call_id == 1
    assert frame.WhichOneof("kind") == "open"
    assert frame.open.method == "home.v1.HomeService/ReadCharacteristics"
    assert frame.open.WhichOneof("timeout_present") is None
    request = pb.ReadCharacteristicsRequest.FromString(frame.open.request)
    assert list(request.characteristic_ids) == [7, 8]
    assert request.fresh is False
    assert frame.open.request == bytes.fromhex("0a020708")  # packed


def test_status_not_found():
    frame = load("status_not_found.bin")
    assert frame.call_id == 1
    assert frame.WhichOneof("kind") == "status"
    assert frame.status.code == pb.NOT_FOUND == 5
    assert frame.status.message == "no characteristic with id 99"


def test_message_subscribe_value_event():
    frame = load("message_subscribe_value_event.bin")
    assert frame.call_id == 2
    assert frame.WhichOneof("kind") == "message"
    response = pb.SubscribeResponse.FromString(frame.message.payload)
    assert response.journal_id == "golden-journal"
    assert len(response.snapshot) == 0
    assert not response.HasField("marker")
    assert len(response.events) == 1
    event = response.events[0]
    assert event.seq == 42
    assert event.kind == pb.EVENT_VALUE_CHANGED
    assert event.time_ms == 1700000000000
    assert event.origin.kind == pb.ORIGIN_CLIENT
    assert event.origin.connection_id == 3
    assert event.origin.name == "homectl"
    assert event.WhichOneof("body") == "value"
    change = event.value
    assert (change.accessory_id, change.service_id, change.characteristic_id) == (2, 10, 12)
    assert change.value.WhichOneof("kind") == "float_value"
    assert change.value.float_value == 21.5
    assert change.merged == 0


def test_open_subscribe_since_zero():
    frame = load("open_subscribe_since_zero.bin")
    assert frame.call_id == 3
    assert frame.open.method == "home.v1.HomeService/Subscribe"
    assert frame.open.WhichOneof("timeout_present") is None
    request = pb.SubscribeRequest.FromString(frame.open.request)
    assert request.WhichOneof("since_present") == "since_seq"  # present, though 0
    assert request.since_seq == 0
    assert request.journal_id == "golden-journal"
    assert frame.open.request == bytes.fromhex("1800220e") + b"golden-journal"


def test_readme_describes_every_file():
    readme = (FRAMES / "README.md").read_text()
    names = sorted(p.name for p in FRAMES.glob("*.bin"))
    assert names == sorted(["hello.bin", "open_read_characteristics.bin", "status_not_found.bin",
                            "message_subscribe_value_event.bin", "open_subscribe_since_zero.bin"])
    for name in names:
        assert f"`{name}`" in readme


def test_script_reproduces_the_files():
    script = REPO / "Scripts" / "make-golden-frames.py"
    if not script.exists():
        pytest.skip("no Scripts/make-golden-frames.py in this tree")
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
