"""The layers with no I/O: resources kept current by events, the mapping of
devices and resources to accessories, write bodies and their confirmation,
server-sent events, the pairing file, and the fixture's generation."""

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from homed.device_values import hs_to_xy, xy_to_hs
from homed.refs import Ref
from homed_hue import keyfile
from homed_hue.bridge import split_address
from homed_hue.mapping import lux, map_bridge, press_of, reachable_of, service_groups
from homed_hue.resources import Resources, events_of, merge
from homed_hue.sse import SseParser
from homed_hue.writes import Confirmations, changes, light_body

from .hue_helpers import FIXTURE, resources

LAMP = "42b8327b-b7d7-2469-3c45-069a41b4dca8"


def device(did, name, *services, product=None):
    return {"id": did, "type": "device", "metadata": {"name": name},
            "product_data": product or {"manufacturer_name": "Signify Netherlands B.V.", "model_id": "LCT015",
                                        "software_version": "1.2.3"},
            "services": [{"rid": rid, "rtype": rtype} for rtype, rid in services]}


def light(rid, owner, **extra):
    base = {"id": rid, "type": "light", "owner": {"rid": owner, "rtype": "device"}, "on": {"on": True},
            "dimming": {"brightness": 50.0, "min_dim_level": 0.2},
            "color_temperature": {"mirek": 300, "mirek_valid": True,
                                  "mirek_schema": {"mirek_minimum": 153, "mirek_maximum": 500}},
            "color": {"xy": {"x": 0.3, "y": 0.3}}}
    base.update(extra)
    return base


def button(rid, owner, control_id=1, values=("initial_press", "repeat", "short_release", "long_release",
                                              "long_press")):
    return {"id": rid, "type": "button", "owner": {"rid": owner, "rtype": "device"},
            "metadata": {"control_id": control_id}, "button": {"event_values": list(values),
                                                              "last_event": "short_release"}}


def services(accessory):
    return {s["key"]: {c["type"]: c for c in s["characteristics"]} for s in accessory["services"]}


# -- the recorded bridge --------------------------------------------------------------


def test_the_recorded_bridge_maps_every_device_with_a_known_resource():
    store = Resources(resources())
    mapped = map_bridge(store)
    assert len(mapped.devices) == 22
    assert {name for name, _, _ in mapped.left_out} == {"Device 18", "Device 43"}
    why = dict((name, reason) for name, _, reason in mapped.left_out)
    assert "contact" in why["Device 43"] and "tamper" in why["Device 43"]
    lamp = mapped.devices[LAMP]
    assert lamp.accessory["category"] == "LIGHTBULB" and lamp.accessory["model"] == "LCX028"
    assert "room" not in lamp.accessory  # in no room on the bridge
    assert mapped.devices["f747dba7-6ec9-5683-7674-98095f330517"].accessory["room"] == "Room 9"
    by_type = {s["type"]: s for s in lamp.accessory["services"]}
    assert [c["type"] for c in by_type["Lightbulb"]["characteristics"]] == ["On", "Brightness", "ColorTemperature",
                                                                           "Hue", "Saturation"]
    accessory = next(a for a in mapped.accessories(store) if a["key"] == LAMP)
    lamp_light = next(x["rid"] for x in next(r for r in resources() if r["id"] == LAMP)["services"]
                      if x["rtype"] == "light")
    chars = services(accessory)[f"light:{lamp_light}"]
    assert chars["On"]["value"] is False and chars["Brightness"]["value"] == 81
    assert "value" not in chars["ColorTemperature"]  # mirek null: no value yet, nothing made up
    assert chars["ColorTemperature"]["metadata"] == {"min_value": 50.0, "max_value": 1000.0}
    assert chars["Hue"]["value"] == pytest.approx(xy_to_hs(0.5974, 0.36)[0], abs=0.1)
    assert accessory["unreachable"] is False
    troubled = next(a for a in mapped.accessories(store) if a["key"] == "51428b4a-5805-c25a-081e-f922bb76eb4f")
    assert troubled["unreachable"] is True  # zigbee_connectivity: connectivity_issue
    assert all(a["unreachable"] for a in mapped.accessories(store, bridge_up=False))


def test_every_accessory_name_is_valid():
    for accessory in map_bridge(Resources(resources())).accessories(Resources(resources())):
        for name in [accessory["name"]] + [s["name"] for s in accessory["services"]]:
            assert name and not name.isdigit() and "/" not in name and len(name.encode()) <= 64


# -- one device at a time -----------------------------------------------------------------


def test_an_unknown_resource_type_is_left_out_and_named_the_rest_kept():
    store = Resources([device("d1", "Hall", ("light", "l1"), ("fancy_new_thing", "f1")), light("l1", "d1"),
                       {"id": "f1", "type": "fancy_new_thing", "owner": {"rid": "d1", "rtype": "device"}}])
    mapped = map_bridge(store)
    assert mapped.devices["d1"].unknown == ["fancy_new_thing"]
    assert [s["type"] for s in mapped.devices["d1"].accessory["services"]] == ["Lightbulb"]
    assert mapped.left_out == []


def test_a_resource_it_cannot_read_is_left_out_whole():
    broken = light("l2", "d1")
    del broken["on"]
    broken["dimming"] = "bright"
    store = Resources([device("d1", "Hall", ("light", "l2"), ("temperature", "t1")), broken,
                       {"id": "t1", "type": "temperature", "temperature": {"temperature": 20.5}}])
    mapped = map_bridge(store)
    assert [s["type"] for s in mapped.devices["d1"].accessory["services"]] == ["TemperatureSensor"]
    assert mapped.devices["d1"].unknown[0].startswith("light (")
    assert set(mapped.by_ref) == {Ref("d1", "temperature:t1", "CurrentTemperature")}


def test_ignored_types_are_not_unknown_and_a_device_of_only_them_is_left_out():
    store = Resources([device("b", "Bridge", ("bridge", "x"), ("entertainment", "e")),
                       {"id": "x", "type": "bridge"}, {"id": "e", "type": "entertainment"}])
    mapped = map_bridge(store)
    assert mapped.devices == {}
    assert mapped.left_out == [("Bridge", "b", "no resource of it maps to a HAP service")]


def test_names_homed_takes():
    store = Resources([device("d1", "12", ("light", "l1")), light("l1", "d1"),
                       device("d2", "Kitchen/Table \x07lamp", ("light", "l2")), light("l2", "d2")])
    mapped = map_bridge(store)
    assert mapped.devices["d1"].name == "Device 12"
    assert mapped.devices["d2"].name == "Kitchen Table lamp"


def test_light_values():
    raw = light("l1", "d1", dimming={"brightness": 0.2})
    raw["color_temperature"]["mirek_valid"] = False
    store = Resources([device("d1", "Desk", ("light", "l1")), raw])
    mapped = map_bridge(store)
    values = mapped.values_of("l1", store)
    assert values[Ref("d1", "light:l1", "Brightness")] == 1  # at its lowest dim level, on: not 0 %
    assert Ref("d1", "light:l1", "ColorTemperature") not in values  # the light is in colour mode
    hue, saturation = xy_to_hs(0.3, 0.3)
    assert values[Ref("d1", "light:l1", "Hue")] == pytest.approx(hue, abs=0.1)
    assert values[Ref("d1", "light:l1", "Saturation")] == pytest.approx(saturation, abs=0.1)


def test_an_on_off_light_has_on_only():
    raw = {"id": "l1", "type": "light", "on": {"on": False}}
    mapped = map_bridge(Resources([device("d1", "Plug", ("light", "l1")), raw]))
    assert [c["type"] for c in mapped.devices["d1"].accessory["services"][0]["characteristics"]] == ["On"]


def test_two_lights_of_one_device_are_two_services_named_by_the_light():
    store = Resources([device("d1", "Duo", ("light", "a"), ("light", "b")),
                       light("a", "d1", metadata={"name": "Up"}), light("b", "d1", metadata={"name": "Down"})])
    names = [s["name"] for s in map_bridge(store).devices["d1"].accessory["services"]]
    assert names == ["Up", "Down"]


def test_sensors_and_battery():
    store = Resources([
        device("d1", "Hall sensor", ("motion", "m"), ("temperature", "t"), ("light_level", "ll"),
               ("device_power", "p"), ("zigbee_connectivity", "z")),
        {"id": "m", "type": "motion", "motion": {"motion": False, "motion_report": {"motion": True}}},
        {"id": "t", "type": "temperature", "temperature": {"temperature": 18.0}},
        {"id": "ll", "type": "light_level", "light": {"light_level_report": {"light_level": 10001}}},
        {"id": "p", "type": "device_power", "power_state": {"battery_level": 7, "battery_state": "critical"}},
        {"id": "z", "type": "zigbee_connectivity", "status": "connected"}])
    mapped = map_bridge(store)
    values = {r.characteristic: v for rid in ("m", "t", "ll", "p") for r, v in mapped.values_of(rid, store).items()}
    assert values == {"MotionDetected": True, "CurrentTemperature": 18.0, "CurrentAmbientLightLevel": 10.0,
                      "BatteryLevel": 7, "StatusLowBattery": 1}
    device_map = mapped.devices["d1"]
    assert device_map.accessory["category"] == "SENSOR"
    assert mapped.connectivity == {"z": "d1"} and reachable_of(device_map, store)
    store.apply("update", {"id": "z", "type": "zigbee_connectivity", "status": "disconnected"})
    assert not reachable_of(device_map, store)


def test_a_sensor_without_a_reading_has_no_value_yet():
    store = Resources([device("d1", "S", ("motion", "m"), ("temperature", "t")),
                       {"id": "m", "type": "motion", "motion": {"motion_valid": False}},
                       {"id": "t", "type": "temperature", "temperature": {"temperature": None}}])
    mapped = map_bridge(store)
    assert len(mapped.devices["d1"].accessory["services"]) == 2
    assert mapped.values_of("m", store) == {} and mapped.values_of("t", store) == {}


def test_lux():
    assert lux(0) == 0.0
    assert lux(1) == 1.0
    assert lux(10001) == 10.0
    assert lux(40001) == 10000.0


# -- buttons ---------------------------------------------------------------------------------


def test_a_button_is_a_stateless_switch_with_its_control_id():
    store = Resources([device("d1", "Dimmer", ("button", "b1"), ("button", "b2")), button("b1", "d1", 1),
                       button("b2", "d1", 2, values=("initial_press", "short_release", "double_short_release",
                                                     "long_press"))])
    mapped = map_bridge(store)
    first, second = mapped.devices["d1"].accessory["services"]
    assert first["type"] == "StatelessProgrammableSwitch" and first["name"] == "Dimmer Button 1"
    assert first["characteristics"] == [{"type": "ProgrammableSwitchEvent", "metadata": {"valid_values": [0, 2]}},
                                        {"type": "ServiceLabelIndex", "value": 1}]
    assert second["characteristics"][0]["metadata"] == {"valid_values": [0, 1, 2]}
    assert mapped.devices["d1"].accessory["category"] == "PROGRAMMABLE_SWITCH"
    assert mapped.values_of("b1", store) == {}  # the last press read at start is not a press now
    assert "value" not in first["characteristics"][0]


@pytest.mark.parametrize("event, press", [("initial_press", None), ("short_release", 0), ("long_press", 2),
                                          ("repeat", None), ("long_release", None), ("double_short_release", 1)])
def test_button_events_as_presses(event, press):
    assert press_of({"button": {"button_report": {"event": event, "updated": "2026-01-01T00:00:00Z"}}}) == press


def test_an_older_bridge_s_last_event_is_a_press_too():
    assert press_of({"button": {"last_event": "short_release"}}) == 0
    assert press_of({"on": {"on": True}}) is None


# -- resources and events ---------------------------------------------------------------------


def test_an_update_merges_into_the_resource():
    store = Resources([light("l1", "d1")])
    store.apply("update", {"id": "l1", "type": "light", "dimming": {"brightness": 12.5}})
    assert store.get("l1")["dimming"] == {"brightness": 12.5, "min_dim_level": 0.2}
    store.apply("add", {"id": "n", "type": "light", "on": {"on": False}})
    assert store.get("n")["on"] == {"on": False}
    store.apply("delete", {"id": "n", "type": "light"})
    assert store.get("n") is None
    target = {"a": {"b": 1, "c": [1]}}
    merge(target, {"a": {"c": [2]}, "d": 3})
    assert target == {"a": {"b": 1, "c": [2]}, "d": 3}


def test_events_of_takes_only_the_bridge_s_shape():
    payload = [{"type": "update", "data": [{"id": "x", "type": "light"}, "junk", {"no": "id"}]},
               {"type": "delete"}, "nonsense", {"type": "add", "data": [{"id": "y"}]}]
    assert events_of(payload) == [("update", {"id": "x", "type": "light"}), ("add", {"id": "y"})]
    assert events_of({"not": "a list"}) == []


def test_server_sent_events():
    parser = SseParser()
    lines = [": hi", "", "id: 1700000000:0", "data: [1,", "data: 2]", "", "data: x\r\n", "\r\n", ""]
    events = [e for e in (parser.feed(line) for line in lines) if e]
    assert events == [("1700000000:0", "[1,\n2]"), (None, "x")]
    assert parser.last_id == "1700000000:0"


# -- writes ----------------------------------------------------------------------------------------


def test_a_write_s_body():
    resource = light("l1", "d1")
    assert light_body({"On": True, "Brightness": 40}, resource) == {"on": {"on": True},
                                                                    "dimming": {"brightness": 40.0}}
    assert light_body({"Brightness": 0}, resource) == {"dimming": {"brightness": 0.2}}  # its min_dim_level
    assert light_body({"ColorTemperature": 250}, resource) == {"color_temperature": {"mirek": 250}}
    body = light_body({"Hue": 120}, resource)  # the light's own saturation kept
    _, saturation = xy_to_hs(0.3, 0.3)
    x, y = hs_to_xy(120, saturation)
    assert body == {"color": {"xy": {"x": round(x, 4), "y": round(y, 4)}}}


def test_what_does_not_change_is_not_waited_for():
    resource = light("l1", "d1")
    assert not changes("on", {"on": True}, resource)
    assert changes("on", {"on": False}, resource)
    assert not changes("dimming", {"brightness": 50.2}, resource)
    assert changes("dimming", {"brightness": 52.0}, resource)
    assert not changes("color_temperature", {"mirek": 300}, resource)
    assert changes("color", {"xy": {"x": 0.31, "y": 0.3}}, resource)


def test_a_write_is_done_once_events_carried_every_field():
    confirmations = Confirmations()
    pending = confirmations.add("l1", ["on", "dimming"])
    assert confirmations.observe("l2", {"id": "l2", "on": {"on": True}}) == []
    assert confirmations.observe("l1", {"id": "l1", "on": {"on": True}}) == []
    assert confirmations.observe("l1", {"id": "l1", "dimming": {"brightness": 3.0}}) == [pending]
    assert confirmations.count() == 0
    assert confirmations.add("l1", []).done and confirmations.count() == 0


# -- the pairing file and addresses -------------------------------------------------------------


def test_the_pairing_file_is_0600_and_read_back(tmp_path):
    path = str(tmp_path / "deep" / "bridge.json")
    keyfile.save(path, keyfile.Pairing("10.0.0.2", "key", "ck", "ab" * 32))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    assert keyfile.load(path) == keyfile.Pairing("10.0.0.2", "key", "ck", "ab" * 32)
    assert keyfile.load(str(tmp_path / "none.json")) is None
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError):
        keyfile.load(str(tmp_path / "bad.json"))


def test_addresses():
    assert split_address("10.0.0.2") == ("10.0.0.2", 443)
    assert split_address("127.0.0.1:8443") == ("127.0.0.1", 8443)
    assert split_address("[fe80::1]:443") == ("fe80::1", 443)
    with pytest.raises(ValueError):
        split_address("host:port")


# -- the fixture -----------------------------------------------------------------------------------


def test_the_fixture_is_what_the_generator_keeps():
    """Selecting again from the committed fixture changes nothing (the
    generator's --check against aiohue's repository is the full check)."""
    sys.path.insert(0, str(Path(FIXTURE).parent))
    try:
        import generate
    finally:
        sys.path.pop(0)
    document = json.loads(Path(FIXTURE).read_text(encoding="utf-8"))
    assert generate.render(document["data"]) == Path(FIXTURE).read_text(encoding="utf-8")
    assert document["source"].startswith("home-assistant-libs/aiohue 4.9.0")


def test_rooms_and_zones_as_service_groups():
    store = Resources(resources())
    mapped = map_bridge(store)
    groups = service_groups(store, mapped)
    room9 = {"abb87463-e3a8-7edd-d7b3-07092678dce6", "7e7fa7bc-8c1a-576b-6fef-b1ff0ea7e77b",
             "f747dba7-6ec9-5683-7674-98095f330517", "739ebab0-97a7-0ee3-91a0-29be479d34f4"}
    assert {key for key, _ in groups["Room 9"]} == room9
    assert all(service.startswith("light:") for _, service in groups["Room 9"])
    assert len(groups["Zone 8"]) == 2
    assert "Room 6" not in groups  # a dimmer switch only: no light


def test_a_zone_of_lights_and_two_groups_of_one_name():
    store = Resources([device("d1", "A", ("light", "a")), light("a", "d1"), device("d2", "B", ("light", "b")),
                       light("b", "d2"),
                       {"id": "z", "type": "zone", "metadata": {"name": "Upstairs"},
                        "children": [{"rid": "b", "rtype": "light"}]},
                       {"id": "r", "type": "room", "metadata": {"name": "Upstairs"},
                        "children": [{"rid": "d1", "rtype": "device"}, {"rid": "d2", "rtype": "device"}]}])
    assert service_groups(store, map_bridge(store)) == {"Upstairs": [("d1", "light:a"), ("d2", "light:b")]}


def test_read_event_keeps_the_bridge_s_shape_and_names_the_rest():
    from homed_hue.resources import read_event
    pairs, problems = read_event([{"type": "update", "data": [{"id": "x", "type": "light"}, 5, {"type": "light"}]},
                                  "nonsense", {"type": "weird", "data": []}, {"type": "error", "data": []},
                                  {"type": "add", "data": [{"id": "y"}]}, {"type": "delete"}])
    assert pairs == [("update", {"id": "x", "type": "light"})]
    assert problems == ["item 1 of event 0 (update) left out: it is a number, not an object",
                        "item 2 of event 0 (update) left out: it has no resource id",
                        "event 1 left out: it is a string, not an object",
                        "event 2 left out: its type 'weird' is not one of update, add, delete",
                        "the added resource y left out: it has no type",
                        "event 5 (delete) left out: it has no data list"]
    assert read_event({"data": []}) == ([], ["not a list of events but an object"])


def test_wrong_types_compares_with_the_resource_and_lets_null_and_new_fields_through():
    from homed_hue.resources import wrong_types
    light = {"id": "l", "type": "light", "on": {"on": True}, "dimming": {"brightness": 50.0},
             "color_temperature": {"mirek": 300, "mirek_valid": True}}
    assert wrong_types(light, {"id": "l", "on": {"on": False}, "dimming": {"brightness": 7}}) == []
    assert wrong_types(light, {"color_temperature": {"mirek": None, "mirek_valid": False}, "new": [1]}) == []
    assert wrong_types(light, {"on": {"on": "yes"}, "dimming": 3, "type": "button"}) == [
        "on.on is a string ('yes'), not a boolean", "dimming is a number (3), not an object",
        "type 'button', but the resource is a light"]
    assert wrong_types(light, {"dimming": {"brightness": True}}) == ["dimming.brightness is a boolean (True), not a number"]
