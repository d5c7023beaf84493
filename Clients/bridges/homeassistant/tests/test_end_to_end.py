"""The bridge as a real process between a real homed (accessories from a test
provider) and a real mosquitto, seen by a subscriber in Home Assistant's role."""

import json

import pytest

from homed import pb
from homed_testkit import EventLog, plain
from homed_testkit.providers import wait_for, wait_log

from . import ha_checker
from .ha_peer import read_retained
from .home_source import (EXPECTED, FROM_MQTT, Devices, accessory_ids, char_id, make_home, object_id,
                         start_bridge)


@pytest.fixture
def home(homed):
    """homed with the test provider's accessories, and one from a provider named zigbee2mqtt."""
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    zigbee = Devices(homed.socket_path, "zigbee2mqtt", FROM_MQTT).start()
    try:
        yield devices
    finally:
        zigbee.stop()
        devices.stop()


def exported_ready(homed, broker, ha, processes, *extra, count=len(EXPECTED)):
    bridge = start_bridge(homed, broker.url, processes, *extra)
    ha.wait(lambda: len(ha.configs()) >= count, f"{count} discovery configs")
    wait_log(bridge, "home loaded")
    ha.wait_payload("homed/bridge/state", b"online")  # following homed's events
    return bridge


def value(client, cid):
    read = client.read([cid]).reads[0]
    return plain(read.value)


def test_every_accessory_is_discovered_in_the_form_home_assistant_reads(homed, broker, ha, home, processes):
    bridge = exported_ready(homed, broker, ha, processes)
    with homed.client() as client:
        found = accessory_ids(client, "devices")
    configs = ha.configs()
    expected = {(component, object_id(found[key], service)) for component, key, service in EXPECTED}
    assert set(configs) == expected  # the Fanv2 and the zigbee2mqtt provider's plug are left out
    for (component, obj), config in configs.items():
        assert ha_checker.problems(component, config) == [], (component, obj, config)
        # Stable ids from homed's ids, never names.
        accessory_id, service_id = obj[1:].split("_s")[0], obj.split("_s")[1].split("_")[0]
        assert config["unique_id"].startswith(f"homed_{accessory_id}_{service_id}")
        assert config["device"]["identifiers"] == [f"homed_{accessory_id}"]
        assert config["availability"] == [{"topic": "homed/bridge/state"},
                                          {"topic": f"homed/{accessory_id}/availability"}]
        assert config["availability_mode"] == "all"
        assert config["origin"]["name"] == "homed-mqtt"
    assert len({c["unique_id"] for c in configs.values()}) == len(configs)
    # One device block for the entities of one accessory; room, manufacturer, model.
    sensor = found["climate-sensor"]
    blocks = [c["device"] for (_, obj), c in configs.items() if obj.startswith(f"a{sensor.id}_")]
    assert len(blocks) == 5 and all(b == blocks[0] for b in blocks)
    lamp = configs[("light", object_id(found["lamp"], "Lightbulb"))]
    assert lamp["device"] == {"identifiers": [f"homed_{found['lamp'].id}"], "name": "Lamp", "manufacturer": "Acme",
                              "model": "Bulb 2", "sw_version": "2.1", "suggested_area": "Kitchen"}
    assert lamp["supported_color_modes"] == ["hs"] and lamp["brightness_scale"] == 255
    # States, retained, in Home Assistant's units.
    retained = read_retained(broker.port, "homed/#")
    assert retained["homed/bridge/state"] == b"online"
    assert json.loads(retained[lamp["state_topic"]]) == {"state": "OFF", "brightness": 102, "color_mode": "hs",
                                                         "color": {"h": 120.0, "s": 50.0}}
    thermostat = configs[("climate", object_id(found["thermostat"], "Thermostat"))]
    assert json.loads(retained[thermostat["mode_state_topic"]]) == {"mode": "heat", "target": 21.0, "current": 19.5,
                                                                    "action": "heating"}
    assert thermostat["modes"] == ["off", "heat", "cool", "auto"]
    door = configs[("binary_sensor", object_id(found["door"], "ContactSensor"))]
    assert json.loads(retained[door["state_topic"]]) == {"state": "OFF"}  # 0: contact detected, closed
    remote = configs[("event", object_id(found["remote"], "StatelessProgrammableSwitch"))]
    assert remote["event_types"] == ["single", "long"]
    assert remote["state_topic"] not in retained  # a press is not state: nothing retained
    assert retained[f"homed/{found['lamp'].id}/availability"] == b"online"
    log = bridge.log()
    fan = next(s for s in found["fan"].services if s.type_name == "Fanv2")
    assert f"accessory 'Ceiling Fan' ({found['fan'].id}): service Fanv2 ({fan.id}) left out: no Home Assistant " \
        "component for it" in log
    assert "'Zigbee Plug'" in log and "its provider 'zigbee2mqtt' is excluded" in log


def test_commands_become_homed_writes_and_states_follow(homed, broker, ha, home, processes):
    exported_ready(homed, broker, ha, processes)
    with homed.client() as client:
        found = accessory_ids(client, "devices")
        lamp = found["lamp"]
        lamp_obj = object_id(lamp, "Lightbulb")
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            ha.publish(f"homed/{lamp_obj}/set", json.dumps({"state": "ON", "brightness": 255}))
            ha.wait_payload(f"homed/{lamp_obj}/state", {"state": "ON", "brightness": 255})
            assert value(client, char_id(lamp, "Lightbulb", "On")) is True
            assert value(client, char_id(lamp, "Lightbulb", "Brightness")) == 100
            # The write's origin names the bridge.
            brightness = char_id(lamp, "Lightbulb", "Brightness")
            (_, event), = events.wait_for(lambda e: e.kind == pb.EVENT_VALUE_CHANGED
                                          and e.value.characteristic_id == brightness)
            assert event.origin.kind == pb.ORIGIN_CLIENT and event.origin.name.startswith("homed-mqtt")
        finally:
            events.close()
        ha.publish(f"homed/{lamp_obj}/set", json.dumps({"color": {"h": 200, "s": 80}}))
        ha.wait_payload(f"homed/{lamp_obj}/state", {"color_mode": "hs", "color": {"h": 200.0, "s": 80.0}})
        assert value(client, char_id(lamp, "Lightbulb", "Hue")) == 200.0
        ha.publish(f"homed/{lamp_obj}/set", json.dumps({"state": "OFF"}))
        ha.wait_payload(f"homed/{lamp_obj}/state", {"state": "OFF"})

        plug_obj = object_id(found["plug"], "Outlet")
        ha.publish(f"homed/{plug_obj}/set", "ON")
        ha.wait_payload(f"homed/{plug_obj}/state", {"state": "ON"})
        assert value(client, char_id(found["plug"], "Outlet", "On")) is True

        blinds = found["blinds"]
        blinds_obj = object_id(blinds, "WindowCovering")
        ha.publish(f"homed/{blinds_obj}/set/position", "40")
        wait_for(lambda: value(client, char_id(blinds, "WindowCovering", "TargetPosition")) == 40, what="target 40")
        # The device moves and says so: the state follows.
        home.report("blinds", "WindowCovering", "PositionState", 1)
        home.report("blinds", "WindowCovering", "CurrentPosition", 40)
        ha.wait_payload(f"homed/{blinds_obj}/state", {"state": "opening", "position": 40})
        home.report("blinds", "WindowCovering", "PositionState", 2)
        ha.wait_payload(f"homed/{blinds_obj}/state", {"state": "open", "position": 40})
        ha.publish(f"homed/{blinds_obj}/set", "CLOSE")
        wait_for(lambda: value(client, char_id(blinds, "WindowCovering", "TargetPosition")) == 0, what="target 0")

        lock = found["lock"]
        lock_obj = object_id(lock, "LockMechanism")
        ha.publish(f"homed/{lock_obj}/set", "UNLOCK")
        ha.wait_payload(f"homed/{lock_obj}/state", {"state": "UNLOCKING"})  # target 0, still locked
        home.report("lock", "LockMechanism", "LockCurrentState", 0)
        ha.wait_payload(f"homed/{lock_obj}/state", {"state": "UNLOCKED"})

        thermostat = found["thermostat"]
        t_obj = object_id(thermostat, "Thermostat")
        ha.publish(f"homed/{t_obj}/set/temperature", "22.5")
        ha.wait_payload(f"homed/{t_obj}/state", {"target": 22.5})
        ha.publish(f"homed/{t_obj}/set/mode", "off")
        ha.wait_payload(f"homed/{t_obj}/state", {"mode": "off"})
        assert value(client, char_id(thermostat, "Thermostat", "TargetHeatingCoolingState")) == 0

        # A button press: one event message, not retained.
        remote_obj = object_id(found["remote"], "StatelessProgrammableSwitch")
        mark = ha.mark()
        home.report("remote", "StatelessProgrammableSwitch", "ProgrammableSwitchEvent", 2)
        ha.wait(lambda: ha.since(mark, f"homed/{remote_obj}/state"), "the press event")
        assert ha.since(mark, f"homed/{remote_obj}/state") == [(f"homed/{remote_obj}/state",
                                                                b'{"event_type":"long"}', False)]

        # Reachability: the accessory's availability topic.
        home.provider.set_reachable("door", False)
        ha.wait_payload(f"homed/{found['door'].id}/availability", b"offline")
        home.provider.set_reachable("door", True)
        ha.wait_payload(f"homed/{found['door'].id}/availability", b"online")


def test_bad_commands_are_logged_with_the_entity_and_nothing_is_written(homed, broker, ha, home, processes):
    bridge = exported_ready(homed, broker, ha, processes)
    with homed.client() as client:
        found = accessory_ids(client, "devices")
    lamp_obj = object_id(found["lamp"], "Lightbulb")
    plug_obj = object_id(found["plug"], "Outlet")
    blinds_obj = object_id(found["blinds"], "WindowCovering")
    t_obj = object_id(found["thermostat"], "Thermostat")
    bad = [
        (f"homed/{lamp_obj}/set", b"{not json", f"'Lamp' (accessory {found['lamp'].id}) light {lamp_obj}: bad command"),
        (f"homed/{lamp_obj}/set", b'{"brightness": 300}', "brightness 300 is not a number from 0 to 255"),
        (f"homed/{lamp_obj}/set", b'{"color_temp": 300}', "its color_temp cannot be written"),
        (f"homed/{plug_obj}/set", b"MAYBE", "payload 'MAYBE' is not one of OFF, ON"),
        (f"homed/{blinds_obj}/set/position", b"high", "position 'high' is not a number"),
        (f"homed/{blinds_obj}/set/position", b"140", "position 140 is not from 0 to 100"),
        (f"homed/{t_obj}/set/mode", b"dry", "mode 'dry' is not one of auto, cool, heat, off"),
        (f"homed/{t_obj}/set/fan", b"on", "a climate takes no command on set/fan"),
        ("homed/a999_s1/set", b"ON", "no entity 'a999_s1' is exported"),
    ]
    for topic, payload, _ in bad:
        ha.publish(topic, payload)
    # homed's own refusal: beyond the thermostat's range, logged with homed's error.
    ha.publish(f"homed/{t_obj}/set/temperature", "99")
    log = wait_log(bridge, "homed refused target")
    for topic, payload, text in bad:
        assert text in log, text
        assert f"{topic}: " in log
    assert f"'Radiator' (accessory {found['thermostat'].id}) climate {t_obj}: homed refused target" in log
    assert "= 99.0: INVALID_ARGUMENT" in log
    assert home.writes == []  # nothing reached the devices
    # And the bridge goes on: a good command after the bad ones.
    ha.publish(f"homed/{plug_obj}/set", "ON")
    ha.wait_payload(f"homed/{plug_obj}/state", {"state": "ON"})


def test_removed_accessories_and_services_leave_an_empty_config(homed, broker, ha, home, processes):
    exported_ready(homed, broker, ha, processes)
    with homed.client() as client:
        found = accessory_ids(client, "devices")
    lamp = found["lamp"]
    lamp_config = f"homeassistant/light/homed/{object_id(lamp, 'Lightbulb')}/config"
    lamp_state = f"homed/{object_id(lamp, 'Lightbulb')}/state"
    home.provider.remove(["lamp"])
    ha.wait_payload(lamp_config, b"")
    ha.wait_payload(lamp_state, b"")
    ha.wait_payload(f"homed/{lamp.id}/availability", b"")
    # A service that goes: the climate sensor without its light sensor.
    sensor = found["climate-sensor"]
    from .home_source import ACCESSORIES
    changed = json.loads(json.dumps(next(a for a in ACCESSORIES if a["key"] == "climate-sensor")))
    changed["services"] = [s for s in changed["services"] if s["type"] != "LightSensor"]
    home.provider.update([changed])
    ha.wait_payload(f"homeassistant/sensor/homed/{object_id(sensor, 'LightSensor')}/config", b"")
    # The others stay, and a rename in homed renames the device, same unique_id.
    humidity = ("sensor", object_id(sensor, "HumiditySensor"))
    before = ha.configs()[humidity]
    with homed.client() as client:
        client.call("ChangeLayout", pb.LayoutRequest(rename=pb.RenameObject(id=sensor.id, name="Hall Sensor")))
    ha.wait(lambda: ha.configs()[humidity]["device"]["name"] == "Hall Sensor", "the renamed device")
    assert ha.configs()[humidity]["unique_id"] == before["unique_id"]
    retained = read_retained(broker.port, "homeassistant/#")
    assert lamp_config not in retained
    assert len(retained) == len(EXPECTED) - 2


def test_home_assistant_coming_online_gets_every_config_again(homed, broker, ha, home, processes):
    bridge = exported_ready(homed, broker, ha, processes)
    topics = [f"homeassistant/{component}/homed/{obj}/config" for component, obj in ha.configs()]
    before = {topic: ha.count(topic) for topic in topics}
    ha.publish("homeassistant/status", "offline")
    ha.publish("homeassistant/status", "online")
    ha.wait(lambda: all(ha.count(t) > before[t] for t in topics), "every config published again")
    wait_log(bridge, "Home Assistant is online (homeassistant/status)")


def test_no_config_carries_a_key_deprecated_in_the_home_assistant_releases_served(homed, broker, ha, home,
                                                                                   processes):
    """README: the configs are for Home Assistant 2024.4 and later. None carries
    a key those releases deprecated (each logged per entity: the JSON light's
    `color_mode: true`, deprecated in 2024.4, removed from the schema in 2025.3),
    in either discovery form."""
    for form, count in (("entity", len(EXPECTED)), ("device", len({key for _, key, _ in EXPECTED}))):
        mark = ha.mark()
        bridge = start_bridge(homed, broker.url, processes, "--discovery", form, log_name=f"bridge-{form}.log")
        ha.wait(lambda: len({t for t, p, _ in ha.since(mark) if t.startswith("homeassistant/") and p}) >= count,
                f"{count} configs in the {form} form")
        configs = ha.configs()
        lights = [c for (component, _), c in configs.items() if component == "light"]
        assert lights and all(c["supported_color_modes"] for c in lights)
        for (component, obj), config in configs.items():
            assert not set(config) & set(ha_checker.DEPRECATED.get(component, {})), (form, component, obj, config)
        bridge.proc.terminate()
        assert bridge.proc.wait(10) == 0


CT_LIGHT = [{"key": "ct-bulb", "name": "Desk Bulb", "category": "LIGHTBULB", "room": "Kitchen",
             "services": [{"type": "Lightbulb", "characteristics": [
                 {"type": "On", "value": True}, {"type": "Brightness", "value": 100},
                 {"type": "Hue", "value": 0.0}, {"type": "Saturation", "value": 0.0},
                 {"type": "ColorTemperature", "value": 370, "metadata": {"min_value": 153, "max_value": 454}}]}]}]


def test_a_colour_temperature_light_switches_between_its_colour_modes(homed, broker, ha, processes):
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path, "ct", CT_LIGHT).start()
    try:
        exported_ready(homed, broker, ha, processes, count=1)
        with homed.client() as client:
            bulb = accessory_ids(client, "ct")["ct-bulb"]
        obj = object_id(bulb, "Lightbulb")
        config = ha.configs()[("light", obj)]
        assert ha_checker.problems("light", config) == []
        assert (config["supported_color_modes"], config["min_mireds"], config["max_mireds"]) == \
            (["hs", "color_temp"], 153, 454)
        ha.publish(f"homed/{obj}/set", json.dumps({"state": "ON", "color_temp": 250}))
        ha.wait_payload(f"homed/{obj}/state", {"color_mode": "color_temp", "color_temp": 250})
        with homed.client() as client:
            assert value(client, char_id(bulb, "Lightbulb", "ColorTemperature")) == 250
        ha.publish(f"homed/{obj}/set", json.dumps({"color": {"h": 30, "s": 90}}))
        ha.wait_payload(f"homed/{obj}/state", {"color_mode": "hs", "color": {"h": 30.0, "s": 90.0}})
    finally:
        devices.stop()


UNREPORTED = [
    {"key": "hall-door", "name": "Hall Door", "category": "SENSOR", "room": "Kitchen",
     "services": [{"type": "ContactSensor", "characteristics": [{"type": "ContactSensorState"}]}]},
    {"key": "attic", "name": "Attic", "category": "SENSOR", "room": "Kitchen",
     "services": [{"type": "TemperatureSensor", "characteristics": [{"type": "CurrentTemperature"}]}]},
]


def test_an_entity_nothing_reported_is_unknown_until_its_first_state(homed, broker, ha, processes):
    """No state message (Home Assistant's `unknown`) for a characteristic homed
    has no value for; the device's first report is the first state."""
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path, "fresh", UNREPORTED).start()
    try:
        exported_ready(homed, broker, ha, processes, count=2)
        with homed.client() as client:
            found = accessory_ids(client, "fresh")
        door = ha.configs()[("binary_sensor", object_id(found["hall-door"], "ContactSensor"))]
        attic = ha.configs()[("sensor", object_id(found["attic"], "TemperatureSensor"))]
        retained = read_retained(broker.port, "homed/#")
        assert door["state_topic"] not in retained and attic["state_topic"] not in retained
        assert ha.count(door["state_topic"]) == 0 and ha.count(attic["state_topic"]) == 0
        devices.report("hall-door", "ContactSensor", "ContactSensorState", 1)
        ha.wait_payload(door["state_topic"], {"state": "ON"})  # 1: no contact, open
        devices.report("attic", "TemperatureSensor", "CurrentTemperature", 4.5)
        ha.wait_payload(attic["state_topic"], {"value": 4.5})
    finally:
        devices.stop()
