"""The pure layers with no daemon and no broker: the mapping to Home Assistant
entities, state and command payloads, topics, filters, settings, and the
checker itself (which must refuse what Home Assistant refuses)."""

import json

import pytest

from homed import pb

from . import ha_checker
from homed_ha.config import Settings, SettingsError, load
from homed_ha.discovery import device_config, device_topic, entities_for, exported
from homed_ha.model import AccessoryView, Char, Service
from homed_ha.payloads import BadCommand, event_payload, state_of, writes_for
from homed_ha.topics import Topics

SETTINGS = Settings()


def char(cid, name, fmt="bool", writable=False, **meta):
    return Char(cid, name, fmt, True, writable, True, **meta)


def accessory(*services, aid=7, name="Lamp", provider="devices", room="Kitchen"):
    view = AccessoryView(aid, name, room, 3, provider, "Acme", "Bulb 2", "2.1", "SN1", True)
    view.services = list(services)
    return view


def service(sid, type_name, *chars, name=""):
    return Service(sid, type_name, name, "", False, {c.type_name: c for c in chars})


def ct_light():
    return accessory(service(15, "Lightbulb", char(16, "On", writable=True),
                             char(17, "Brightness", "int", True, min=0, max=100, step=1),
                             char(18, "Hue", "float", True, min=0, max=360),
                             char(19, "Saturation", "float", True, min=0, max=100),
                             char(20, "ColorTemperature", "uint32", True, min=153, max=454, step=1),
                             name="Lamp"))


def test_a_colour_temperature_light_is_a_json_light_with_both_colour_modes():
    (light,), skipped = entities_for(ct_light(), SETTINGS)
    assert skipped == []
    c = light.config
    assert ha_checker.problems("light", c) == []
    assert (c["schema"], c["supported_color_modes"], c["min_mireds"], c["max_mireds"]) == \
        ("json", ["hs", "color_temp"], 153, 454)
    assert "color_mode" not in c and c["brightness"] is True and c["brightness_scale"] == 255
    assert c["name"] is None  # the device's main entity takes the device's name
    assert c["unique_id"] == "homed_7_15" and c["device"]["identifiers"] == ["homed_7"]
    values = {16: True, 17: 50, 18: 10.0, 19: 20.0, 20: 300}
    assert state_of(light, values, "color_temp") == {"state": "ON", "brightness": 128, "color_mode": "color_temp",
                                                     "color_temp": 300}
    assert state_of(light, values, "hs") == {"state": "ON", "brightness": 128, "color_mode": "hs",
                                             "color": {"h": 10.0, "s": 20.0}}
    assert state_of(light, {}, None) is None  # nothing known yet: nothing published


@pytest.mark.parametrize("brightness, written", [(255, 100), (128, 50), (1, 1), (0, 0), (3, 1)])
def test_brightness_is_scaled_from_255_to_100_and_never_rounded_off(brightness, written):
    (light,), _ = entities_for(ct_light(), SETTINGS)
    writes = writes_for(light, "", json.dumps({"state": "ON", "brightness": brightness}).encode(), {})
    assert writes[16] == pb.Value(bool_value=True)
    assert writes[17] == pb.Value(int_value=written)


def test_a_light_command_becomes_writes_in_each_characteristics_format():
    (light,), _ = entities_for(ct_light(), SETTINGS)
    assert writes_for(light, "", b'{"color_temp": 250.4}', {}) == {20: pb.Value(uint_value=250)}
    assert writes_for(light, "", b'{"color": {"h": 30, "s": 40}}', {}) == {18: pb.Value(float_value=30.0),
                                                                           19: pb.Value(float_value=40.0)}
    assert writes_for(light, "", b'{"state": "OFF", "brightness": 9}', {}) == {16: pb.Value(bool_value=False)}


@pytest.mark.parametrize("payload, why", [
    (b"ON", "is not JSON"),
    (b"[1]", "is not a JSON object"),
    (b'{"state": "BRIGHT"}', "state 'BRIGHT' is not ON or OFF"),
    (b'{"brightness": "x"}', "brightness 'x' is not a number from 0 to 255"),
    (b'{"brightness": true}', "brightness True is not a number"),
    (b'{"color": {"x": 0.3, "y": 0.3}}', "the light takes hs"),
    (b'{"color_temp": null}', "is not a number of mireds"),
    (b'{"transition": 2}', "asks for nothing this light does"),
    (b"\xff\xfe", "not UTF-8"),
])
def test_bad_light_commands_are_refused_with_the_reason(payload, why):
    (light,), _ = entities_for(ct_light(), SETTINGS)
    with pytest.raises(BadCommand, match=None) as refused:
        writes_for(light, "", payload, {})
    assert why in str(refused.value)


def lock_entity():
    lock = accessory(service(64, "LockMechanism", char(65, "LockCurrentState", "uint8", valid_values=[0, 1, 2, 3]),
                             char(66, "LockTargetState", "uint8", True, valid_values=[0, 1])))
    return entities_for(lock, SETTINGS)[0][0]


@pytest.mark.parametrize("current, target, state", [
    (1, 1, "LOCKED"), (0, 0, "UNLOCKED"), (1, 0, "UNLOCKING"), (0, 1, "LOCKING"), (2, 1, "JAMMED"),
    (3, 1, "LOCKING"),
])
def test_lock_states(current, target, state):
    assert state_of(lock_entity(), {65: current, 66: target}) == {"state": state}


def every_kind():
    return accessory(
        service(10, "Switch", char(11, "On", writable=True)),
        service(12, "Outlet", char(13, "On", writable=True), char(14, "OutletInUse"), name="Socket"),
        service(20, "WindowCovering", char(21, "CurrentPosition", "uint8"), char(22, "TargetPosition", "uint8", True),
                char(23, "PositionState", "uint8")),
        service(30, "GarageDoorOpener", char(31, "CurrentDoorState", "uint8"),
                char(32, "TargetDoorState", "uint8", True), char(33, "ObstructionDetected")),
        service(40, "Thermostat", char(41, "CurrentHeatingCoolingState", "uint8"),
                char(42, "TargetHeatingCoolingState", "uint8", True, valid_values=[0, 1]),
                char(43, "CurrentTemperature", "float"), char(44, "TargetTemperature", "float", True, min=5, max=30,
                                                              step=0.5)),
        service(50, "HumiditySensor", char(51, "CurrentRelativeHumidity", "float"), name="Humidity"),
        service(52, "CarbonDioxideSensor", char(53, "CarbonDioxideLevel", "float"), char(54, "CarbonDioxideDetected")),
        service(60, "LeakSensor", char(61, "LeakDetected", "uint8")),
        service(70, "Doorbell", char(71, "ProgrammableSwitchEvent", "uint8", valid_values=[0])),
        service(80, "BatteryService", char(81, "BatteryLevel", "uint8"), char(82, "StatusLowBattery", "uint8")),
        service(90, "Fanv2", char(91, "Active", "uint8")),
        service(95, "TemperatureSensor"),  # a provider's service without its characteristic
    )


def test_every_service_kind_has_a_valid_config_and_state():
    entities, skipped = entities_for(every_kind(), SETTINGS)
    assert skipped == ["service Fanv2 (90) left out: no Home Assistant component for it",
                       "service TemperatureSensor (95) left out: it has no CurrentTemperature"]
    by_object = {e.object_id: e for e in entities}
    assert [(e.component, e.object_id) for e in entities] == [
        ("switch", "a7_s10"), ("switch", "a7_s12"), ("cover", "a7_s20"), ("cover", "a7_s30"), ("climate", "a7_s40"),
        ("sensor", "a7_s50"), ("sensor", "a7_s52"), ("binary_sensor", "a7_s60"), ("event", "a7_s70"),
        ("sensor", "a7_s80_level"), ("binary_sensor", "a7_s80_low")]
    for e in entities:
        assert ha_checker.problems(e.component, e.config) == [], e.object_id
        assert e.config["device"] == entities[0].config["device"]  # one device block
    assert by_object["a7_s12"].config["name"] == "Socket" and by_object["a7_s12"].config["device_class"] == "outlet"
    values = {11: True, 21: 30, 23: 0, 31: 2, 41: 0, 42: 1, 43: 20.5, 44: 21.0, 51: 40.0, 53: 800.0, 61: 1, 81: 15,
              82: 1}
    states = {oid: state_of(e, values) for oid, e in by_object.items()}
    assert states == {
        "a7_s10": {"state": "ON"}, "a7_s12": None, "a7_s20": {"state": "closing", "position": 30},
        "a7_s30": {"state": "opening"},
        "a7_s40": {"current": 20.5, "target": 21.0, "mode": "heat", "action": "idle"},
        "a7_s50": {"value": 40.0}, "a7_s52": {"value": 800.0}, "a7_s60": {"state": "ON"}, "a7_s70": None,
        "a7_s80_level": {"value": 15}, "a7_s80_low": {"state": "ON"}}
    climate = by_object["a7_s40"].config
    assert (climate["modes"], climate["min_temp"], climate["max_temp"], climate["temp_step"]) == \
        (["off", "heat"], 5, 30, 0.5)
    assert by_object["a7_s70"].config["event_types"] == ["single"]
    assert event_payload(by_object["a7_s70"], 0) == b'{"event_type":"single"}'
    assert event_payload(by_object["a7_s70"], 2) is None  # a long press this doorbell does not have
    # Commands
    assert writes_for(by_object["a7_s20"], "", b"STOP", values) == {22: pb.Value(uint_value=30)}
    assert writes_for(by_object["a7_s30"], "", b"OPEN", values) == {32: pb.Value(uint_value=0)}
    assert writes_for(by_object["a7_s40"], "mode", b"off", values) == {42: pb.Value(uint_value=0)}
    with pytest.raises(BadCommand, match="mode 'cool' is not one of heat, off"):
        writes_for(by_object["a7_s40"], "mode", b"cool", values)
    with pytest.raises(BadCommand, match="temperature 'nan' is not a finite number"):
        writes_for(by_object["a7_s40"], "temperature", b"nan", values)
    with pytest.raises(BadCommand, match="a sensor takes no command"):
        writes_for(by_object["a7_s50"], "", b"1", values)


def test_an_accessory_as_one_device_based_config_holds_every_entity():
    entities, _ = entities_for(every_kind(), SETTINGS)
    config = device_config(entities)
    assert ha_checker.device_problems(config) == []
    assert device_topic("homeassistant", "homed", 7) == "homeassistant/device/homed/a7/config"
    # Device, origin and availability once, at the root; each entity a component
    # with its platform, and the same unique_id, topics and options as alone.
    assert config["dev"] == entities[0].config["device"] and config["o"]["name"] == "homed-mqtt"
    assert config["availability"] == [{"topic": "homed/bridge/state"}, {"topic": "homed/7/availability"}]
    assert list(config["cmps"]) == [e.object_id for e in entities]
    for e in entities:
        component = config["cmps"][e.object_id]
        assert component["p"] == e.component
        assert not {"device", "origin", "availability"} & set(component)
    assert ha_checker.expand(config) == {(e.component, e.object_id): e.config for e in entities}
    # A component removed from the device: its platform alone, the rest kept.
    smaller = device_config(entities[1:], gone={"a7_s10": "switch"})
    assert smaller["cmps"]["a7_s10"] == {"p": "switch"}
    assert ha_checker.removed(smaller) == {"a7_s10": "switch"}
    assert ha_checker.device_problems(smaller) == []
    assert ("switch", "a7_s10") not in ha_checker.expand(smaller)


@pytest.mark.parametrize("change, problem", [
    (lambda c: c.pop("dev"), "a device config needs device (dev)"),
    (lambda c: c.pop("o"), "a device config needs origin (o)"),
    (lambda c: c.update(cmps={}), "needs components (cmps)"),
    (lambda c: c.update(device=c["dev"]), "dev and device are one option, given twice"),
    (lambda c: c.update(schema="json"), "keys a device config does not take at its root: ['schema']"),
    (lambda c: c["cmps"]["a7_s10"].pop("p"), "component 'a7_s10' has no platform (p)"),
    (lambda c: c["cmps"]["a7_s10"].update(p="vacuum"), "has no platform (p) the checker knows: 'vacuum'"),
    (lambda c: c["cmps"]["a7_s10"].update(dev={"name": "x"}), "component 'a7_s10' overrides dev"),
    (lambda c: c["cmps"].update({"a 7": c["cmps"].pop("a7_s10")}), "component id 'a 7'"),
    (lambda c: c["cmps"]["a7_s10"].pop("unique_id"), "component 'a7_s10' (switch): no unique_id"),
    (lambda c: c["cmps"]["a7_s10"].pop("command_topic"), "component 'a7_s10' (switch): a switch Home Assistant"),
    (lambda c: c["dev"].pop("identifiers"), "device identifiers must be a non-empty list"),
])
def test_the_checker_refuses_invalid_device_based_configs(change, problem):
    entities, _ = entities_for(every_kind(), SETTINGS)
    config = json.loads(json.dumps(device_config(entities)))
    change(config)
    found = ha_checker.device_problems(config)
    assert any(problem in p for p in found), found


def test_contact_sensor_open_is_on():
    door = accessory(service(150, "ContactSensor", char(151, "ContactSensorState", "uint8")))
    (entity,), _ = entities_for(door, SETTINGS)
    assert entity.config["device_class"] == "opening"
    assert state_of(entity, {151: 0}) == {"state": "OFF"}  # contact detected: closed
    assert state_of(entity, {151: 1}) == {"state": "ON"}


def test_which_accessories_are_exported():
    lamp = accessory()
    assert exported(lamp, Settings()) == (True, "")
    assert exported(accessory(provider="zigbee2mqtt"), Settings())[0] is False
    assert exported(accessory(provider="mqtt"), Settings())[0] is False
    assert exported(accessory(provider="zigbee2mqtt"), Settings(exclude_providers=()))[0] is True
    assert exported(lamp, Settings(include_rooms=["kitchen"]))[0] is True
    assert exported(lamp, Settings(include_rooms=["Garage"])) == (
        False, "its room 'Kitchen' is not among the rooms to export")
    assert exported(lamp, Settings(exclude_rooms=["KITCHEN"]))[0] is False
    assert exported(lamp, Settings(include_accessories=["7"]))[0] is True
    assert exported(lamp, Settings(exclude_accessories=["lamp"]))[0] is False


def test_topics():
    topics = Topics(Settings(discovery_prefix="ha/discovery", base_topic="home/homed", node_id="house-1"))
    assert topics.command("home/homed/a7_s15/set") == ("a7_s15", "")
    assert topics.command("home/homed/a7_s15/set/position") == ("a7_s15", "position")
    assert topics.command("home/homed/a7_s15/state") is None
    assert topics.command("homed/a7_s15/set") is None
    assert topics.is_our_config("ha/discovery/light/house-1/a7_s15/config")
    assert not topics.is_our_config("ha/discovery/light/zigbee2mqtt/a7_s15/config")
    assert not topics.is_our_config("homeassistant/light/house-1/a7_s15/config")
    assert "ha/discovery/+/house-1/+/config" in topics.subscriptions()
    assert topics.is_device_config("ha/discovery/device/house-1/a7/config")
    assert not topics.is_device_config("ha/discovery/light/house-1/a7_s15/config")


def test_settings_from_a_file_and_flags(tmp_path):
    credentials = tmp_path / "creds"
    credentials.write_text("username = bridge\npassword = s3cret\n")
    config = tmp_path / "homed-mqtt.ini"
    config.write_text(f"[mqtt]\nbroker = mqtt://10.0.0.2:1884\ncredentials = {credentials}\nbase_topic = house\n"
                      "[export]\nexclude_providers = zigbee2mqtt ; a comment\nexclude_rooms = Garage, Attic\n")
    s = load(str(config), {"base_topic": "flat", "broker": None})
    assert (s.host, s.port, s.username, s.password, s.base_topic) == ("10.0.0.2", 1884, "bridge", "s3cret", "flat")
    assert s.exclude_providers == {"zigbee2mqtt"} and s.exclude_rooms == {"garage", "attic"}
    assert Settings().exclude_providers == {"zigbee2mqtt", "mqtt"}
    # One config per entity unless asked: every Home Assistant release served reads that form.
    assert s.discovery == "entity"
    config.write_text("[mqtt]\ndiscovery = device\n")
    assert load(str(config)).discovery == "device"
    assert load(str(config), {"discovery": "entity"}).discovery == "entity"
    config.write_text("[mqtt]\ndiscovery = devices\n")
    with pytest.raises(SettingsError, match="discovery 'devices': entity .* or device"):
        load(str(config))
    config.write_text("[mqtt]\nbrokr = x\n")
    with pytest.raises(SettingsError, match=r"homed-mqtt.ini: \[mqtt\] has no key 'brokr'"):
        load(str(config))
    with pytest.raises(SettingsError, match="credentials file /nonexistent: No such file"):
        load(None, {"credentials": "/nonexistent"})
    with pytest.raises(SettingsError, match="node id 'my home'"):
        Settings(node_id="my home")
    with pytest.raises(SettingsError, match="the scheme is mqtt"):
        Settings(broker="http://x")
    with pytest.raises(SettingsError, match="without wildcards"):
        Settings(base_topic="homed/#")


# -- the checker refuses what Home Assistant refuses -----------------------------

def good(component="light"):
    (light,), _ = entities_for(ct_light(), SETTINGS)
    return dict(light.config)


@pytest.mark.parametrize("change, problem", [
    (lambda c: c.pop("command_topic"), "a light needs command_topic"),
    (lambda c: c.pop("schema"), "a light needs schema"),
    (lambda c: c.update(color_mode=True), "color_mode: deprecated for a light since Home Assistant 2024.4"),
    (lambda c: c.update(hs=True), "hs: deprecated for a light since Home Assistant 2024.4"),
    (lambda c: c.pop("supported_color_modes"), "a light needs supported_color_modes"),
    (lambda c: c.update(supported_color_modes=["onoff", "hs"]), "onoff and brightness are only valid alone"),
    (lambda c: c.update(supported_color_modes=["hs", "rainbow"]), "supported_color_modes"),
    (lambda c: c.pop("max_mireds"), "min_mireds < max_mireds"),
    (lambda c: c.update(command_topic="homed/+/set"), "has no wildcards"),
    (lambda c: c.pop("unique_id"), "no unique_id"),
    (lambda c: c["device"].update(serial_number="x"), "device keys Home Assistant does not take: ['serial_number']"),
    (lambda c: c["device"].update(identifiers=[]), "device identifiers must be a non-empty list"),
    (lambda c: c.update(origin={"sw_version": "1"}), "origin must be an object with a name"),
    (lambda c: c.update(availability_topic="x"), "availability and availability_topic exclude each other"),
    (lambda c: c.update(availability_mode="some"), "availability_mode 'some'"),
    (lambda c: c.update(color_temp_kelvin=True), "keys a light does not take: ['color_temp_kelvin']"),
])
def test_the_checker_refuses_invalid_light_configs(change, problem):
    config = json.loads(json.dumps(good()))
    change(config)
    assert any(problem in p for p in ha_checker.problems("light", config)), ha_checker.problems("light", config)


def test_the_checker_refuses_invalid_configs_of_other_components():
    base = {k: v for k, v in good().items() if k in ha_checker.COMMON}
    assert any("needs event_types" in p for p in ha_checker.problems("event", dict(base, state_topic="t")))
    assert any("unit '%' is not one of" in p for p in ha_checker.problems(
        "sensor", dict(base, state_topic="t", device_class="temperature", unit_of_measurement="%")))
    assert any("modes ['heat', 'boost']" in p
               for p in ha_checker.problems("climate", dict(base, modes=["heat", "boost"])))
    assert any("a lock needs command_topic" in p for p in ha_checker.problems("lock", dict(base, state_topic="t")))
    assert any("device_class 'lamp'" in p for p in ha_checker.problems(
        "binary_sensor", dict(base, state_topic="t", device_class="lamp")))
    assert any("set_position_topic without position_topic" in p for p in ha_checker.problems(
        "cover", dict(base, set_position_topic="t/set")))
    assert ha_checker.problems("binary_sensor", dict(base, state_topic="t", device_class="door")) == []
