"""Writes tests/devices.json, the fake device's definition, from aioesphomeapi's
own test data.

    python tests/generate_devices.py [--source GIT_DIR] [--check]

The sensor, binary sensor, switch, light and climate entities are the ones of
aioesphomeapi's `tests/benchmarks/test_list_entities.py` (its `_*_info()`
functions, read with `ast`, not imported): what aioesphomeapi's authors take as
a typical device's entities. aioesphomeapi's tests define no cover, lock,
button, event, humidity sensor or door sensor of their own (only empty
messages), so those are built here from `aioesphomeapi.api_pb2`'s messages,
with fields the descriptor checks. A text sensor is there for the provider to
leave out. `--source` is a git directory of aioesphomeapi (default: $HOMED_AIOESPHOMEAPI,
else the mirror this project fetches); `--check` fails when devices.json differs."""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys

from aioesphomeapi import api_pb2
from google.protobuf import json_format

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "devices.json")
BENCHMARK = "tests/benchmarks/test_list_entities.py"
DEFAULT_SOURCE = "/work/.mirror/esphome+aioesphomeapi/repo"


def benchmark_entities(source: str):
    """[(message name, fields)] of the benchmark's `_*_info()` functions."""
    text = subprocess.run(["git", "--git-dir", source, "show", f"HEAD:{BENCHMARK}"], check=True,
                          capture_output=True, text=True).stdout
    commit = subprocess.run(["git", "--git-dir", source, "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    out = []
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name.endswith("_info"):
            call = next(n.value for n in ast.walk(node) if isinstance(n, ast.Return))
            fields = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
            out.append((call.func.id, fields))
    return out, commit


def message(type_name: str, /, **fields) -> dict:
    """Fields checked against api_pb2 (a misspelt field fails here)."""
    msg = getattr(api_pb2, type_name)(**fields)
    return {"type": type_name, "fields": json_format.MessageToDict(msg, preserving_proto_field_name=True)}


# The states the fake device starts with, by object id (an entity with none
# has no state: a button, an event).
STATES = {
    "living_room_temperature": ("SensorStateResponse", {"state": 21.5}),
    "motion_sensor": ("BinarySensorStateResponse", {"state": False}),
    "relay_1": ("SwitchStateResponse", {"state": False}),
    "rgbww_light": ("LightStateResponse", {"state": True, "brightness": 0.5, "color_mode": 11,
                                           "color_temperature": 300.0, "red": 1.0, "green": 1.0, "blue": 1.0,
                                           "color_brightness": 1.0}),
    "hvac": ("ClimateStateResponse", {"mode": 3, "action": 3, "current_temperature": 19.5,
                                      "target_temperature": 21.0}),
    "bathroom_humidity": ("SensorStateResponse", {"state": 48.0}),
    "front_door": ("BinarySensorStateResponse", {"state": False}),
    "living_room_blind": ("CoverStateResponse", {"position": 1.0, "tilt": 0.5, "current_operation": 0}),
    "front_door_lock": ("LockStateResponse", {"state": 1}),
    "uptime_text": ("TextSensorStateResponse", {"state": "3 days"}),
}

EXTRA = [
    ("ListEntitiesSensorResponse", dict(object_id="bathroom_humidity", key=22000001, name="Bathroom Humidity",
                                        unit_of_measurement="%", accuracy_decimals=1, device_class="humidity",
                                        state_class=1)),
    ("ListEntitiesBinarySensorResponse", dict(object_id="front_door", key=22000002, name="Front Door",
                                              device_class="door")),
    ("ListEntitiesCoverResponse", dict(object_id="living_room_blind", key=22000003, name="Living Room Blind",
                                       supports_position=True, supports_tilt=True, supports_stop=True,
                                       device_class="blind")),
    ("ListEntitiesLockResponse", dict(object_id="front_door_lock", key=22000004, name="Front Door Lock",
                                      supports_open=False)),
    ("ListEntitiesButtonResponse", dict(object_id="restart", key=22000005, name="Restart", device_class="restart")),
    ("ListEntitiesEventResponse", dict(object_id="doorbell", key=22000006, name="Doorbell", device_class="doorbell",
                                       event_types=["single_press", "double_press", "long_press"])),
    ("ListEntitiesTextSensorResponse", dict(object_id="uptime_text", key=22000007, name="Uptime Text")),
]

DEVICE_INFO = dict(name="test-device", friendly_name="Test Device", mac_address="AA:BB:CC:DD:EE:FF",
                   model="esp32dev", manufacturer="Espressif", esphome_version="2025.6.0",
                   compilation_time="Jun  1 2025, 12:00:00", suggested_area="Living Room")


def build(source: str) -> dict:
    listed, commit = benchmark_entities(source)
    entities = []
    for name, fields in listed + EXTRA:
        entity = message(name, **fields)
        state = STATES.get(fields["object_id"])
        if state is not None:
            entity["state"] = message(state[0], key=fields["key"], **state[1])
        entities.append(entity)
    return {"source": f"aioesphomeapi {commit} {BENCHMARK}, and EXTRA in generate_devices.py",
            "device_info": message("DeviceInfoResponse", **DEVICE_INFO)["fields"], "entities": entities}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", default=os.environ.get("HOMED_AIOESPHOMEAPI", DEFAULT_SOURCE))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = json.dumps(build(args.source), indent=1, ensure_ascii=False) + "\n"
    if args.check:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{OUT} differs from a fresh generation", file=sys.stderr)
                return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
