"""Tasmota's own discovery end to end: a real mosquitto, a real homed, the
provider as a process, and a fake Tasmota (fake_tasmota.py) announcing
itself with a config recorded in Home Assistant's Tasmota tests and sending
the states recorded there (tests/recorded/tasmota.json)."""

import json

import pytest

from homed import pb
from homed_testkit import EventLog, is_reachability

from . import recorded
from . import discovered_devices as devices
from .fake_tasmota import FakeTasmota
from .mqtt_helpers import (accessories, ids_of, start_provider, value_of, wait_accessories, wait_for, wait_log,
                           wait_value)

MAC = "00000049A3BC"
RELAY, LIGHT, AS_LIGHT = f"{MAC}_switch_relay_0", f"{MAC}_light_light_0", f"{MAC}_light_relay_0"


@pytest.fixture
def fakes():
    started = []
    try:
        yield started
    finally:
        for fake in started:
            fake.stop()


def tasmota(broker, fakes, scenario: str) -> FakeTasmota:
    """The device of a recorded scenario, its Status answers those recorded."""
    s = recorded.tasmota(scenario)
    answers = {topic.rsplit("STATUS", 1)[1]: payload for topic, payload in recorded.messages(s)
               if "/stat/STATUS" in topic}
    fake = FakeTasmota(broker.port, s["config"], s.get("sensors"), status_answers=answers)
    fakes.append(fake.start())
    return fake


def ready(homed, broker, processes, *extra, keys=(MAC,)):
    provider = start_provider(homed, broker.url, processes, "--no-shelly-discovery", *extra)
    client = homed.client()
    return provider, client, wait_accessories(client, set(keys), provider)


def write(client, values, timeout=10.0):
    return [(r.code, r.message) for r in client.write(values, timeout=timeout).results]


#: For each recorded scenario: its services and, message by message (the
#: LWT aside), what homed holds after it.
READINGS = {
    "relay": (["Switch"], [{(RELAY, "On"): True}, {(RELAY, "On"): False}, {(RELAY, "On"): True},
                           {(RELAY, "On"): False}]),
    "relay_as_light": (["Lightbulb"], [{(AS_LIGHT, "On"): True}, {(AS_LIGHT, "On"): False},
                                       {(AS_LIGHT, "On"): True}, {(AS_LIGHT, "On"): False}]),
    "light_ct": (["Lightbulb"], [
        {(LIGHT, "On"): True}, {(LIGHT, "On"): False}, {(LIGHT, "On"): True, (LIGHT, "Brightness"): 50},
        {(LIGHT, "ColorTemperature"): 300},
        # Tasmota says Color for a CT light too; it is not read.
        {(LIGHT, "ColorTemperature"): 300, (LIGHT, "Brightness"): 50}]),
    "light_rgbww": (["Lightbulb"], [
        {(LIGHT, "On"): True}, {(LIGHT, "On"): False}, {(LIGHT, "Brightness"): 50},
        {(LIGHT, "Hue"): 30, (LIGHT, "Saturation"): 100, (LIGHT, "Brightness"): 50},
        {(LIGHT, "Hue"): 30}, {(LIGHT, "ColorTemperature"): 300}, {(LIGHT, "ColorTemperature"): 300},
        {(LIGHT, "On"): True}, {(LIGHT, "On"): True}, {(LIGHT, "On"): False}]),
    "sensor_ds18b20": (["TemperatureSensor"], [
        {(f"{MAC}_sensor_sensor_DS18B20_Temperature", "CurrentTemperature"): 12.3},
        {(f"{MAC}_sensor_sensor_DS18B20_Temperature", "CurrentTemperature"): 23.4}]),
    "sensor_analog": (["LightSensor", "TemperatureSensor", "TemperatureSensor"], [
        {(f"{MAC}_sensor_sensor_ANALOG_Temperature1", "CurrentTemperature"): 1.2,
         (f"{MAC}_sensor_sensor_ANALOG_Temperature2", "CurrentTemperature"): 3.4,
         (f"{MAC}_sensor_sensor_ANALOG_Illuminance3", "CurrentAmbientLightLevel"): 5.6},
        {(f"{MAC}_sensor_sensor_ANALOG_Temperature1", "CurrentTemperature"): 7.8,
         (f"{MAC}_sensor_sensor_ANALOG_Temperature2", "CurrentTemperature"): 9.0,
         (f"{MAC}_sensor_sensor_ANALOG_Illuminance3", "CurrentAmbientLightLevel"): 1.2}]),
    "battery": (["BatteryService"], [
        {(f"{MAC}_status_sensor_battery_level", "BatteryLevel"): 55,
         (f"{MAC}_status_sensor_battery_level", "StatusLowBattery"): 0},
        {(f"{MAC}_status_sensor_battery_level", "BatteryLevel"): 50}]),
}


@pytest.mark.parametrize("scenario", sorted(READINGS))
def test_a_recorded_device_is_registered_and_read(homed, broker, fakes, processes, scenario):
    fake = tasmota(broker, fakes, scenario)
    provider, client, found = ready(homed, broker, processes)
    services, readings = READINGS[scenario]
    with client:
        accessory = found[MAC]
        assert (accessory.name, accessory.manufacturer, accessory.model, accessory.serial_number,
                accessory.firmware_revision) == ("Tasmota", "Tasmota", "Sonoff Basic", MAC, "8.4.0.2")
        assert sorted(s.type_name for s in accessory.services[1:]) == sorted(services)
        ids = ids_of(accessory)
        # Online (its retained LWT): asked for its state, as Tasmota's own integration asks.
        polls = {"sensor_ds18b20": "STATUS", "sensor_analog": "STATUS", "battery": "STATUS"}
        assert fake.wait_received(polls.get(scenario, "STATE")) in ("", "10", "11")
        played = [m for m in recorded.messages(recorded.tasmota(scenario)) if not m[0].endswith("/LWT")]
        assert len(played) == len(readings)
        for (topic, payload), expected in zip(played, readings):
            fake.play(topic, payload)
            for (service, characteristic), value in expected.items():
                wait_value(client, ids[(service, characteristic)], approx(value), process=provider)


def approx(value):
    return value if isinstance(value, bool) else pytest.approx(value)


def asked_as_writes(asked, ids):
    """What Home Assistant was asked, as the HAP writes that ask the same."""
    name, args = asked
    if "effect" in args:
        return None  # no HAP counterpart
    values = {}
    if name == "async_turn_off":
        return {ids["On"]: pb.Value(bool_value=False)}
    if "brightness" in args:
        values[ids["Brightness"]] = pb.Value(int_value=round(args["brightness"] * 100 / 255))
    if "hs_color" in args:
        values[ids["Hue"]] = pb.Value(float_value=args["hs_color"][0])
        values[ids["Saturation"]] = pb.Value(float_value=args["hs_color"][1])
    if "color_temp_kelvin" in args:
        values[ids["ColorTemperature"]] = pb.Value(int_value=round(1e6 / args["color_temp_kelvin"]))
    values[ids["On"]] = pb.Value(bool_value=True)
    return values


@pytest.mark.parametrize("scenario", ["relay_commands", "light_rgbww_commands", "dimmer_unlinked_commands"])
def test_writes_send_what_tasmotas_integration_sends_and_wait_for_its_state(homed, broker, fakes, processes,
                                                                             scenario):
    fake = tasmota(broker, fakes, scenario)
    provider, client, found = ready(homed, broker, processes)
    with client:
        fake.wait_received("STATE")
        service = found[MAC].services[1]
        ids = {c.type_name: c.id for c in service.characteristics}
        sent = 0
        for asked, (topic, payload) in recorded.commands(recorded.tasmota(scenario)):
            values = asked_as_writes(asked, ids)
            if values is None:
                continue
            # Acknowledged once the device's stat/RESULT says it (the fake answers as Tasmota does).
            assert write(client, values) == [(0, "")] * len(values), asked
            assert fake.wait_received(topic.rsplit("/", 1)[1]) == payload, asked
            sent += 1
        assert sent >= 2
        # A device that takes a command and says nothing: the write fails at the deadline, not applied.
        fake.answering = False
        state = value_of(client, ids["On"])
        [(code, message)] = write(client, {ids["On"]: pb.Value(bool_value=not state)})
        assert code == pb.DEADLINE_EXCEEDED
        assert message.startswith(f"device 'Tasmota' ({MAC}) did not echo On = {not state} within 1.5 s of "
                                  "tasmota_49A3BC/cmnd/")
        assert value_of(client, ids["On"]) == state


def test_lwt_says_reachability_and_either_side_restarts(homed, broker, fakes, processes):
    fake = tasmota(broker, fakes, "light_ct")
    provider, client, found = ready(homed, broker, processes)
    with client:
        fake.wait_received("STATE")
        fake.play("tasmota_49A3BC/tele/STATE", '{"POWER":"ON","Dimmer":50}')
        ids = ids_of(found[MAC])
        wait_value(client, ids[(LIGHT, "Brightness")], 50, process=provider)
        accessory_id = found[MAC].id
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            fake.lwt(False)
            events.wait_for(is_reachability(accessory_id, False))
            fake.lwt(True)
            events.wait_for(is_reachability(accessory_id, True))
            assert fake.wait_received("STATE") == ""  # online again: asked again
            # The device loses power: its will; back a second later, it announces itself again.
            fake.drop_connection()
            events.wait_for(is_reachability(accessory_id, False), timeout=10)
            events.wait_for(is_reachability(accessory_id, True), count=2, timeout=10)
        finally:
            events.close()
        # The provider restarted: the same accessory, read again from the device.
        provider.proc.terminate()
        assert provider.proc.wait(10) == 0
        wait_accessories(client, {MAC}, None, reachable=False)
        fake.state["Dimmer"] = 70  # changed meanwhile
        provider = start_provider(homed, broker.url, processes, "--no-shelly-discovery")
        again = wait_accessories(client, {MAC}, provider)
        assert again[MAC].id == accessory_id
        wait_value(client, ids[(LIGHT, "Brightness")], 70, process=provider)
    # homed restarted (in memory): registered anew, with the provider's values.
    homed.restart()
    with homed.client() as client:
        found = wait_accessories(client, {MAC}, provider, timeout=20)
        wait_value(client, ids_of(found[MAC])[(LIGHT, "Brightness")], 70, process=provider)
        assert write(client, {ids_of(found[MAC])[(LIGHT, "On")]: pb.Value(bool_value=False)}) == [(0, "")]
        assert fake.wait_received("Backlog") == "NoDelay;Power1 OFF"


def test_a_config_of_another_version_is_left_out_and_the_rest_registered(homed, broker, fakes, fleet, processes):
    fake = tasmota(broker, fakes, "relay")
    config = recorded.tasmota("relay")["config"]
    # A firmware whose discovery this provider does not know (its version), and garbage.
    fake.raw(f"tasmota/discovery/{MAC}/config", json.dumps({**config, "ver": 2}), retain=True)
    fake.raw("tasmota/discovery/0000004A5B6C/config", "{not json", retain=True)
    fake.raw("tasmota/discovery/00:00:00/config", "{}", retain=True)
    provider = start_provider(homed, broker.url, processes, "--no-shelly-discovery")
    with homed.client() as client:
        wait_accessories(client, devices.KEYS, provider)  # the rest: every device of the fleet
        log = wait_log(provider, f"tasmota/discovery/{MAC}/config: Tasmota device {MAC} ('Tasmota') refused: "
                                 "discovery version 2 is not one this provider reads (it reads 1); left out (the "
                                 "others are registered)")
        assert "tasmota/discovery/0000004A5B6C/config: config not JSON" in log
        assert ("tasmota/discovery/00:00:00/config: not a Tasmota discovery topic (tasmota/discovery/<MAC>/config "
                "or sensors); ignored") in log
        assert MAC not in accessories(client)
        # The same device announced as its firmware does: registered; then an unknown version keeps it as it was.
        fake.raw(f"tasmota/discovery/{MAC}/config", json.dumps(config), retain=True)
        found = wait_accessories(client, {MAC}, provider)
        fake.raw(f"tasmota/discovery/{MAC}/config", json.dumps({**config, "ver": 3}), retain=True)
        wait_log(provider, "discovery version 3 is not one this provider reads (it reads 1); keeping it as it was")
        assert accessories(client)[MAC].id == found[MAC].id
        # Cleared (an empty retained config, as a Tasmota that stops announcing itself): removed.
        fake.raw(f"tasmota/discovery/{MAC}/config", "", retain=True)
        wait_for(lambda: MAC not in accessories(client), what="the Tasmota removed", process=provider)
        assert provider.proc.poll() is None
