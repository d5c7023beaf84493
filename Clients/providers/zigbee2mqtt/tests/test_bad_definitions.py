"""Definitions the mapping cannot wholly read: an expose of a type it does not
know, a binary whose value_on is neither a bool nor a string. What it cannot
read is left out, named in one log line with its device, and the rest of the
device is registered; first with no I/O, then with the provider as a process
between a real mosquitto and a real homed."""

import copy

from homed_z2m.mapping import map_device

from . import devices
from .z2m_helpers import ids_of, start_provider, value_of, wait_accessories, wait_log, wait_value


def door_with_odd_exposes(n=60):
    """HEIMAN's HS1DS door sensor as Zigbee2MQTT defines it, with a hologram
    expose added and its tamper's value_on made a number."""
    door = devices.from_corpus(n, "Odd door", "HS1DS")
    exposes = door["definition"]["exposes"]
    next(e for e in exposes if e.get("name") == "tamper")["value_on"] = 3
    exposes.append({"type": "hologram", "name": "beam", "property": "beam", "access": 1})
    return door


def test_what_cannot_be_read_is_left_out_and_named_the_rest_mapped():
    dm = map_device(door_with_odd_exposes())
    assert dm.unknown == ["tamper (value_on 3 is neither a bool nor a string)", "beam (type 'hologram')"]
    assert [(s["type"], [c["type"] for c in s["characteristics"]]) for s in dm.accessory["services"]] == [
        ("ContactSensor", ["ContactSensorState", "StatusLowBattery"]),
        ("BatteryService", ["BatteryLevel", "ChargingState", "StatusLowBattery"])]
    # A contact whose values cannot be read leaves the device its battery.
    door = devices.from_corpus(61, "Odd contact", "HS1DS")
    contact = next(e for e in door["definition"]["exposes"] if e.get("name") == "contact")
    for bad in ({"value_on": None}, {"value_on": {"open": True}}, {"value_on": True, "value_off": True}):
        broken = copy.deepcopy(door)
        next(e for e in broken["definition"]["exposes"] if e.get("name") == "contact").update(bad)
        dm = map_device(broken)
        assert [s["type"] for s in dm.accessory["services"]] == ["BatteryService"], bad
        assert len(dm.unknown) == 1 and dm.unknown[0].startswith("contact ("), dm.unknown
    assert contact["value_on"] is False  # the corpus' own stays as Zigbee2MQTT gives it


def test_one_log_line_names_the_device_and_what_was_left_out(homed, coordinator, processes):
    odd = door_with_odd_exposes()
    coordinator.publish_devices(devices.bridge_devices(devices.DEVICES + [odd]))
    provider = start_provider(homed, f"mqtt://127.0.0.1:{coordinator.port}", processes)
    with homed.client() as client:
        found = wait_accessories(client, {d["ieee_address"] for d in devices.DEVICES} | {odd["ieee_address"]},
                                 provider)
        log = wait_log(provider, "left out what this provider cannot read")
        lines = [line for line in log.splitlines() if "left out" in line]
        assert lines and all(line.endswith(
            "zigbee2mqtt/bridge/devices: device 'Odd door' (0x00124b000000003c): left out what this provider cannot "
            "read: tamper (value_on 3 is neither a bool nor a string); beam (type 'hologram'); registering the rest")
            for line in lines), lines
        ids = ids_of(found[odd["ieee_address"]])
        assert ("contact", "StatusTampered") not in ids
        coordinator.change("Odd door", {"contact": False, "battery": 80})
        wait_value(client, ids[("battery", "BatteryLevel")], 80, process=provider)
        assert value_of(client, ids[("contact", "ContactSensorState")]) == 1  # false: open
        coordinator.change("Odd door", {"contact": True})
        wait_value(client, ids[("contact", "ContactSensorState")], 0, process=provider)  # true: closed
