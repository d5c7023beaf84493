"""The no-I/O layers: abbreviations, templates, config topics, entities as HAP
services, devices as accessories, echoes. The configs are the fleet's
(tests/discovered_devices.py), as the firmware sends them."""

import json

import pytest

from homed.refs import Ref
from homed_mqtt_devices.accessory import assemble, merge_commands
from homed_mqtt_devices.bindings import Message
from homed_mqtt_devices.components import NotMapped, Refused, map_entity
from homed_mqtt_devices.discovery import read_config
from homed.echo import EchoMatcher
from homed_mqtt_devices.templates import MISSING, RenderError, Unsupported, compile_template

from . import discovered_devices as devices

P = "homeassistant"


def announced(topic, config):
    """The (discovery id, component, config) of a single-component config as read."""
    payload = config if isinstance(config, bytes) else json.dumps(config).encode()
    message = read_config(P, topic, payload)
    assert message.error is None, message.error
    [item] = message.announcements
    return item


def entity(topic, config):
    item = announced(topic, config)
    return map_entity(item.discovery_id, item.component, item.config)


def device_map(device):
    entities = []
    for topic, config in device.configs.items():
        message = read_config(P, topic, json.dumps(config).encode())
        for item in message.announcements:
            try:
                entities.append(map_entity(item.discovery_id, item.component, item.config))
            except (Refused, NotMapped):
                pass
    keys = {e.device_key for e in entities}
    assert keys == {device.key}
    return assemble(device.key, entities)


def feed(dm, topic, payload, cache):
    """Every binding of `dm` reading `topic`, as the provider feeds them; the cache updated."""
    values = {}
    for topic_filter in dm.by_topic:
        if topic_filter == topic or ("+" in topic_filter and topic.endswith(topic_filter.split("+/")[-1])):
            got, clamped, acks, errors = dm.decode(topic_filter, Message(topic, payload.encode()), cache)
            assert not errors, errors
            values.update(got)
    cache.update(values)
    return values


def kinds(dm):
    return [(s["type"], [c.get("type_name") or c["type"] for c in s["characteristics"]])
            for s in dm.accessory["services"]]


# -- abbreviations and topics ---------------------------------------------------------------

def test_abbreviated_keys_and_the_base_topic_are_expanded():
    item = announced(*next(iter(devices.TASMOTA.configs.items())))
    config = item.config
    assert item.discovery_id == "switch/A1B2C3_RL_1" and item.component == "switch"
    assert config["state_topic"] == "tasmota_A1B2C3/tele/STATE"
    assert config["command_topic"] == "tasmota_A1B2C3/cmnd/POWER"
    assert config["availability_topic"] == "tasmota_A1B2C3/tele/LWT"
    assert config["payload_available"] == "Online" and config["value_template"] == "{{value_json.POWER}}"
    assert config["device"]["identifiers"] == ["A1B2C3"] and config["device"]["model"] == "Sonoff S31"
    assert config["device"]["connections"] == [["mac", "A0:20:A6:A1:B2:C3"]] and "~" not in config
    # ~ at the end of a topic too, and in an availability list.
    item = announced(f"{P}/sensor/n1/o1/config", {"~": "base/x", "stat_t": "state/~", "uniq_id": "u",
                                                  "avty": [{"t": "~/lwt", "pl_avail": "up"}]})
    assert item.discovery_id == "sensor/n1/o1"
    assert item.config["state_topic"] == "state/base/x"
    assert item.config["availability"] == [{"topic": "base/x/lwt", "payload_available": "up"}]


def test_device_based_discovery_splits_into_components_with_the_shared_options():
    [(topic, config)] = devices.KITCHEN.configs.items()
    message = read_config(P, topic, json.dumps(config).encode())
    assert message.replaces == "device/kitchen-multi"
    by_id = {a.discovery_id: a for a in message.announcements}
    assert set(by_id) == {f"device/kitchen-multi#{c}" for c in ("temp", "hum", "relay", "motion")}
    relay = by_id["device/kitchen-multi#relay"]
    assert relay.component == "switch"
    assert relay.config["command_topic"] == "kitchen-multi/relay/set"  # its own
    assert relay.config["state_topic"] == "kitchen-multi/state"  # shared
    assert relay.config["availability_topic"] == "kitchen-multi/availability" and relay.config["qos"] == 1
    assert relay.config["device"]["serial_number"] == "ea334450945afc"
    assert relay.config["origin"]["support_url"].startswith("https://")
    # A component listed with its platform alone is removed; an empty payload removes them all.
    config = json.loads(json.dumps(config))
    config["cmps"]["hum"] = {"p": "sensor"}
    message = read_config(P, topic, json.dumps(config).encode())
    assert {a.discovery_id: a.config for a in message.announcements}["device/kitchen-multi#hum"] is None
    empty = read_config(P, topic, b"")
    assert empty.announcements == [] and empty.replaces == "device/kitchen-multi"


@pytest.mark.parametrize("topic,payload,error", [
    (f"{P}/switch/bad id!/config", b"{}", "not a discovery topic"),
    (f"{P}/switch/x/config", b"\x00{not json", "config not JSON"),
    (f"{P}/switch/x/config", b"[1, 2]", "config a JSON list, not an object"),
    (f"{P}/device/x/config", b'{"cmps": {"a": {"p": "sensor"}}}', "without a 'device'"),
    (f"{P}/device/x/config", b'{"dev": {"ids": "x"}}', "without 'components'"),
])
def test_config_messages_that_are_not_taken_say_why(topic, payload, error):
    assert error in read_config(P, topic, payload).error


def test_an_empty_config_removes_and_other_topics_are_not_configs():
    assert read_config(P, f"{P}/switch/x/config", b"").announcements[0].config is None
    assert read_config(P, "tasmota/tele/STATE", b"{}") is None
    assert read_config(P, f"{P}/status", b"online") is None
    own = read_config(P, f"{P}/switch/x/config", b'{"name": "Lamp", "cmd_t": "a", "o": {"name": "homed-mqtt"}}')
    assert own.skipped and not own.announcements  # homed's own export: no loop


# -- templates -----------------------------------------------------------------------------

PAYLOAD = '{"POWER": "ON", "AM2301": {"Temperature": 21.37, "Humidity": "48.6"}, "list": [3, 4], "on": true}'


@pytest.mark.parametrize("source,expected", [
    ("{{ value }}", PAYLOAD),
    ("{{value_json.POWER}}", "ON"),
    ("{{ value_json['POWER'] }}", "ON"),
    ('{{ value_json["AM2301"]["Temperature"] }}', 21.37),
    ("{{ value_json.AM2301.Temperature }}", 21.37),
    ("{{ value_json['AM2301'].Humidity | float }}", 48.6),
    ("{{ value_json.AM2301.Humidity | int }}", 48),
    ("  {{ value_json.AM2301.Temperature | round(1) }}\n", 21.4),
    ("{{ value_json.AM2301.Temperature|round }}", 21.0),
    ("{{ value_json.AM2301.Temperature | round(1, 'floor') }}", 21.3),
    ("{{ value_json.list[1] }}", 4),
    ("{{ value_json.on }}", True),
    ("{{ value_json.POWER | lower }}", "on"),
    ("{{ value_json.missing | is_defined }}", MISSING),
    ("{{ value_json.missing | default(7) | int }}", 7),
    ("{{ value_json.POWER | float(0) }}", 0),
])
def test_the_template_forms_devices_use(source, expected):
    assert compile_template(source).render(PAYLOAD, lambda: json.loads(PAYLOAD)) == expected


@pytest.mark.parametrize("source,why", [
    ("{{ (value_json.temp - 32) * 5 / 9 }}", "not a key, a filter or a literal"),
    ("{{ value_json.x * 10 }}", "not a key, a filter or a literal"),
    ("{% if value == 'ON' %}on{% endif %}", "statements"),
    ("{{ 'ON' if value_json.x else 'OFF' }}", "only value and value_json"),
    ("state: {{ value }}", "nothing around it"),
    ("{{ value_json.x | replace('a', 'b') }}", "the filter | replace"),
    ("{{ states('sensor.x') }}", "only value and value_json"),
    ("{{ value.x }}", "keys are read from value_json"),
])
def test_other_templates_are_refused_with_the_reason(source, why):
    with pytest.raises(Unsupported, match=why.replace("|", r"\|").replace("(", r"\(")):
        compile_template(source)


def test_a_payload_a_template_cannot_read_is_an_error():
    with pytest.raises(RenderError, match="not JSON"):
        Message("t", b"warm").render(compile_template("{{ value_json.x }}"))
    with pytest.raises(RenderError, match="not a number"):
        compile_template("{{ value | float }}").render("warm")


# -- entities --------------------------------------------------------------------------------

def test_each_component_maps_to_its_hap_service():
    assert kinds(device_map(devices.TASMOTA)) == [
        ("Outlet", ["On", "OutletInUse"]), ("HumiditySensor", ["CurrentRelativeHumidity"]),
        ("TemperatureSensor", ["CurrentTemperature"])]  # the power meter has no HAP sensor
    assert kinds(device_map(devices.DESK)) == [("Lightbulb", ["On", "Brightness", "Hue", "Saturation"])]
    assert kinds(device_map(devices.HALL)) == [("Lightbulb", ["On", "Brightness"])]
    assert kinds(device_map(devices.SHELLY_COVER)) == [
        ("WindowCovering", ["PositionState", "CurrentPosition", "TargetPosition", "HoldPosition"])]
    assert kinds(device_map(devices.FRONT_DOOR)) == [("LockMechanism", ["LockCurrentState", "LockTargetState"])]
    assert kinds(device_map(devices.RADIATOR)) == [("Thermostat", [
        "CurrentTemperature", "TargetTemperature", "TargetHeatingCoolingState", "CurrentHeatingCoolingState",
        "TemperatureDisplayUnits"])]
    assert kinds(device_map(devices.HALL_MOTION)) == [("MotionSensor", ["MotionDetected"]),
                                                      ("LightSensor", ["CurrentAmbientLightLevel"])]
    assert kinds(device_map(devices.BLE_LEAK)) == [("LeakSensor", ["LeakDetected"])]
    # A battery sensor is a BatteryService; a tamper switch goes on the device's sensors.
    assert kinds(device_map(devices.SHELLY_DOOR)) == [
        ("BatteryService", ["BatteryLevel", "ChargingState", "StatusLowBattery"]),
        ("ContactSensor", ["ContactSensorState", "StatusTampered"])]
    # Air pressure (a custom characteristic) goes on the first sensor service; the
    # refused dew point is not there.
    assert kinds(device_map(devices.WEATHER)) == [("TemperatureSensor", ["CurrentTemperature", "AirPressure"])]


@pytest.mark.parametrize("device_class,service,characteristic,on,off", [
    ("door", "ContactSensor", "ContactSensorState", 1, 0),
    ("window", "ContactSensor", "ContactSensorState", 1, 0),
    ("opening", "ContactSensor", "ContactSensorState", 1, 0),
    ("motion", "MotionSensor", "MotionDetected", True, False),
    ("occupancy", "OccupancySensor", "OccupancyDetected", 1, 0),
    ("moisture", "LeakSensor", "LeakDetected", 1, 0),
    ("smoke", "SmokeSensor", "SmokeDetected", 1, 0),
    ("carbon_monoxide", "CarbonMonoxideSensor", "CarbonMonoxideDetected", 1, 0),
])
def test_binary_sensor_device_classes(device_class, service, characteristic, on, off):
    e = entity(f"{P}/binary_sensor/x/config", {"stat_t": "s", "dev_cla": device_class, "uniq_id": "x"})
    assert e.services[0]["type"] == service
    dm = assemble(e.device_key, [e])
    ref = Ref("x", "x", characteristic)
    assert feed(dm, "s", "ON", {})[ref] == on and feed(dm, "s", "OFF", {})[ref] == off


def test_sensor_units_are_hap_units():
    cache = {}
    weather = device_map(devices.WEATHER)
    feed(weather, "weather/01/state", '{"outdoor": {"temp": 68.27}}', cache)  # °F, round(1): 68.3
    feed(weather, "weather/01/pressure", "101325", cache)  # Pa
    assert cache[Ref("weather-01", "weather-01-outdoor", "CurrentTemperature")] == 20.2
    assert cache[Ref("weather-01", "weather-01-outdoor", "AirPressure")] == pytest.approx(1013.2)
    co2 = entity(f"{P}/sensor/c/config", {"stat_t": "c", "dev_cla": "carbon_dioxide", "uniq_id": "c"})
    values = feed(assemble("c", [co2]), "c", "1450", {})
    assert values[Ref("c", "c", "CarbonDioxideLevel")] == 1450 and values[Ref("c", "c", "CarbonDioxideDetected")] == 1


@pytest.mark.parametrize("topic,config,why", [
    (f"{P}/switch/x/config", {"stat_t": "s", "uniq_id": "x"}, "no command_topic, which a switch needs"),
    (f"{P}/sensor/x/config", {"uniq_id": "x", "dev_cla": "temperature"}, "no state_topic"),
    (f"{P}/hologram/x/config", {"stat_t": "s"}, "unknown component 'hologram'"),
    (f"{P}/light/x/config", {"cmd_t": "c", "schema": "template"}, "light schema 'template'"),
    (f"{P}/sensor/x/config", {"stat_t": "s", "dev_cla": "temperature", "val_tpl": "{{ value_json.t * 2 }}"},
     "value_template '{{ value_json.t * 2 }}' is a template this provider does not read"),
    (f"{P}/switch/x/config", {"cmd_t": "c", "cmd_tpl": "{{ 1 if value == 'ON' else 0 }}"}, "command_template"),
    (f"{P}/switch/x/config", {"cmd_t": "c/+/x"}, "has a wildcard"),
    (f"{P}/switch/x/config", {"cmd_t": "c", "avty_mode": "most"}, "availability_mode 'most'"),
    (f"{P}/sensor/x/config", {"stat_t": "a/#/b", "dev_cla": "humidity"}, "state_topic 'a/#/b' is not a topic to"),
    (f"{P}/switch/x/config", {"cmd_t": "c", "avty": [{"t": "a+/b"}]}, "availability entry 1's topic 'a+/b' is not"),
])
def test_configs_that_are_refused_say_why(topic, config, why):
    with pytest.raises(Refused, match=why.replace("{", r"\{").replace("}", r"\}").replace("*", r"\*")
                       .replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        entity(topic, config)


def test_entities_with_no_hap_counterpart_are_not_mapped():
    with pytest.raises(NotMapped, match="a fan"):
        entity(f"{P}/fan/x/config", {"cmd_t": "c"})
    with pytest.raises(NotMapped, match="device_class 'power'"):
        entity(f"{P}/sensor/x/config", {"stat_t": "s", "dev_cla": "power", "unit_of_meas": "W"})
    with pytest.raises(NotMapped, match="device_class None"):
        entity(f"{P}/binary_sensor/x/config", {"stat_t": "s"})


def test_one_accessory_per_device_block_with_its_information():
    dm = device_map(devices.TASMOTA)
    accessory = dm.accessory
    assert accessory["key"] == "A1B2C3" and accessory["name"] == "Coffee plug" and accessory["category"] == "OUTLET"
    assert (accessory["manufacturer"], accessory["model"], accessory["firmware_revision"]) == (
        "Tasmota", "Sonoff S31", "13.2.0(tasmota)")
    assert accessory["services"][0]["primary"] is True
    kitchen = device_map(devices.KITCHEN)
    assert kitchen.accessory["serial_number"] == "ea334450945afc" and kitchen.accessory["category"] == "SWITCH"
    # Named after its device (name null): the service has no name of its own.
    assert "name" not in device_map(devices.LIVING).accessory["services"][0]
    # Without a device block: an accessory of its own, keyed by unique_id.
    assert device_map(devices.GARDEN).accessory["key"] == "garden-socket"



def test_a_device_named_with_digits_alone_gets_a_name_homed_takes():
    """homed refuses accessory and service names of digits alone (a PATH of
    digits is an id): a device called "12" (a room number) is "Device 12"."""
    config = {"name": "12", "unique_id": "relay-12", "state_topic": "r12/state", "command_topic": "r12/set",
              "device": {"identifiers": ["relay-12"], "name": "12"}}
    dm = assemble("relay-12", [entity(f"{P}/switch/relay-12/config", config)])
    assert dm.accessory["name"] == "Device 12"
    assert all(not s.get("name", "x").isdigit() for s in dm.accessory["services"])


# -- values and writes ---------------------------------------------------------------------------

def test_json_lights_read_and_write_colour_in_the_modes_they_support():
    cache = {}
    desk = device_map(devices.DESK)
    feed(desk, "desk-strip/light/desk_strip/state", '{"state": "ON", "brightness": 128, "color": {"r": 0, "g": 0, '
                                                    '"b": 255}}', cache)
    ref = lambda c: Ref(desk.key, "a4cf12aa0001-light-desk_strip", c)  # noqa: E731
    assert (cache[ref("On")], cache[ref("Brightness")], cache[ref("Hue")], cache[ref("Saturation")]) == (
        True, 50, 240.0, 100.0)
    # Hue and saturation go together, brightness with them, in one message.
    commands = desk.commands({ref("Hue"): 120, ref("Brightness"): 100}, cache)
    assert [c for c, _ in commands] == [("desk-strip/light/desk_strip/command",
                                         {"color": {"r": 0, "g": 255, "b": 0}, "brightness": 255})]
    living = device_map(devices.LIVING)
    lref = lambda c: Ref(living.key, "0x0017880104aabbcc_light_zigbee", c)  # noqa: E731
    commands = living.commands({lref("Saturation"): 80, lref("On"): True}, {lref("Hue"): 30})
    assert [c for c, _ in commands] == [("zigbee/Living bulb/set", {"state": "ON", "color": {"h": 30, "s": 80}})]


def test_a_cover_keeps_its_target_while_it_moves():
    dm = device_map(devices.SHELLY_COVER)
    ref = lambda c: Ref(dm.key, "shellyplus2pm-c4d8d5aabbcc-cover0", c)  # noqa: E731
    topic = "shellyplus2pm-c4d8d5aabbcc/status/cover:0"
    cache = dm.constants()
    feed(dm, topic, '{"state": "stopped", "current_pos": 40}', cache)
    assert (cache[ref("CurrentPosition")], cache[ref("TargetPosition")], cache[ref("PositionState")]) == (40, 40, 2)
    assert [c for c, _ in dm.commands({ref("TargetPosition"): 70}, cache)] == [
        ("shellyplus2pm-c4d8d5aabbcc/command/cover:0", "pos,70")]
    cache[ref("TargetPosition")] = 70
    _, _, acks, _ = dm.decode(topic, Message(topic, b'{"state": "opening", "current_pos": 45}'), cache)
    assert acks == {ref("TargetPosition")}  # moving: the device took the target
    values = feed(dm, topic, '{"state": "opening", "current_pos": 45}', cache)
    assert ref("TargetPosition") not in values and cache[ref("CurrentPosition")] == 45
    feed(dm, topic, '{"state": "stopped", "current_pos": 69}', cache)
    assert cache[ref("TargetPosition")] == 69 and cache[ref("PositionState")] == 2
    assert [c for c, _ in dm.commands({ref("HoldPosition"): True}, cache)] == [
        ("shellyplus2pm-c4d8d5aabbcc/command/cover:0", "stop")]


def test_a_thermostat_in_fahrenheit_and_on_its_step():
    e = entity(f"{P}/climate/x/config", {"uniq_id": "t", "temp_unit": "F", "temp_cmd_t": "t/set", "temp_stat_t": "t",
                                         "curr_temp_t": "c", "mode_cmd_t": "m/set", "modes": ["off", "heat_cool",
                                                                                              "auto"], "temp_step": 1})
    dm = assemble("t", [e])
    ref = lambda c: Ref("t", "t", c)  # noqa: E731
    cache = dm.constants()
    assert cache[ref("TemperatureDisplayUnits")] == 1
    feed(dm, "c", "70", cache)
    assert cache[ref("CurrentTemperature")] == 21.1
    commands = dm.commands({ref("TargetTemperature"): 21.0, ref("TargetHeatingCoolingState"): 3}, cache)
    assert sorted(c for c, _ in commands) == [("m/set", "auto"), ("t/set", "70")]
    meta = next(c for c in dm.accessory["services"][0]["characteristics"] if c["type"] == "TargetHeatingCoolingState")
    assert meta["metadata"] == {"valid_values": [0, 3]}
    assert next(c for c in dm.accessory["services"][0]["characteristics"]
                if c["type"] == "TargetHeatingCoolingState").get("optimistic") is True  # no mode state topic


def test_out_of_range_values_are_clamped_and_said():
    dm = device_map(devices.KITCHEN)
    topic = "kitchen-multi/state"
    values, clamped, _, _ = dm.decode(topic, Message(topic, b'{"temperature": 21, "humidity": 140, "relay": "ON", '
                                                          b'"occupied": "no"}'), {})
    hum = Ref(dm.key, "kitchen_hum", "CurrentRelativeHumidity")
    assert values[hum] == 100 and clamped == [hum]
    values, _, _, errors = dm.decode(topic, Message(topic, b'{"temperature": "warm", "relay": "MAYBE"}'), {})
    assert errors == [("kitchen_relay", "'MAYBE' is none of 'ON', 'OFF'"),
                      ("kitchen_temp", "'warm' is not a number (| float)")]


def test_merged_commands():
    commands = merge_commands([(("a", {"x": {"h": 1}}), None), (("a", {"x": {"s": 2}, "y": 1}), None),
                               (("b", "ON"), None), (("b", "ON"), None)])
    assert [c for c, _ in commands] == [("a", {"x": {"h": 1, "s": 2}, "y": 1}), ("b", "ON")]


def test_echoes_and_acknowledgements_confirm_writes():
    matcher = EchoMatcher()
    on, target = Ref("d", "s", "On"), Ref("d", "c", "TargetPosition")
    pending = matcher.add("d", {on: True, target: 70}, {on: 0, target: 0})
    assert matcher.observe("d", {on: False}) == set()
    assert matcher.observe("d", {on: True}, acks={target}) == {on, target}
    assert matcher.wait(pending, 0) and pending.echoed == {on: True, target: 70}
    late = matcher.add("d", {on: False}, {on: 0})
    assert not matcher.wait(late, 0.01) and late.waiting == {on: False}


def test_a_default_schema_light_as_tasmota_announces_a_dimmer():
    e = entity(f"{P}/light/D1_LI_1/config", {
        "~": "tasmota_D1/", "name": "Hall dimmer", "uniq_id": "D1_LI_1", "cmd_t": "~cmnd/POWER",
        "stat_t": "~tele/STATE", "val_tpl": "{{value_json.POWER}}", "stat_val_tpl": "{{value_json.POWER}}",
        "bri_cmd_t": "~cmnd/Dimmer", "bri_stat_t": "~tele/STATE", "bri_scl": 100, "on_cmd_type": "brightness",
        "bri_val_tpl": "{{value_json.Dimmer}}", "hs_cmd_t": "~cmnd/HSBColor", "hs_stat_t": "~tele/HS",
        "rgb_cmd_t": "~cmnd/Color2", "dev": {"ids": ["D1"]}})
    dm = assemble("D1", [e])
    ref = lambda c: Ref("D1", "D1_LI_1", c)  # noqa: E731
    assert kinds(dm) == [("Lightbulb", ["On", "Brightness", "Hue", "Saturation"])]
    assert "rgb_command_topic" in e.ignored
    cache = {}
    feed(dm, "tasmota_D1/tele/STATE", '{"POWER": "ON", "Dimmer": 37}', cache)
    feed(dm, "tasmota_D1/tele/HS", "120,55", cache)
    assert (cache[ref("On")], cache[ref("Brightness")], cache[ref("Hue")], cache[ref("Saturation")]) == (
        True, 37, 120.0, 55.0)
    # on_command_type brightness: turned on by its brightness; the others on their own topics.
    assert [c for c, _ in dm.commands({ref("On"): True}, cache)] == [("tasmota_D1/cmnd/Dimmer", "37")]
    assert [c for c, _ in dm.commands({ref("On"): False}, cache)] == [("tasmota_D1/cmnd/POWER", "OFF")]
    assert [c for c, _ in dm.commands({ref("Saturation"): 80}, cache)] == [("tasmota_D1/cmnd/HSBColor", "120,80")]
    # Turned on at 0 %: the lowest brightness, once (0 would be off to it, and 0 is no "unknown").
    assert [c for c, _ in dm.commands({ref("On"): True, ref("Brightness"): 0}, cache)] == [
        ("tasmota_D1/cmnd/Dimmer", "1")]
    scaled = entity(f"{P}/light/L2/config", {"name": "L", "uniq_id": "L2", "cmd_t": "l2/set",
                                             "bri_cmd_t": "l2/bri", "bri_scl": "99"})
    assert [c for c, _ in assemble("L2", [scaled]).commands({Ref("L2", "L2", "Brightness"): 100}, {})] == [
        ("l2/bri", "99")]  # a scale given as text, as Home Assistant's test has it


def test_a_battery_binary_sensor_is_the_low_battery_of_the_battery_service_or_of_the_sensors():
    door = entity(f"{P}/binary_sensor/d/config", {"stat_t": "d", "dev_cla": "door", "uniq_id": "door",
                                                  "dev": {"ids": "dev"}})
    low = entity(f"{P}/binary_sensor/l/config", {"stat_t": "l", "dev_cla": "battery", "uniq_id": "low",
                                                 "dev": {"ids": "dev"}})
    level = entity(f"{P}/sensor/b/config", {"stat_t": "b", "dev_cla": "battery", "uniq_id": "level",
                                            "dev": {"ids": "dev"}})
    dm = assemble("dev", [door, low, level])
    assert kinds(dm) == [("ContactSensor", ["ContactSensorState"]),
                         ("BatteryService", ["BatteryLevel", "ChargingState", "StatusLowBattery"])]
    cache = {}
    feed(dm, "b", "5", cache)  # low by its level, but the device says when it is low
    feed(dm, "l", "OFF", cache)
    assert cache[Ref("dev", "level", "StatusLowBattery")] == 0 and cache[Ref("dev", "level", "BatteryLevel")] == 5
    # Without a battery level: on the sensor services.
    dm = assemble("dev", [door, low])
    assert kinds(dm) == [("ContactSensor", ["ContactSensorState", "StatusLowBattery"])]
    assert feed(dm, "l", "ON", {}) == {Ref("dev", "door", "StatusLowBattery"): 1}
    # Alone, it has no service to go on: the device has nothing to register.
    assert assemble("dev", [low]) is None


def test_colour_temperature_in_mireds_or_kelvin_in_the_lights_own_range():
    living = device_map(devices.LIVING)
    service = living.accessory["services"][0]
    [ct] = [c for c in service["characteristics"] if c["type"] == "ColorTemperature"]
    assert ct["metadata"] == {"min_value": 153, "max_value": 500}  # Home Assistant's default range
    ref = Ref(living.key, "0x0017880104aabbcc_light_zigbee", "ColorTemperature")
    assert feed(living, "zigbee/Living bulb", '{"state": "ON", "color_temp": 370}', {})[ref] == 370
    assert [c for c, _ in living.commands({ref: 250}, {})] == [("zigbee/Living bulb/set", {"color_temp": 250})]
    # Kelvin, default schema, a range wider than HAP's 140–500 mireds (the daemon takes it as declared).
    e = entity(f"{P}/light/k/config", {"uniq_id": "k", "cmd_t": "k/set", "clr_temp_cmd_t": "k/ct/set",
                                       "clr_temp_stat_t": "k/ct", "color_temp_kelvin": True, "min_kelvin": 1800,
                                       "max_kelvin": 6500})
    dm = assemble("k", [e])
    [ct] = [c for c in dm.accessory["services"][0]["characteristics"] if c["type"] == "ColorTemperature"]
    assert ct["metadata"] == {"min_value": 154.0, "max_value": 556.0}
    ref = Ref("k", "k", "ColorTemperature")
    assert feed(dm, "k/ct", "2000", {})[ref] == 500
    assert feed(dm, "k/ct", "1800", {})[ref] == 556  # warmer than HAP's 500: kept, as declared
    assert [c for c, _ in dm.commands({ref: 250}, {})] == [("k/ct/set", "4000")]


def test_a_thermostat_declares_its_own_setpoint_range():
    dm = device_map(devices.RADIATOR)
    [target] = [c for c in dm.accessory["services"][0]["characteristics"] if c["type"] == "TargetTemperature"]
    assert target["metadata"] == {"min_value": 5, "max_value": 30}
    ref = Ref(dm.key, "a4cf12aa0004-climate-radiator", "TargetTemperature")
    assert feed(dm, "radiator/climate/radiator/target_temperature/state", "6.5", {})[ref] == 6.5


# -- cover tilt, off_delay, expire_after --------------------------------------------------

def tilt_cover(**tilt):
    config = {"name": "Venetian", "uniq_id": "vb-1", "cmd_t": "vb/set", "pos_t": "vb/pos", "set_pos_t": "vb/set_pos",
              "dev": {"ids": ["vb"], "name": "Venetian blind"}, **tilt}
    return entity(f"{P}/cover/vb/config", config)


def test_a_covers_tilt_is_the_horizontal_tilt_angle_scaled_from_tilt_min_and_max():
    e = tilt_cover(tilt_cmd_t="vb/tilt/set", tilt_status_t="vb/tilt")
    [service] = e.services
    types = [c["type"] for c in service["characteristics"]]
    assert "CurrentHorizontalTiltAngle" in types and "TargetHorizontalTiltAngle" in types
    dm = assemble("vb", [e])
    cache = {}
    # Home Assistant's default range 0–100: 0 is -90°, 50 is 0°, 100 is 90°.
    for payload, angle in (("0", -90), ("50", 0), ("100", 90), ("25", -45)):
        values = feed(dm, "vb/tilt", payload, cache)
        assert values[Ref("vb", "vb-1", "CurrentHorizontalTiltAngle")] == angle
        assert values[Ref("vb", "vb-1", "TargetHorizontalTiltAngle")] == angle
    target = Ref("vb", "vb-1", "TargetHorizontalTiltAngle")
    assert [c for c, _ in dm.commands({target: 45}, cache)] == [("vb/tilt/set", "75")]
    assert [c for c, _ in dm.commands({target: -90}, cache)] == [("vb/tilt/set", "0")]
    assert dm.bindings[target].write is not None and not dm.bindings[target].optimistic


def test_tilt_ranges_templates_and_what_is_refused():
    # A device range of 0–180 (and Home Assistant's tilt_position, a percentage, in the template)
    e = tilt_cover(tilt_cmd_t="vb/tilt/set", tilt_status_t="vb/state", tilt_min=0, tilt_max=180,
                   tilt_status_tpl="{{ value_json.tilt }}", tilt_cmd_tpl='{"tilt": {{ tilt_position }}}')
    dm = assemble("vb", [e])
    cache = {}
    assert feed(dm, "vb/state", '{"tilt": 135}', cache)[Ref("vb", "vb-1", "CurrentHorizontalTiltAngle")] == 45
    target = Ref("vb", "vb-1", "TargetHorizontalTiltAngle")
    assert [c for c, _ in dm.commands({target: 45}, cache)] == [("vb/tilt/set", '{"tilt": 75}')]
    # {{ value }}: the device's own number; an inverted range turns it round.
    e = tilt_cover(tilt_cmd_t="vb/tilt/set", tilt_min=100, tilt_max=0, tilt_cmd_tpl="T{{ value }}")
    dm = assemble("vb", [e])
    assert [c for c, _ in dm.commands({target: -90}, {})] == [("vb/tilt/set", "T100")]
    # No status topic: optimistic, the current angle follows what was written.
    assert dm.bindings[target].optimistic
    assert dm.bindings[target].followers
    # A status topic alone: the tilt is read, not written.
    e = tilt_cover(tilt_status_t="vb/tilt")
    [service] = e.services
    target_entry = next(c for c in service["characteristics"] if c["type"] == "TargetHorizontalTiltAngle")
    assert target_entry["properties"] == {"readable": True, "supports_event_notification": True}
    with pytest.raises(Refused, match="tilt_min and tilt_max are both 5"):
        tilt_cover(tilt_cmd_t="vb/tilt/set", tilt_min=5, tilt_max=5)
    with pytest.raises(Refused, match="tilt_cmd_tpl|tilt_command_template"):
        tilt_cover(tilt_cmd_t="vb/tilt/set", tilt_cmd_tpl="{{ tilt_position * 2 }}")


def test_off_delay_and_expire_after_are_read_and_bad_ones_refused():
    motion = entity(f"{P}/binary_sensor/m1/config", {"name": "Motion", "uniq_id": "m1", "stat_t": "m1/state",
                                                    "dev_cla": "motion", "off_dly": 30, "exp_aft": 600})
    [binding] = motion.bindings
    assert (binding.off_delay, binding.off_value) == (30.0, False)
    assert (motion.expire_after, motion.state_topic) == (600.0, "m1/state")
    assert motion.ignored == []
    temp = entity(f"{P}/sensor/t1/config", {"name": "T", "uniq_id": "t1", "stat_t": "t1/state",
                                           "dev_cla": "temperature", "unit_of_meas": "°C", "exp_aft": 0})
    assert temp.expire_after is None  # 0: Home Assistant's "never expires"
    text = entity(f"{P}/sensor/t2/config", {"name": "T", "uniq_id": "t2", "stat_t": "t2/state",
                                           "dev_cla": "temperature", "exp_aft": "4"})
    assert text.expire_after == 4.0  # a number given as text, as Home Assistant's sensor test has it
    low = entity(f"{P}/binary_sensor/b1/config", {"name": "Low", "uniq_id": "b1", "stat_t": "b1/state",
                                                 "dev_cla": "battery", "off_delay": 5})
    [attachment] = low.attachments
    assert attachment.make(Ref("k", "s", "StatusLowBattery")).off_delay == 5.0
    for key, value in (("off_delay", -1), ("off_delay", "soon"), ("expire_after", True)):
        with pytest.raises(Refused, match=f"{key} .* is not a number of seconds"):
            entity(f"{P}/binary_sensor/m2/config", {"uniq_id": "m2", "stat_t": "m2/state", "dev_cla": "motion",
                                                    key: value})
