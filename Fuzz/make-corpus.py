#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus, Fuzz/corpus/, and its dictionary, Fuzz/homed.dict.

Every input's first byte is its mode (Fuzz/Sources/homed-fuzz/FuzzEntry.swift):
0 raw bytes after a valid hello, 1 the same in chunks (the next byte is the chunk
size less one), 2 method calls (Fuzz/Sources/homed-fuzz/MethodCalls.swift: a
method byte, a 2-byte little-endian length, the request), 3 raw bytes with no
hello but the input's own. The seeds are the golden frames of
Tests/Fixtures/frames/ and a few valid requests per method against the demo home
(ids in Sources/HomeModel/Demo/DemoHome.swift: the home is 1, rooms 2-6, the
Lamp 7 with On 16).

    Fuzz/make-corpus.py            rewrite the corpus and the dictionary
    Fuzz/make-corpus.py --check    fail if either differs
    Fuzz/make-corpus.py --out DIR  write the corpus elsewhere

Needs the `protobuf` Python package (Scripts/bootstrap.sh --python).
"""

import argparse
import glob
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Clients", "python"))

from homed import pb  # noqa: E402
from homed.framing import encode_frame  # noqa: E402

DEFAULT_OUT = os.path.join(ROOT, "Fuzz", "corpus")
DICTIONARY = os.path.join(ROOT, "Fuzz", "homed.dict")
GOLDEN = os.path.join(ROOT, "Tests", "Fixtures", "frames")

RAW, RAW_CHUNKED, CALLS, RAW_WITHOUT_HELLO = 0, 1, 2, 3
# The schema's order, which is the fuzzer's method numbering.
METHODS = [method.name for method in pb.SERVICE_DESCRIPTOR.methods]
LAMP, LAMP_ON, LAMP_BRIGHTNESS = 7, 16, 17
# The first id a new object takes; a provider's registered lamp is 77 with On 86.
CREATED, PROVIDED_ON = 77, 86


def serialize(message):
    return message.SerializeToString(deterministic=True)


def open_frame(call_id, method, request):
    frame = pb.Frame(call_id=call_id)
    frame.open.method = "home.v1.HomeService/" + method
    frame.open.request = serialize(request)
    return encode_frame(serialize(frame))


def calls(*records):
    """A mode-2 input: (method name, request message) records."""
    out = bytearray([CALLS])
    for method, request in records:
        body = serialize(request)
        out += bytes([METHODS.index(method)]) + struct.pack("<H", len(body)) + body
    return bytes(out)


def layout(**op):
    return pb.LayoutRequest(**op)


def write(characteristic_id, **value):
    return pb.CharacteristicWrite(characteristic_id=characteristic_id, value=pb.Value(**value))


def provider_lamp():
    request = pb.RegisterAccessoriesRequest()
    accessory = request.accessories.add(key="lamp-1", name="Desk Lamp", category=pb.CATEGORY_LIGHTBULB)
    service = accessory.services.add(type="Lightbulb")
    service.characteristics.add(type="On").value.bool_value = True
    brightness = service.characteristics.add(type="Brightness")
    brightness.metadata.format = pb.FORMAT_INT
    brightness.metadata.max_value = 50
    return request


def method_seeds():
    """{name: mode-2 input}: each method alone, and a few short sessions."""
    filter_lamp = pb.SubscriptionFilter(accessory_ids=[LAMP])
    return {
        "get-home": calls(("GetHome", pb.GetHomeRequest(home_id=1))),
        "get-home-paged": calls(("GetHome", pb.GetHomeRequest(page_size=2)), ("GetHome", pb.GetHomeRequest(page_size=2, page_token="1"))),
        "list-accessories": calls(("ListAccessories", pb.ListAccessoriesRequest(home_id=1))),
        "read": calls(("ReadCharacteristics", pb.ReadCharacteristicsRequest(characteristic_ids=[LAMP_ON, LAMP_BRIGHTNESS, 99]))),
        "read-fresh": calls(("ReadCharacteristics", pb.ReadCharacteristicsRequest(characteristic_ids=[LAMP_ON], fresh=True))),
        "write": calls(("WriteCharacteristics", pb.WriteCharacteristicsRequest(writes=[write(LAMP_ON, bool_value=False), write(LAMP_BRIGHTNESS, int_value=40)]))),
        "write-atomic-invalid": calls(("WriteCharacteristics", pb.WriteCharacteristicsRequest(writes=[write(LAMP_BRIGHTNESS, int_value=400)], atomic=True))),
        "write-validate": calls(("WriteCharacteristics", pb.WriteCharacteristicsRequest(writes=[write(LAMP_ON, string_value="x")], validate_only=True))),
        "subscribe-write": calls(
            ("Subscribe", pb.SubscribeRequest(filter=filter_lamp, snapshot=True, min_interval_ms=100, heartbeat_ms=1000)),
            ("WriteCharacteristics", pb.WriteCharacteristicsRequest(writes=[write(LAMP_BRIGHTNESS, int_value=10)])),
            ("WriteCharacteristics", pb.WriteCharacteristicsRequest(writes=[write(LAMP_BRIGHTNESS, int_value=20)])),
        ),
        "subscribe-resume": calls(("Subscribe", pb.SubscribeRequest(since_seq=0, journal_id="golden-journal", policy=pb.SLOW_GAP, queue_limit=1))),
        "subscribe-modify": calls(
            ("Subscribe", pb.SubscribeRequest(filter=pb.SubscriptionFilter(home_ids=[1]))),
            ("ModifySubscription", pb.ModifySubscriptionRequest(call_id=1, add=filter_lamp, remove=pb.SubscriptionFilter(home_ids=[1]))),
            ("GetStats", pb.GetStatsRequest()),
        ),
        "get-status": calls(("GetStatus", pb.GetStatusRequest())),
        "layout-add-room": calls(("ChangeLayout", layout(add_room=pb.AddRoom(home_id=1, name="Attic")))),
        "layout-rename": calls(("ChangeLayout", layout(rename=pb.RenameObject(id=LAMP, name="Big Lamp")))),
        "layout-remove": calls(("ChangeLayout", layout(remove=pb.RemoveObject(id=3)))),
        "layout-zone": calls(
            ("ChangeLayout", layout(add_zone=pb.AddZone(home_id=1, name="Upstairs"))),
            ("ChangeLayout", layout(add_room_to_zone=pb.ZoneRoom(zone_id=CREATED, room_id=3))),
        ),
        "layout-assign": calls(("ChangeLayout", layout(assign_accessory=pb.AssignAccessory(accessory_id=LAMP, room_id=4)))),
        "layout-group": calls(
            ("ChangeLayout", layout(add_service_group=pb.AddServiceGroup(home_id=1, name="Lights"))),
            ("ChangeLayout", layout(add_service_to_group=pb.GroupService(group_id=CREATED, service_id=15))),
        ),
        "layout-scene": calls(
            ("ChangeLayout", layout(add_action_set=pb.AddActionSet(home_id=1, name="Evening"))),
            ("ChangeLayout", layout(add_action=pb.AddAction(action_set_id=CREATED, action=pb.CharacteristicWriteAction(characteristic_id=LAMP_ON, value=pb.Value(bool_value=True))))),
            ("ExecuteActionSet", pb.ExecuteActionSetRequest(action_set_id=CREATED)),
        ),
        "layout-trigger": calls(
            ("ChangeLayout", layout(add_trigger=pb.AddTrigger(home_id=1, name="Nightly", disabled=True))),
            ("ChangeLayout", layout(set_trigger_enabled=pb.SetTriggerEnabled(trigger_id=CREATED, enabled=True))),
        ),
        "layout-home": calls(
            ("ChangeLayout", layout(add_home=pb.AddHome(name="Cabin"))),
            ("ChangeLayout", layout(set_primary_home=pb.SetPrimaryHome(home_id=CREATED))),
        ),
        "list-types": calls(("ListTypes", pb.ListTypesRequest())),
        "execute-missing": calls(("ExecuteActionSet", pb.ExecuteActionSetRequest(action_set_id=999))),
        "provider-session": calls(
            ("OpenProvider", pb.OpenProviderRequest(provider_id="fuzz")),
            ("RegisterAccessories", provider_lamp()),
            ("ReportValues", pb.ValueReport(values=[write(PROVIDED_ON, bool_value=False)], reachability=[pb.ReachabilityChange(accessory_id=CREATED, reachable=False)])),
            ("WriteCharacteristics", pb.WriteCharacteristicsRequest(writes=[write(PROVIDED_ON, bool_value=True)])),
            ("AnswerCommand", pb.CommandAnswer(request_id=1, writes=[pb.WriteResult(characteristic_id=PROVIDED_ON)])),
            ("ListProviders", pb.ListProvidersRequest()),
        ),
        "provider-simulator": calls(
            ("OpenProvider", pb.OpenProviderRequest(provider_id="simulator")),
            ("ReportValues", pb.ValueReport(values=[write(LAMP_ON, bool_value=False)])),
        ),
        "answer-unknown": calls(("AnswerCommand", pb.CommandAnswer(request_id=5, code=pb.NOT_FOUND, message="gone"))),
        "register-alone": calls(("RegisterAccessories", provider_lamp())),
        "list-providers": calls(("ListProviders", pb.ListProvidersRequest())),
        "read-history": calls(
            ("WriteCharacteristics", pb.WriteCharacteristicsRequest(writes=[write(LAMP_BRIGHTNESS, int_value=40)])),
            ("ReadHistory", pb.ReadHistoryRequest(limit=10, newest_first=True)),
            ("ReadHistory", pb.ReadHistoryRequest(filter=pb.SubscriptionFilter(characteristic_ids=[LAMP_BRIGHTNESS]), after_seq=1)),
            ("Subscribe", pb.SubscribeRequest(since_time_ms=1)),
            ("ReadHistory", pb.ReadHistoryRequest(filter=pb.SubscriptionFilter(characteristic_ids=[LAMP_BRIGHTNESS]), rollup_ms=300000)),
        ),
    }


def raw_seeds():
    """{name: input}: the golden frames, and a pipelined batch of frames."""
    seeds = {}
    for path in sorted(glob.glob(os.path.join(GOLDEN, "*.bin"))):
        name = os.path.splitext(os.path.basename(path))[0]
        with open(path, "rb") as f:
            frame = f.read()
        seeds["golden-" + name] = bytes([RAW_WITHOUT_HELLO if name == "hello" else RAW]) + frame
    with open(os.path.join(GOLDEN, "hello.bin"), "rb") as f:
        hello = f.read()
    with open(os.path.join(GOLDEN, "open_read_characteristics.bin"), "rb") as f:
        read = f.read()
    seeds["chunked-read"] = bytes([RAW_CHUNKED, 2]) + read
    ping = pb.Frame(call_id=0)
    ping.ping.nonce = 7
    cancel = pb.Frame(call_id=2)
    cancel.cancel.SetInParent()
    seeds["pipelined"] = (
        bytes([RAW])
        + read
        + open_frame(2, "Subscribe", pb.SubscribeRequest(snapshot=True))
        + encode_frame(serialize(ping))
        + encode_frame(serialize(cancel))
    )
    small = pb.Frame(call_id=0)
    small.hello.protocol_version = 1
    small.hello.client_name = "small"
    small.hello.max_frame_size = 1024
    seeds["hello-small-frames"] = bytes([RAW_WITHOUT_HELLO]) + encode_frame(serialize(small)) + open_frame(1, "ListTypes", pb.ListTypesRequest())
    seeds["hello-then-get-home"] = bytes([RAW_WITHOUT_HELLO]) + hello + open_frame(1, "GetHome", pb.GetHomeRequest())
    return seeds


def render():
    """{file name: bytes}."""
    seeds = {**raw_seeds(), **method_seeds()}
    return {name: data for name, data in sorted(seeds.items())}


def dictionary():
    """libFuzzer's dictionary: the strings raw inputs need to reach a method."""
    lines = ["# Written by Fuzz/make-corpus.py: the method names, which raw inputs must spell."]
    lines += [f'method_{name}="home.v1.HomeService/{name}"' for name in METHODS]
    lines.append('provider_simulator="simulator"')
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="fail if the corpus differs")
    parser.add_argument("--out", default=DEFAULT_OUT)
    args = parser.parse_args()
    files = render()
    if args.check:
        present = set(os.listdir(args.out)) if os.path.isdir(args.out) else set()
        stale = sorted(name for name, data in files.items() if name not in present or open(os.path.join(args.out, name), "rb").read() != data)
        extra = sorted(present - set(files))
        if stale or extra:
            print(f"{args.out}: out of date (run Fuzz/make-corpus.py): differs {stale}, not written by it {extra}", file=sys.stderr)
            return 1
        if not os.path.exists(DICTIONARY) or open(DICTIONARY).read() != dictionary():
            print(f"{DICTIONARY}: out of date (run Fuzz/make-corpus.py)", file=sys.stderr)
            return 1
        print(f"{args.out}: {len(files)} seeds, current")
        return 0
    os.makedirs(args.out, exist_ok=True)
    for name in set(os.listdir(args.out)) - set(files):
        os.remove(os.path.join(args.out, name))
    for name, data in files.items():
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)
    with open(DICTIONARY, "w") as f:
        f.write(dictionary())
    print(f"wrote {len(files)} seeds to {args.out} and the dictionary {DICTIONARY}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
