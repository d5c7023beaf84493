"""Tasmota's and Shelly's own announcements mapped, with no I/O, on the
payloads recorded from real devices (tests/recorded)."""

import json

import pytest

from homed.refs import Ref
from homed_mqtt_devices.accessory import assemble
from homed_mqtt_devices.bindings import Message
from homed_mqtt_devices.components import Refused
from homed_mqtt_devices.shelly import ShellyAvailability, map_shelly
from homed_mqtt_devices.shelly_rpc import Rpc, RpcCall, Sent
from homed_mqtt_devices.tasmota import discovery_topic, map_device

from . import recorded

ROOT = "homed-mqtt-devices/test/shelly"
MAC = "00000049A3BC"


def tasmota_map(scenario):
    s = recorded.tasmota(scenario)
    device = map_device(s["config"]["mac"], s["config"], s.get("sensors"))
    return device, assemble(device.mac, device.entities)


def shelly_map(name, config=True):
    d = recorded.shelly(name)
    prefix = (d["config"].get("mqtt") or {}).get("topic_prefix") or d["shelly"]["id"]
    device = map_shelly(prefix, ROOT, d["shelly"], d["config"] if config else None, d["status"])
    return prefix, device, assemble(device.key, device.entities) if device.entities else None


def decode(dm, topic, payload):
    values, clamped, acks, errors = dm.decode(topic, Message(topic, payload.encode()), {})
    return {(r.service, r.characteristic): v for r, v in values.items()}, errors


def test_discovery_topics():
    assert discovery_topic("tasmota/discovery", f"tasmota/discovery/{MAC}/config") == (MAC, "config")
    assert discovery_topic("tasmota/discovery", f"tasmota/discovery/{MAC}/sensors") == (MAC, "sensors")
    assert discovery_topic("tasmota/discovery", "tasmota/discovery/00:00/config") == ("", "")
    assert discovery_topic("tasmota/discovery", "tele/x/STATE") is None


def test_every_recorded_tasmota_scenario_maps():
    for name in ("relay", "relay_commands", "relay_as_light", "light_ct", "light_rgbww", "light_rgbww_commands",
                 "dimmer_unlinked_commands", "sensor_ds18b20", "sensor_analog", "battery"):
        device, dm = tasmota_map(name)
        assert dm is not None, name
        assert (dm.accessory["key"], dm.accessory["name"], dm.accessory["manufacturer"]) == (MAC, "Tasmota", "Tasmota")
        assert device.lwt.topic == "tasmota_49A3BC/tele/LWT" and device.lwt.available == "Online"


def test_a_tasmota_light_reads_result_and_state_as_its_integration_does():
    device, dm = tasmota_map("light_rgbww")
    light = f"{MAC}_light_light_0"
    assert [c["type"] for c in dm.accessory["services"][0]["characteristics"]] == [
        "On", "Brightness", "Hue", "Saturation", "ColorTemperature"]
    ct = dm.accessory["services"][0]["characteristics"][4]
    assert ct["metadata"] == {"min_value": 153, "max_value": 500}
    for topic, payload in recorded.messages(recorded.tasmota("light_rgbww")):
        if "HSBColor" in payload:
            values, _ = decode(dm, topic, payload)
            assert values == {(light, "On"): True, (light, "Brightness"): 50, (light, "Hue"): 30.0,
                              (light, "Saturation"): 100.0}
    values, errors = decode(dm, "tasmota_49A3BC/stat/RESULT", '{"POWER":"MAYBE"}')
    assert values == {} and errors == [(light, "POWER 'MAYBE' is neither 'ON' nor 'OFF'")]
    assert device.polls == [("tasmota_49A3BC/cmnd/STATE", "")]


def test_tasmota_writes_are_the_backlogs_its_integration_sends():
    for name in ("light_rgbww_commands", "dimmer_unlinked_commands", "relay_commands"):
        device, dm = tasmota_map(name)
        service = dm.accessory["services"][0]["key"]
        for asked, (topic, payload) in recorded.commands(recorded.tasmota(name)):
            args = asked[1]
            if "effect" in args:
                continue
            writes = {"On": asked[0] == "async_turn_on"}
            if "brightness" in args:
                writes["Brightness"] = round(args["brightness"] * 100 / 255)
            if "hs_color" in args:
                writes["Saturation"], writes["Hue"] = args["hs_color"][1], args["hs_color"][0]
            if "color_temp_kelvin" in args:
                writes["ColorTemperature"] = round(1e6 / args["color_temp_kelvin"])
            commands = dm.commands({Ref(MAC, service, k): v for k, v in writes.items()}, {})
            assert [(t, p if isinstance(p, str) else p.text()) for (t, p), _ in commands] == [(topic, payload)], asked


def test_tasmota_sensors_and_what_is_left_out():
    device, dm = tasmota_map("sensor_ds18b20")
    assert device.left_out == ["DS18B20 Id (no HAP sensor)"]
    assert device.polls == [("tasmota_49A3BC/cmnd/STATUS", "10")]
    temperature = f"{MAC}_sensor_sensor_DS18B20_Temperature"
    for topic, payload in recorded.messages(recorded.tasmota("sensor_ds18b20")):
        if not topic.endswith("LWT"):
            values, _ = decode(dm, topic, payload)
            assert values == {(temperature, "CurrentTemperature"): 12.3 if "SENSOR" in topic else 23.4}
    device, dm = tasmota_map("sensor_analog")
    assert [s["name"] for s in dm.accessory["services"]] == [
        "ANALOG Illuminance3", "ANALOG Temperature1", "ANALOG Temperature2"]


def test_tasmota_configs_that_cannot_be_read_are_refused_naming_why():
    config = recorded.tasmota("relay")["config"]
    with pytest.raises(Refused, match=r"discovery version 2 is not one this provider reads \(it reads 1\)"):
        map_device(MAC, {**config, "ver": 2})
    with pytest.raises(Refused, match=r"its mac '00000049A3BC' is not the '0000004A5B6C' of its topic"):
        map_device("0000004A5B6C", config)
    with pytest.raises(Refused, match=r"^ft is missing, not a text$"):
        map_device(MAC, {k: v for k, v in config.items() if k != "ft"})
    with pytest.raises(Refused, match=r"the config is a JSON list"):
        map_device(MAC, [config])
    with pytest.raises(Refused, match=r"sensors discovery version 7"):
        map_device(MAC, config, {"sn": {"DHT11": {"Temperature": None}}, "ver": 7})
    with pytest.raises(Refused, match=r"lt_st 9 is no light type"):
        map_device(MAC, {**config, "rl": [2], "lt_st": 9})


def test_an_older_firmwares_config_is_read_without_the_keys_it_lacks():
    config = recorded.tasmota_config("firmware_9_0_0_3")
    device = map_device(MAC, config)
    assert device.entities == [] and device.left_out == []  # it announces no relay


def test_every_recorded_shelly_maps_with_what_it_leaves_out():
    expected = {
        "plus_1pm": (["Lightbulb"], ["input:0 (a switch input, not a button)"]),
        "pro_4pm": (["Switch"] * 4, [f"input:{n} (a switch input, not a button)" for n in range(4)]),
        "wall_display": (["Switch", "HumiditySensor", "LightSensor", "TemperatureSensor"],
                         ["input:0 (a switch input, not a button)",
                          "thermostat:0 (not a component this provider maps)"]),
        "wall_display_xl": (["Switch", "HumiditySensor", "LightSensor"] + ["StatelessProgrammableSwitch"] * 3
                            + ["TemperatureSensor"],
                            ["input:1 (a switch input, not a button)", "input:2 (a switch input, not a button)",
                             "media (not a component this provider maps)", "devicepower:0 (no battery)"]),
        "duo_bulb_gen3": (["Lightbulb"], []),
        "mini_1_gen4": (["Switch"], ["input:0 (a switch input, not a button)"]),
        "2pm_gen3_cover": (["WindowCovering"], ["input:0 (a switch input, not a button)",
                                                "input:1 (a switch input, not a button)",
                                                "number:200 (not a component this provider maps)"]),
        "blu_gateway_gen3": ([], ["blutrv:200 (not a component this provider maps)"]),
    }
    for name, (types, left_out) in expected.items():
        prefix, device, dm = shelly_map(name)
        assert ([s["type"] for s in dm.accessory["services"]] if dm else []) == types, name
        assert device.left_out == left_out, name
        assert device.key == "shelly:" + recorded.shelly(name)["shelly"]["id"]


def test_a_shelly_component_is_read_from_every_place_its_status_comes():
    prefix, device, dm = shelly_map("pro_4pm")
    relay = "shellypro4pm-aabbccddeeff-switch:1"
    notification = json.dumps({"src": "shellypro4pm-aabbccddeeff", "dst": f"{prefix}/events", "method": "NotifyStatus",
                               "params": {"ts": 1.0, "switch:1": {"id": 1, "output": True}}})
    assert decode(dm, f"{prefix}/events/rpc", notification)[0] == {(relay, "On"): True}
    whole = json.dumps({"id": 3, "src": "x", "dst": "y", "result": recorded.shelly("pro_4pm")["status"]})
    assert decode(dm, f"{ROOT}/{prefix}/rpc", whole)[0][(relay, "On")] is False
    own = json.dumps({"id": 4, "src": "x", "dst": "y", "result": {"id": 1, "output": True}})
    assert decode(dm, f"{ROOT}/{prefix}/switch:1/rpc", own)[0] == {(relay, "On"): True}
    assert decode(dm, f"{prefix}/status/switch:1", json.dumps({"id": 1, "output": False}))[0] == {(relay, "On"): False}
    # A Switch.Set's own answer says nothing of the state.
    assert decode(dm, f"{ROOT}/{prefix}/switch:1/rpc", json.dumps({"id": 5, "result": {"was_on": False}}))[0] == {}


def test_a_cover_moving_as_recorded_has_taken_its_target():
    prefix, device, dm = shelly_map("2pm_gen3_cover")
    cover = "shelly2pmg3-aabbccddeeff-cover:0"
    moving = json.dumps({"id": 9, "result": recorded.shelly("2pm_gen3_cover")["statuses"]["cover:0"]})
    values, _ = decode(dm, f"{ROOT}/{prefix}/cover:0/rpc", moving)
    assert values == {(cover, "PositionState"): 0, (cover, "CurrentPosition"): 51}  # closing; its target unknown
    _, _, acks, _ = dm.decode(f"{ROOT}/{prefix}/cover:0/rpc", Message("t", moving.encode()), {})
    assert acks == {Ref(device.key, cover, "TargetPosition")}


def test_a_shelly_sensor_reporting_errors_gives_no_reading():
    prefix, device, dm = shelly_map("wall_display_xl")
    whole = json.dumps({"id": 1, "result": recorded.shelly("wall_display_xl")["status"]})
    values, errors = decode(dm, f"{ROOT}/{prefix}/rpc", whole)
    key = "ShellyWallDisplay-AABBCCDDEEFF"
    assert (f"{key}-temperature:0", "CurrentTemperature") not in values
    assert (f"{key}-temperature:0", "reports errors ['Sensor driver missing from firmware']") in errors
    assert values[(f"{key}-illuminance:0", "CurrentAmbientLightLevel")] == 120


def test_a_shelly_without_its_config_leaves_its_inputs_out():
    prefix, device, dm = shelly_map("wall_display_xl", config=False)
    assert "StatelessProgrammableSwitch" not in [s["type"] for s in dm.accessory["services"]]
    assert "input:0 (its type is unknown without the device's config)" in device.left_out


def test_a_button_press_is_an_event_of_its_input_only():
    prefix, device, dm = shelly_map("wall_display_xl")
    binding = next(b for b in dm.bindings.values() if b.ref.characteristic == "ProgrammableSwitchEvent")
    assert binding.event
    frame = {"src": "d", "method": "NotifyEvent", "params": {"ts": 1.0, "events": [
        {"component": "input:3", "id": 3, "event": "long_push", "ts": 1.0}]}}
    values, _ = decode(dm, f"{prefix}/events/rpc", json.dumps(frame))
    assert values == {("ShellyWallDisplay-AABBCCDDEEFF-input:3", "ProgrammableSwitchEvent"): 2}


def test_rpc_answers_are_matched_to_their_requests():
    rpc = Rpc(ROOT)
    topic, text = rpc.request(f"{ROOT}/p/cover:0", Sent("p", "Cover.Close", "command", key="k", refs=["r"]),
                              {"id": 0})
    assert topic == "p/rpc"
    assert json.loads(text) == {"id": 1, "src": f"{ROOT}/p/cover:0", "method": "Cover.Close", "params": {"id": 0}}
    error = recorded.shelly_frame("error")
    answer = rpc.answer(f"{ROOT}/p/cover:0/rpc", json.dumps({**error, "id": 1}).encode())
    assert answer.error[0] == 401 and answer.error[1].startswith('{"auth_type": "digest"')
    assert answer.sent.refs == ["r"]
    assert rpc.answer(f"{ROOT}/p/cover:0/rpc", json.dumps({**error, "id": 1}).encode()) is None  # answered already
    rpc.request(f"{ROOT}/p/cover:0", Sent("p", "Cover.Close", "command"))
    success = recorded.shelly_frame("result")
    answer = rpc.answer(f"{ROOT}/p/cover:0/rpc", json.dumps({**success, "id": 2}).encode())
    assert answer.error is None and answer.result is None


def test_a_components_calls_are_one_call():
    call = RpcCall("Light.Set", {"id": 0, "on": True}, "light:0")
    call.merge(RpcCall("Light.Set", {"id": 0, "brightness": 40}, "light:0"))
    assert call.params == {"id": 0, "on": True, "brightness": 40}
    assert call.merge_key == ("Light.Set", 0)


def test_a_shelly_that_answered_is_there_until_it_says_otherwise():
    availability = ShellyAvailability([])
    assert availability.available([None], None) is True
    assert availability.available([False], False) is False
    assert availability.available([True], True) is True


def test_bad_shelly_answers_are_refused():
    with pytest.raises(Refused, match="has no id"):
        map_shelly("p", ROOT, {"name": "x"}, {}, {})
    with pytest.raises(Refused, match="not an object"):
        map_shelly("p", ROOT, {"id": "x"}, {}, ["switch:0"])


def test_readers_say_missing_for_what_a_message_does_not_say():
    prefix, device, dm = shelly_map("duo_bulb_gen3")
    values, errors = decode(dm, f"{prefix}/events/rpc", json.dumps({"method": "NotifyStatus", "params": {
        "ts": 1.0, "cct:0": {"id": 0, "ct": 4000}}}))
    assert values == {("shellyduobulbg3-aabbccddeeff-cct:0", "ColorTemperature"): 250} and errors == []


def test_a_cct_lights_white_ends_are_read_back_as_themselves():
    prefix, device, dm = shelly_map("duo_bulb_gen3")
    [ct] = [c for c in dm.accessory["services"][0]["characteristics"] if c["type"] == "ColorTemperature"]
    assert ct["metadata"] == {"min_value": 153, "max_value": 371}
    for kelvin, mireds in ((6500, 154), (2700, 370)):
        topic = f"{prefix}/events/rpc"
        frame = json.dumps({"method": "NotifyStatus", "params": {"cct:0": {"id": 0, "ct": kelvin}}})
        values, clamped, _, _ = dm.decode(topic, Message(topic, frame.encode()), {})
        assert list(values.values()) == [mireds] and clamped == []
