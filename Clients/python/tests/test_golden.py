"""Decode the golden frames in Tests/Fixtures/frames and check every value the
README there promises; and check Scripts/make-golden-frames.py reproduces them."""

import subprocess
import sys

import pytest

from .conftest import REPO
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


def test_open_register_accessories():
    frame = load("open_register_accessories.bin")
    assert frame.call_id == 8
    assert frame.WhichOneof("kind") == "open"
    assert frame.open.method == "home.v1.HomeService/RegisterAccessories"
    assert frame.open.WhichOneof("timeout_present") is None
    request = pb.RegisterAccessoriesRequest.FromString(frame.open.request)
    assert request.home_id == 0
    assert list(request.remove_keys) == []
    assert len(request.accessories) == 1
    accessory = request.accessories[0]
    assert (accessory.key, accessory.name) == ("lamp-1", "Desk Lamp")
    assert accessory.category == pb.CATEGORY_LIGHTBULB == 5
    assert (accessory.manufacturer, accessory.model, accessory.serial_number, accessory.firmware_revision) == (
        "", "", "", "")
    assert (accessory.bridge_key, accessory.room, accessory.unreachable) == ("", "", False)
    assert len(accessory.services) == 1
    service = accessory.services[0]
    assert (service.type, service.key, service.name, service.primary, service.hidden) == (
        "Lightbulb", "", "", False, False)
    assert [c.type for c in service.characteristics] == ["On", "Brightness"]
    on, brightness = service.characteristics
    assert on.type_name == "" and not on.optimistic
    assert not on.HasField("properties") and not on.HasField("metadata")
    assert on.value.WhichOneof("kind") == "bool_value" and on.value.bool_value is True
    assert brightness.type_name == "" and not brightness.optimistic
    assert not brightness.HasField("properties") and not brightness.HasField("value")
    metadata = brightness.metadata
    assert metadata.format == pb.FORMAT_INT == 6
    assert metadata.unit == pb.UNIT_NONE
    assert metadata.WhichOneof("min_present") == "min_value" and metadata.min_value == 0  # present, though 0
    assert metadata.WhichOneof("max_present") == "max_value" and metadata.max_value == 50
    assert metadata.WhichOneof("step_present") is None
    assert list(metadata.valid_values) == [] and metadata.valid_bits == 0 and metadata.max_length == 0
    assert len(frame.open.request) == 82


def test_message_provider_write_command():
    frame = load("message_provider_write_command.bin")
    assert frame.call_id == 7
    assert frame.WhichOneof("kind") == "message"
    command = pb.ProviderCommand.FromString(frame.message.payload)
    assert command.request_id == 12
    assert command.timeout_ms == 5000
    assert command.WhichOneof("command") == "write"
    assert command.write.atomic is False
    assert len(command.write.writes) == 1
    write = command.write.writes[0]
    assert write.characteristic_id == 86
    assert write.value.WhichOneof("kind") == "bool_value"  # present, though false
    assert write.value.bool_value is False
    assert frame.message.payload == bytes.fromhex("080c1088272a080a06085612020800")


def test_open_answer_command():
    frame = load("open_answer_command.bin")
    assert frame.call_id == 9
    assert frame.WhichOneof("kind") == "open"
    assert frame.open.method == "home.v1.HomeService/AnswerCommand"
    assert frame.open.WhichOneof("timeout_present") is None
    answer = pb.CommandAnswer.FromString(frame.open.request)
    assert answer.request_id == 12
    assert len(answer.reads) == 0
    assert len(answer.writes) == 1
    result = answer.writes[0]
    assert (result.characteristic_id, result.code, result.message, result.seq) == (86, pb.OK, "", 0)
    assert (answer.code, answer.message) == (pb.OK, "")
    assert frame.open.request == bytes.fromhex("080c1a020856")


def test_readme_describes_every_file():
    readme = (FRAMES / "README.md").read_text()
    names = sorted(p.name for p in FRAMES.glob("*.bin"))
    assert names == sorted(["hello.bin", "open_read_characteristics.bin", "status_not_found.bin",
                            "message_subscribe_value_event.bin", "open_subscribe_since_zero.bin",
                            "open_register_accessories.bin", "message_provider_write_command.bin",
                            "open_answer_command.bin"])
    for name in names:
        assert f"`{name}`" in readme


def test_script_reproduces_the_files():
    script = REPO / "Scripts" / "make-golden-frames.py"
    if not script.exists():
        pytest.skip("no Scripts/make-golden-frames.py in this tree")
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
