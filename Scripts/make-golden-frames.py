#!/usr/bin/env python3
"""Writes the golden wire frames in Tests/Fixtures/frames/*.bin.

Each file is one complete frame as it travels on the socket: a 4-byte
big-endian length, then a serialized home.v1.Frame. The field values are listed
in Tests/Fixtures/frames/README.md; Clients/python/tests/test_golden.py decodes
the files and checks them. The bytes are deterministic (proto3, fields in
number order, packed repeated scalars, no maps): rerunning this script must
leave the files unchanged.

    Scripts/make-golden-frames.py            rewrite the fixtures
    Scripts/make-golden-frames.py --check    fail if a fixture differs
    Scripts/make-golden-frames.py --out DIR  write elsewhere

Needs the `protobuf` Python package; the schema comes from the descriptor set
Clients/python/homed/home_v1.desc (Scripts/generate-proto.sh).
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Clients", "python"))

from homed import pb  # noqa: E402
from homed.framing import encode_frame  # noqa: E402

DEFAULT_OUT = os.path.join(ROOT, "Tests", "Fixtures", "frames")


def hello():
    frame = pb.Frame(call_id=0)
    frame.hello.protocol_version = 1
    frame.hello.client_name = "homectl"
    frame.hello.max_frame_size = 0
    return frame


def open_read_characteristics():
    request = pb.ReadCharacteristicsRequest(characteristic_ids=[7, 8])
    frame = pb.Frame(call_id=1)
    frame.open.method = "home.v1.HomeService/ReadCharacteristics"
    frame.open.request = request.SerializeToString()
    return frame


def status_not_found():
    frame = pb.Frame(call_id=1)
    frame.status.code = pb.NOT_FOUND
    frame.status.message = "no characteristic with id 99"
    return frame


def message_subscribe_value_event():
    response = pb.SubscribeResponse(journal_id="golden-journal")
    event = response.events.add()
    event.seq = 42
    event.kind = pb.EVENT_VALUE_CHANGED
    event.time_ms = 1700000000000
    event.origin.kind = pb.ORIGIN_CLIENT
    event.origin.connection_id = 3
    event.origin.name = "homectl"
    event.value.accessory_id = 2
    event.value.service_id = 10
    event.value.characteristic_id = 12
    event.value.value.float_value = 21.5
    frame = pb.Frame(call_id=2)
    frame.message.payload = response.SerializeToString(deterministic=True)
    return frame


def open_subscribe_since_zero():
    # since_seq present with the value 0 ("resume from the very start of this
    # journal"), which is not the same as absent ("no resume"): proto3 writes a
    # field in a oneof even when it holds its default.
    request = pb.SubscribeRequest(since_seq=0, journal_id="golden-journal")
    frame = pb.Frame(call_id=3)
    frame.open.method = "home.v1.HomeService/Subscribe"
    frame.open.request = request.SerializeToString(deterministic=True)
    return frame


def open_register_accessories():
    # A provider registers one lamp. Brightness narrows the catalog's range (0-100)
    # to 0-50 and gives its format (INT) explicitly: UNSPECIFIED would also mean
    # "the catalog's", but a decoder that fills it in would not re-encode these bytes.
    request = pb.RegisterAccessoriesRequest()
    accessory = request.accessories.add(key="lamp-1", name="Desk Lamp", category=pb.CATEGORY_LIGHTBULB)
    service = accessory.services.add(type="Lightbulb")
    on = service.characteristics.add(type="On")
    on.value.bool_value = True
    brightness = service.characteristics.add(type="Brightness")
    brightness.metadata.format = pb.FORMAT_INT
    brightness.metadata.min_value = 0  # present (in the oneof min_present), though 0
    brightness.metadata.max_value = 50
    frame = pb.Frame(call_id=8)
    frame.open.method = "home.v1.HomeService/RegisterAccessories"
    frame.open.request = request.SerializeToString(deterministic=True)
    return frame


def message_provider_write_command():
    # A command on a provider's OpenProvider stream (call 7): write On (86) = false.
    command = pb.ProviderCommand(request_id=12, timeout_ms=5000)
    write = command.write.writes.add(characteristic_id=86)
    write.value.bool_value = False  # present (in the oneof kind), though false
    command.write.atomic = False
    frame = pb.Frame(call_id=7)
    frame.message.payload = command.SerializeToString(deterministic=True)
    return frame


def open_answer_command():
    # The provider's answer to that command: the write of 86 succeeded.
    answer = pb.CommandAnswer(request_id=12)
    answer.writes.add(characteristic_id=86)
    frame = pb.Frame(call_id=9)
    frame.open.method = "home.v1.HomeService/AnswerCommand"
    frame.open.request = answer.SerializeToString(deterministic=True)
    return frame


FRAMES = {
    "hello.bin": hello,
    "open_read_characteristics.bin": open_read_characteristics,
    "status_not_found.bin": status_not_found,
    "message_subscribe_value_event.bin": message_subscribe_value_event,
    "open_subscribe_since_zero.bin": open_subscribe_since_zero,
    "open_register_accessories.bin": open_register_accessories,
    "message_provider_write_command.bin": message_provider_write_command,
    "open_answer_command.bin": open_answer_command,
}


def render():
    """{file name: the complete length-prefixed frame}."""
    return {name: encode_frame(make().SerializeToString(deterministic=True)) for name, make in FRAMES.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=DEFAULT_OUT, help="directory to write (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    args = parser.parse_args()
    status = 0
    for name, data in render().items():
        path = os.path.join(args.out, name)
        if args.check:
            try:
                with open(path, "rb") as f:
                    same = f.read() == data
            except FileNotFoundError:
                same = False
            if not same:
                print(f"golden frame is stale: {path} (run Scripts/make-golden-frames.py)", file=sys.stderr)
                status = 1
            continue
        os.makedirs(args.out, exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        print(f"{path}: {len(data)} bytes  {data.hex(' ')}")
    return status


if __name__ == "__main__":
    sys.exit(main())
