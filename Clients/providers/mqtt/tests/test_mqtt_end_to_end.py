"""The provider as a real process between a real mosquitto (with a fleet of
fake devices announcing themselves on it) and a real homed, driven with the
real homectl and the Python client."""

import json

import pytest

from homed import pb
from homed_testkit import EventLog, is_reachability, is_value, plain

from . import discovered_devices as devices
from .mqtt_helpers import (accessories, homectl, homectl_json, ids_of, start_provider, value_of, wait_accessories,
                          wait_for, wait_log, wait_value)

KEYS = devices.KEYS


def ready(homed, broker, processes, *extra, **kwargs):
    """The provider started, every device registered and reachable: (provider, client, accessories)."""
    provider = start_provider(homed, broker.url, processes, *extra, **kwargs)
    client = homed.client()
    return provider, client, wait_accessories(client, KEYS, provider)


def write(client, cid, value, timeout=10.0):
    result = client.write({cid: value}, timeout=timeout).results[0]
    return result.code, result.message


def get(homed, path):
    [read] = homectl_json(homed, "get", f"Default Room/{path}")
    return read["value"]


def test_every_device_is_registered_with_its_retained_values(homed, broker, fleet, processes):
    provider, client, found = ready(homed, broker, processes)
    with client:
        assert set(found) == KEYS  # nothing half-registered, nothing of the bad configs
        plug = found["A1B2C3"]
        assert (plug.name, plug.category, plug.manufacturer, plug.model) == (
            "Coffee plug", pb.CATEGORY_OUTLET, "Tasmota", "Sonoff S31")
        assert [s.type_name for s in plug.services][1:] == ["Outlet", "HumiditySensor", "TemperatureSensor"]
        kitchen = found["kitchen-multi-01"]  # device-based discovery: one config, four components
        assert [s.type_name for s in kitchen.services][1:] == ["Switch", "HumiditySensor", "OccupancySensor",
                                                               "TemperatureSensor"]
        assert kitchen.serial_number == "ea334450945afc"
        # Values seeded from the retained states, with the real homectl.
        assert get(homed, "desk-strip/On") is True
        assert get(homed, "desk-strip/Brightness") == 100
        assert get(homed, "Bedroom blind/CurrentPosition") == 40
        assert get(homed, "radiator/TargetTemperature") == pytest.approx(20.5)
        assert get(homed, "radiator/CurrentHeatingCoolingState") == 1
        assert get(homed, "front-door/LockCurrentState") == 1
        assert get(homed, "Kitchen multisensor/CurrentTemperature") == pytest.approx(22.5)
        assert get(homed, "Balcony door/BatteryLevel") == 87
        assert get(homed, "Balcony door/ContactSensorState") == 0
        code, out, err = homectl(homed, "show", "Default Room/Weather station")
        assert code == 0 and "AirPressure" in out and "1013.2" in out
        log = wait_log(provider, "registered")
        assert ("homeassistant/sensor/weather-01/dew/config: sensor sensor/weather-01/dew (unique_id weather-01-dew) "
                "refused: value_template '{{ (value_json.outdoor.temp - 32) * 5 / 9 }}' is a template this provider "
                "does not read") in log
        assert "left out (the rest of its device is registered)" in log


def test_writes_are_acknowledged_by_the_state_topics_echo(homed, broker, fleet, processes):
    provider, client, found = ready(homed, broker, processes)
    with client:
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            code, out, err = homectl(homed, "set", "Default Room/Coffee plug/On", "true")
            assert code == 0, err
            assert fleet.wait_received("tasmota_A1B2C3/cmnd/POWER") == "ON"
            assert get(homed, "Coffee plug/On") is True
            plug = ids_of(found["A1B2C3"])
            wait_value(client, plug[("A1B2C3_RL_1", "OutletInUse")], True, process=provider)
            # A JSON light: hue and saturation in one colour, as RGB (what the strip supports).
            desk = ids_of(found["a4cf12aa0001"])
            light = "a4cf12aa0001-light-desk_strip"
            response = client.write({desk[(light, "Hue")]: pb.Value(float_value=120),
                                     desk[(light, "Brightness")]: pb.Value(int_value=40)}, timeout=10)
            assert [r.code for r in response.results] == [0, 0]
            assert json.loads(fleet.wait_received("desk-strip/light/desk_strip/command")) == {
                "color": {"r": 0, "g": 255, "b": 0}, "brightness": 102}
            assert value_of(client, desk[(light, "Hue")]) == 120.0
            # hs for the bulb that speaks it.
            bulb = ids_of(found["zigbee_0x0017880104aabbcc"])
            assert write(client, bulb[("0x0017880104aabbcc_light_zigbee", "Saturation")],
                         pb.Value(float_value=80)) == (0, "")
            assert json.loads(fleet.wait_received("zigbee/Living bulb/set")) == {"color": {"h": 30.0, "s": 80.0}}
            # Colour temperature, in mireds, in the bulb's range.
            assert get(homed, "Living bulb/ColorTemperature") == 370
            code, out, err = homectl(homed, "set", "Default Room/Living bulb/ColorTemperature", "250")
            assert code == 0, err
            assert json.loads(fleet.wait_received("zigbee/Living bulb/set")) == {"color_temp": 250}
            # A cover to a position (Shelly's set_position_template); a lock; a thermostat.
            code, out, err = homectl(homed, "set", "Default Room/Bedroom blind/TargetPosition", "70")
            assert code == 0, err
            assert fleet.wait_received("shellyplus2pm-c4d8d5aabbcc/command/cover:0") == "pos,70"
            wait_value(client, ids_of(found["c4d8d5aabbcc"])[("shellyplus2pm-c4d8d5aabbcc-cover0", "CurrentPosition")],
                       70)
            code, out, err = homectl(homed, "set", "Default Room/front-door/LockTargetState", "0")
            assert code == 0, err
            assert fleet.wait_received("front-door/lock/front_door/command") == "UNLOCK"
            assert get(homed, "front-door/LockCurrentState") == 0
            radiator = ids_of(found["a4cf12aa0004"])
            thermostat = "a4cf12aa0004-climate-radiator"
            assert write(client, radiator[(thermostat, "TargetTemperature")], pb.Value(float_value=21.3)) == (0, "")
            assert fleet.wait_received("radiator/climate/radiator/target_temperature/command") == "21.5"
            # Acknowledged, and then homed holds what the device echoed (its 0.5 step).
            wait_value(client, radiator[(thermostat, "TargetTemperature")], pytest.approx(21.5), process=provider)
            # Below the catalog's 10 °C: the radiator's own range starts at 5.
            assert write(client, radiator[(thermostat, "TargetTemperature")], pb.Value(float_value=6)) == (0, "")
            assert fleet.wait_received("radiator/climate/radiator/target_temperature/command") == "6"
            assert write(client, radiator[(thermostat, "TargetHeatingCoolingState")], pb.Value(uint_value=0)) == (0, "")
            assert fleet.wait_received("radiator/climate/radiator/mode/command") == "off"
            wait_value(client, radiator[(thermostat, "CurrentHeatingCoolingState")], 0)
            # A switch of a device-based config.
            kitchen = ids_of(found["kitchen-multi-01"])
            assert write(client, kitchen[("kitchen_relay", "On")], pb.Value(bool_value=True)) == (0, "")
            assert fleet.wait_received("kitchen-multi/relay/set") == "ON"
            events.wait_for(lambda e: is_value(kitchen[("kitchen_relay", "On")])(e) and plain(e.value.value) is True)
        finally:
            events.close()


def test_an_optimistic_write_is_acknowledged_without_an_echo(homed, broker, fleet, processes):
    # The same echo deadline under which a device with a state topic that stays
    # silent fails (the next test): this one has no state topic, so no echo is
    # awaited and the write succeeds, however slow the machine.
    provider, client, found = ready(homed, broker, processes, write_timeout=1.0)
    with client:
        socket = ids_of(found["garden-socket"])[("garden-socket", "On")]
        code, out, err = homectl(homed, "set", "Default Room/Garden socket/On", "on")
        assert code == 0, err
        assert fleet.wait_received("garden/socket/set") == "1"  # its payload_on
        assert value_of(client, socket) is True


def test_a_write_that_is_not_echoed_fails_at_the_deadline(homed, broker, fleet, processes):
    provider, client, found = ready(homed, broker, processes, write_timeout=1.0)
    with client:
        relay = ids_of(found["stuck-relay"])[("stuck-relay", "On")]
        code, message = write(client, relay, pb.Value(bool_value=True))
        assert code == pb.DEADLINE_EXCEEDED
        assert message == "device 'Stuck relay' (stuck-relay) did not echo On = True within 1 s of stuck/relay/set"
        assert value_of(client, relay) is False  # not confirmed: not applied
        code, out, err = homectl(homed, "set", "Default Room/Stuck relay/On", "true")
        assert code != 0 and "did not echo On = True" in err
        # A late echo: the write failed; the echo is then the device's own change.
        fleet.modes["Coffee plug"] = ("late", 1.5)
        plug = ids_of(found["A1B2C3"])[("A1B2C3_RL_1", "On")]
        assert write(client, plug, pb.Value(bool_value=True))[0] == pb.DEADLINE_EXCEEDED
        wait_value(client, plug, True, process=provider)


def test_every_template_form_reads_its_value(homed, broker, fleet, processes):
    provider, client, found = ready(homed, broker, processes)
    with client:
        # Tasmota's tele/SENSOR (not retained: it comes every TelePeriod).
        fleet.change("Coffee plug", Temperature=23.44, Humidity=61.6)
        assert wait_for(lambda: get(homed, "Coffee plug/CurrentTemperature") == pytest.approx(23.4))
        assert get(homed, "Coffee plug/CurrentRelativeHumidity") == 62  # | round(0)
        # OpenMQTTGateway on a wildcard topic, | is_defined.
        fleet.change("LYWSD03MMC-2B3C", tempc=19.96, hum=40.4, batt=15)
        assert wait_for(lambda: get(homed, "LYWSD03MMC-2B3C/CurrentTemperature") == pytest.approx(20.0))
        assert get(homed, "LYWSD03MMC-2B3C/CurrentRelativeHumidity") == 40
        assert get(homed, "LYWSD03MMC-2B3C/BatteryLevel") == 15
        assert get(homed, "LYWSD03MMC-2B3C/StatusLowBattery") == 1
        fleet.change("SJWS01LM-DDEE", wet=True)
        assert wait_for(lambda: get(homed, "SJWS01LM-DDEE/LeakDetected") == 1)
        # value_json.x.y | round(1) in °F; {{ value | int }} in Pa.
        fleet.change("Weather station", temp=77.0, pressure="98000")
        assert wait_for(lambda: get(homed, "Weather station/CurrentTemperature") == pytest.approx(25.0))
        assert get(homed, "Weather station/AirPressure") == pytest.approx(980.0)
        # | float and ['x'] | int of a device-based config's shared state topic.
        fleet.change("Kitchen multisensor", temperature="24.04", humidity=50.9, occupied="yes")
        assert wait_for(lambda: get(homed, "Kitchen multisensor/OccupancyDetected") == 1)
        assert get(homed, "Kitchen multisensor/CurrentTemperature") == pytest.approx(24.0)
        assert get(homed, "Kitchen multisensor/CurrentRelativeHumidity") == 50
        # {{ value }} (no template): ESPHome's plain payloads.
        fleet.change("hall-motion", motion="ON", lux="0")
        assert wait_for(lambda: get(homed, "hall-motion/MotionDetected") is True)
        assert get(homed, "hall-motion/CurrentAmbientLightLevel") == pytest.approx(0.0001)  # clamped to the catalog
        wait_log(provider, "CurrentAmbientLightLevel out of range in b'0'; clamped to 0.0001 (said once)")
        # The refused template's entity is not there; the rest of its device is.
        assert [s.provider_key for s in accessories(client)["weather-01"].services][1:] == ["weather-01-outdoor"]


def test_availability_offline_and_online(homed, broker, fleet, processes):
    fleet.raw("hall-dimmer/status", "offline", retain=True)  # offline before the provider starts
    provider = start_provider(homed, broker.url, processes)
    with homed.client() as client:
        wait_accessories(client, KEYS - {"a4cf12aa0002"}, provider)
        found = wait_accessories(client, {"a4cf12aa0002"}, provider, reachable=False)
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            fleet.raw("hall-dimmer/status", "online", retain=True)
            events.wait_for(is_reachability(found["a4cf12aa0002"].id, True))
            fleet.raw("tasmota_A1B2C3/tele/LWT", "Offline", retain=True)
            events.wait_for(is_reachability(found["A1B2C3"].id, False))
            assert all(a.reachable for k, a in accessories(client).items() if k != "A1B2C3")
            fleet.raw("tasmota_A1B2C3/tele/LWT", "Online", retain=True)
            events.wait_for(is_reachability(found["A1B2C3"].id, True))
            # An availability list with mode "all": the bridge going offline is enough.
            fleet.raw("zigbee/bridge/state", json.dumps({"state": "offline"}), retain=True)
            events.wait_for(is_reachability(found["zigbee_0x0017880104aabbcc"].id, False))
            fleet.raw("zigbee/bridge/state", json.dumps({"state": "online"}), retain=True)
            events.wait_for(is_reachability(found["zigbee_0x0017880104aabbcc"].id, True))
            # Shelly's true/false; and an availability that is neither.
            fleet.raw("shellyplus2pm-c4d8d5aabbcc/online", "false", retain=True)
            events.wait_for(is_reachability(found["c4d8d5aabbcc"].id, False))
            fleet.raw("shellyplus2pm-c4d8d5aabbcc/online", "sideways", retain=True)
            wait_log(provider, "shellyplus2pm-c4d8d5aabbcc/online: device c4d8d5aabbcc, entity "
                               "shellyplus2pm-c4d8d5aabbcc-cover0: availability b'sideways' is neither 'true' nor "
                               "'false'; ignored")
            fleet.raw("shellyplus2pm-c4d8d5aabbcc/online", "true", retain=True)
            events.wait_for(is_reachability(found["c4d8d5aabbcc"].id, True))
        finally:
            events.close()


def test_empty_configs_remove_entities_and_then_the_accessory(homed, broker, fleet, processes):
    provider, client, found = ready(homed, broker, processes)
    with client:
        plug_id = found["A1B2C3"].id
        fleet.raw("homeassistant/sensor/A1B2C3_AM2301_Humidity/config", "", retain=True)
        wait_for(lambda: [s.type_name for s in accessories(client)["A1B2C3"].services][1:] == [
            "Outlet", "TemperatureSensor"], what="the plug without its humidity", process=provider)
        assert accessories(client)["A1B2C3"].id == plug_id  # the same accessory, one service less
        wait_log(provider, "homeassistant/sensor/A1B2C3_AM2301_Humidity/config: entity "
                           "sensor/A1B2C3_AM2301_Humidity (unique_id A1B2C3_AM2301_Humidity) removed (empty config)")
        # A device config that no longer lists a component.
        [(topic, config)] = devices.KITCHEN.configs.items()
        config = json.loads(json.dumps(config))
        del config["cmps"]["motion"]
        fleet.raw(topic, json.dumps(config), retain=True)
        kitchen_services = lambda: [s.type_name for s in accessories(client)["kitchen-multi-01"].services]  # noqa: E731
        wait_for(lambda: "OccupancySensor" not in kitchen_services(), what="the kitchen without its presence sensor",
                 process=provider)
        # The last entity of a device goes: so does the accessory.
        for topic in devices.WEATHER.configs:
            fleet.raw(topic, "", retain=True)
        wait_for(lambda: "weather-01" not in accessories(client), what="the weather station removed",
                 process=provider)
        fleet.raw("homeassistant/device/kitchen-multi/config", "", retain=True)
        wait_for(lambda: "kitchen-multi-01" not in accessories(client), what="the kitchen removed", process=provider)
        assert set(accessories(client)) == KEYS - {"weather-01", "kitchen-multi-01"}


def test_bad_input_is_logged_and_the_rest_keeps_working(homed, broker, fleet, processes):
    for topic, payload in devices.BAD_CONFIGS.items():
        fleet.raw(topic, payload, retain=True)  # retained garbage is there at the start
    provider, client, found = ready(homed, broker, processes)
    with client:
        log = wait_log(provider, "homeassistant/sensor/garbage/config: config not JSON")
        assert ("homeassistant/hologram/gadget/config: hologram hologram/gadget (unique_id gadget-1) refused: unknown "
                "component 'hologram'") in log
        assert ("homeassistant/switch/broken-relay/config: switch switch/broken-relay (unique_id broken-relay) "
                "refused: no command_topic, which a switch needs; left out") in log
        assert ("homeassistant/fan/ceiling-fan/config: fan fan/ceiling-fan (unique_id ceiling-fan) is a fan (this "
                "provider maps switch, light, binary_sensor, sensor, cover, lock, climate); not mapped") in log
        assert set(accessories(client)) == KEYS
        # States that do not parse, named by topic, device and entity.
        fleet.raw("desk-strip/light/desk_strip/state", "{not json", retain=True)
        wait_log(provider, "desk-strip/light/desk_strip/state: device a4cf12aa0001, entity "
                           "a4cf12aa0001-light-desk_strip: state the payload is not JSON")
        fleet.raw("radiator/climate/radiator/current_temperature/state", "warm", retain=True)
        wait_log(provider, "radiator/climate/radiator/current_temperature/state: device a4cf12aa0004, entity "
                           "a4cf12aa0004-climate-radiator: state 'warm' is not a number; ignored")
        # Out of range: clamped, said once.
        for humidity in (140, 150):
            fleet.change("Kitchen multisensor", humidity=humidity)
        wait_for(lambda: get(homed, "Kitchen multisensor/CurrentRelativeHumidity") == 100)
        log = wait_log(provider, "CurrentRelativeHumidity out of range")
        assert log.count("CurrentRelativeHumidity out of range") == 1
        # Garbage on a known config topic: the entity stays as it was.
        fleet.raw("homeassistant/lock/front-door/front_door/config", "\x00garbage", retain=True)
        wait_log(provider, "homeassistant/lock/front-door/front_door/config: config not JSON (Expecting value: line 1 "
                           "column 1 (char 0)); the entity stays as it was")
        # ... and everything still works.
        code, out, err = homectl(homed, "set", "Default Room/front-door/LockTargetState", "0")
        assert code == 0, err
        assert get(homed, "front-door/LockCurrentState") == 0
        assert provider.proc.poll() is None


def test_broker_killed_and_restarted(homed, broker, fleet, processes):
    provider, client, found = ready(homed, broker, processes)
    with client:
        lock = ids_of(found["a4cf12aa0003"])[("a4cf12aa0003-lock-front_door", "LockCurrentState")]
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            broker.kill()
            for key in KEYS:
                events.wait_for(is_reachability(found[key].id, False), timeout=15)
            wait_log(provider, "lost the broker")
            lamp = ids_of(found["a4cf12aa0001"])[("a4cf12aa0001-light-desk_strip", "On")]
            assert write(client, lamp, pb.Value(bool_value=False))[0] == pb.UNAVAILABLE
            fleet.states["front-door"]["state"] = "UNLOCKED"  # changed meanwhile
            broker.start()  # without persistence: the devices announce themselves again
            for key in KEYS:
                events.wait_for(is_reachability(found[key].id, True), timeout=20)
            wait_value(client, lock, 0, timeout=10, process=provider)
            # Only what changed is reported: nothing for the unchanged strip.
            strip = ids_of(found["a4cf12aa0001"])[("a4cf12aa0001-light-desk_strip", "Brightness")]
            fleet.change("hall-motion", motion="ON")  # a marker, reported after the re-read
            events.wait_for(is_value(ids_of(found["a4cf12aa0005"])[("a4cf12aa0005-binary_sensor-motion",
                                                                    "MotionDetected")]))
            assert events.matching(is_value(strip)) == []
            assert len(events.matching(is_value(lock))) == 1
            assert set(accessories(client)) == KEYS
        finally:
            events.close()


def test_homed_restarted_and_the_provider_stopped(homed, broker, fleet, processes):
    provider, client, found = ready(homed, broker, processes)
    client.close()
    homed.restart()  # in memory: everything registered anew, values from the provider's cache
    with homed.client() as client:
        found = wait_accessories(client, KEYS, provider, timeout=20)
        desk = ids_of(found["a4cf12aa0001"])
        wait_value(client, desk[("a4cf12aa0001-light-desk_strip", "Brightness")], 100, process=provider)
        assert get(homed, "radiator/TargetTemperature") == pytest.approx(20.5)
        code, out, err = homectl(homed, "set", "Default Room/Coffee plug/On", "true")
        assert code == 0, err
        provider.proc.terminate()
        assert provider.proc.wait(10) == 0
        wait_accessories(client, KEYS, None, reachable=False)


def test_accessories_no_longer_announced_are_removed_at_the_next_start(homed, broker, fleet, processes):
    provider, client, found = ready(homed, broker, processes)
    provider.proc.terminate()
    assert provider.proc.wait(10) == 0
    for topic in devices.GARDEN.configs:
        fleet.raw(topic, "", retain=True)  # cleared while the provider was away
    provider = start_provider(homed, broker.url, processes, "--forget-after", "0.5")
    with client:
        wait_for(lambda: set(accessories(client)) == KEYS - {"garden-socket"}, what="the garden socket removed",
                 process=provider)
        wait_log(provider, "removed 1 devices no longer announced: garden-socket")
        assert accessories(client)["A1B2C3"].id == found["A1B2C3"].id
