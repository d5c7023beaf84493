"""Shelly Gen2+ over MQTT end to end: a real mosquitto, a real homed, the
provider as a process, and fake Shellys (fake_shelly.py) answering JSON-RPC
with the answers recorded from real devices by aioshelly and Home
Assistant (tests/recorded/shelly.json)."""

import pytest

from homed import pb
from homed_testkit import EventLog, is_reachability, is_value, plain

from . import recorded
from .fake_shelly import FakeShelly
from .mqtt_helpers import (accessories, ids_of, start_provider, value_of, wait_accessories, wait_for, wait_log,
                           wait_value)

PLUS_1PM, PRO_4PM, MINI = "shelly:shellyplus1pm-aabbccddeeff", "shelly:shellypro4pm-aabbccddeeff", \
    "shelly:shelly1minig4-aabbccddeeff"
DISPLAY, BULB, COVER = "shelly:ShellyWallDisplay-AABBCCDDEEFF", "shelly:shellyduobulbg3-aabbccddeeff", \
    "shelly:shelly2pmg3-aabbccddeeff"
BULB_PREFIX, COVER_PREFIX = "shellies-gen3/shelly-duo-bulb-gen3-aabbccdd", "shellies-gen3/shelly-2pm-gen3-365730"


@pytest.fixture
def fakes():
    started = []
    try:
        yield started
    finally:
        for fake in started:
            fake.stop()


def shelly(broker, fakes, device: str) -> FakeShelly:
    fake = FakeShelly(broker.port, recorded.shelly(device), error=recorded.shelly_frame("error")["error"])
    fakes.append(fake)
    return fake


def start(fakes):
    for fake in fakes:
        fake.start()


def ready(homed, broker, processes, keys, *extra):
    """The provider with the two devices whose prefixes are not their ids named."""
    provider = start_provider(homed, broker.url, processes, "--shelly", BULB_PREFIX, "--shelly", COVER_PREFIX,
                              *extra)
    client = homed.client()
    return provider, client, wait_accessories(client, set(keys), provider)


def write(client, values, timeout=10.0):
    return [(r.code, r.message) for r in client.write(values, timeout=timeout).results]


def services(accessory):
    return [(s.type_name, s.name) for s in accessory.services[1:]]


def test_devices_are_asked_what_they_are_and_registered_with_their_status(homed, broker, fakes, processes):
    for device in ("plus_1pm", "pro_4pm", "wall_display", "duo_bulb_gen3", "2pm_gen3_cover", "mini_1_gen4"):
        shelly(broker, fakes, device)
    start(fakes)
    provider, client, found = ready(homed, broker, processes, {PLUS_1PM, PRO_4PM, DISPLAY, BULB, COVER, MINI})
    with client:
        # Its id's prefix, found by its online topic; a light by its consumption type.
        plus = found[PLUS_1PM]
        assert (plus.name, plus.manufacturer, plus.model, plus.firmware_revision, plus.serial_number) == (
            "Test Name", "Shelly", "SNSW-001P16EU", "1.1.0", "AABBCCDDEEFF")
        assert services(plus) == [("Lightbulb", "Switch Test Name 0")]
        assert services(found[PRO_4PM]) == [("Switch", f"switch {n}") for n in range(4)]
        assert services(found[MINI]) == [("Switch", "Shelly 1 Mini Gen4 [DDEEFF]")]
        assert services(found[DISPLAY]) == [("Switch", "switch 0"), ("HumiditySensor", "Test Name"),
                                            ("LightSensor", "Test Name"), ("TemperatureSensor", "Test Name")]
        assert services(found[BULB]) == [("Lightbulb", "Living room lamp")]
        assert services(found[COVER]) == [("WindowCovering", "Test Name")]
        # Values from its Shelly.GetStatus answer.
        display = ids_of(found[DISPLAY])
        key = "ShellyWallDisplay-AABBCCDDEEFF"
        assert value_of(client, display[(f"{key}-temperature:0", "CurrentTemperature")]) == pytest.approx(21.3)
        assert value_of(client, display[(f"{key}-humidity:0", "CurrentRelativeHumidity")]) == 44
        assert value_of(client, display[(f"{key}-illuminance:0", "CurrentAmbientLightLevel")]) == pytest.approx(30)
        bulb = ids_of(found[BULB])
        lamp = "shellyduobulbg3-aabbccddeeff-cct:0"
        assert (value_of(client, bulb[(lamp, "On")]), value_of(client, bulb[(lamp, "Brightness")]),
                value_of(client, bulb[(lamp, "ColorTemperature")])) == (False, 5, 370)  # 2700 K
        cover = ids_of(found[COVER])
        blind = "shelly2pmg3-aabbccddeeff-cover:0"
        assert (value_of(client, cover[(blind, "CurrentPosition")]), value_of(client, cover[(blind, "TargetPosition")]),
                value_of(client, cover[(blind, "PositionState")])) == (100, 100, 2)
        # What is left out, one line each device.
        log = wait_log(provider, "Shelly 'Test Name' (shelly:ShellyWallDisplay-AABBCCDDEEFF, "
                                 "ShellyWallDisplay-AABBCCDDEEFF): left out: input:0 (a switch input, not a button) "
                                 "and thermostat:0 (not a component this provider maps)")
        assert ("(shelly:shellypro4pm-aabbccddeeff, shellypro4pm-aabbccddeeff): left out: input:0 (a switch input, "
                "not a button), input:1 (a switch input, not a button), input:2 (a switch input, not a button) and "
                "input:3 (a switch input, not a button)") in log


def test_writes_are_rpc_calls_confirmed_by_the_device_state(homed, broker, fakes, processes):
    pro, bulb, blind = (shelly(broker, fakes, d) for d in ("pro_4pm", "duo_bulb_gen3", "2pm_gen3_cover"))
    start(fakes)
    provider, client, found = ready(homed, broker, processes, {PRO_4PM, BULB, COVER})
    with client:
        relays = ids_of(found[PRO_4PM])
        relay = relays[("shellypro4pm-aabbccddeeff-switch:2", "On")]
        assert write(client, {relay: pb.Value(bool_value=True)}) == [(0, "")]
        call = pro.wait_call("Switch.Set")
        assert call["params"] == {"id": 2, "on": True}
        assert call["src"] == "homed-mqtt-devices/homed-mqtt/shelly/shellypro4pm-aabbccddeeff/switch:2"
        assert value_of(client, relay) is True
        # A light's on and brightness in one call; its white in kelvin.
        lamp = ids_of(found[BULB])
        cct = "shellyduobulbg3-aabbccddeeff-cct:0"
        assert write(client, {lamp[(cct, "On")]: pb.Value(bool_value=True),
                              lamp[(cct, "Brightness")]: pb.Value(int_value=60)}) == [(0, ""), (0, "")]
        assert bulb.wait_call("CCT.Set")["params"] == {"id": 0, "on": True, "brightness": 60}
        assert write(client, {lamp[(cct, "ColorTemperature")]: pb.Value(int_value=250)}) == [(0, "")]
        assert bulb.wait_call("CCT.Set")["params"] == {"id": 0, "ct": 4000}
        # A calibrated cover goes to a position: acknowledged once it moves, then it is there.
        cover = ids_of(found[COVER])
        shade = "shelly2pmg3-aabbccddeeff-cover:0"
        assert write(client, {cover[(shade, "TargetPosition")]: pb.Value(int_value=40)}) == [(0, "")]
        assert blind.wait_call("Cover.GoToPosition")["params"] == {"id": 0, "pos": 40}
        wait_value(client, cover[(shade, "CurrentPosition")], 40, process=provider)
        assert write(client, {cover[(shade, "HoldPosition")]: pb.Value(bool_value=True)}) == [(0, "")]
        assert blind.wait_call("Cover.Stop")["params"] == {"id": 0}
        # Without NotifyStatus (rpc_ntf off): the component's GetStatus after the call confirms it.
        pro.mode = "quiet"
        pro.forget_calls()
        other = relays[("shellypro4pm-aabbccddeeff-switch:3", "On")]
        assert write(client, {other: pb.Value(bool_value=True)}) == [(0, "")]
        assert pro.wait_call("Switch.GetStatus")["params"] == {"id": 3}
        # A device that answers the call and keeps its state: not confirmed, not applied.
        pro.mode = "ignores"
        stuck = relays[("shellypro4pm-aabbccddeeff-switch:1", "On")]
        [(code, message)] = write(client, {stuck: pb.Value(bool_value=True)})
        assert code == pb.DEADLINE_EXCEEDED
        assert message == ("device 'Test Name' (shelly:shellypro4pm-aabbccddeeff) did not echo On = True within 1.5 s "
                           "of shellypro4pm-aabbccddeeff/rpc")
        assert value_of(client, stuck) is False


def test_button_inputs_are_pressed_once_each(homed, broker, fakes, processes):
    display = shelly(broker, fakes, "wall_display_xl")
    start(fakes)
    provider, client, found = ready(homed, broker, processes, {DISPLAY})
    with client:
        assert services(found[DISPLAY]) == [
            ("Switch", "ShellyWallDisplay-AABBCCDDEEFF"), ("HumiditySensor", "ShellyWallDisplay-AABBCCDDEEFF"),
            ("LightSensor", "ShellyWallDisplay-AABBCCDDEEFF"), ("StatelessProgrammableSwitch", "Input 0"),
            ("StatelessProgrammableSwitch", "Input 3"), ("StatelessProgrammableSwitch", "Input 4"),
            ("TemperatureSensor", "ShellyWallDisplay-AABBCCDDEEFF")]
        ids = ids_of(found[DISPLAY])
        key = "ShellyWallDisplay-AABBCCDDEEFF"
        buttons = {n: ids[(f"{key}-input:{n}", "ProgrammableSwitchEvent")] for n in (0, 3, 4)}
        # Its sensors report errors (a driver missing): no reading is taken, said once.
        log = wait_log(provider, f"device {'shelly:' + key}, entity {key}-temperature:0: state reports errors "
                                 "['Sensor driver missing from firmware']; ignored")
        assert value_of(client, ids[(f"{key}-illuminance:0", "CurrentAmbientLightLevel")]) == pytest.approx(120)
        assert ("left out: input:1 (a switch input, not a button), input:2 (a switch input, not a button), media (not "
                "a component this provider maps) and devicepower:0 (no battery)") in log
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            display.press("input:3", "single_push")
            display.press("input:3", "single_push")  # the same press again: told again
            display.press("input:0", "double_push")
            display.press("input:4", "long_push")
            display.press("input:1", "single_push")  # a switch input: no button
            display.press("input:4", "triple_push")  # no HAP event for it
            display.notify("illuminance:0", {"lux": 90})  # a marker after the presses
            events.wait_for(is_value(ids[(f"{key}-illuminance:0", "CurrentAmbientLightLevel")]))
            presses = [(e.value.characteristic_id, plain(e.value.value)) for _, e in events.events
                       if e.kind == pb.EVENT_VALUE_CHANGED and e.value.characteristic_id in buttons.values()]
            assert presses == [(buttons[3], 0), (buttons[3], 0), (buttons[0], 1), (buttons[4], 2)]
        finally:
            events.close()


def test_online_says_reachability_and_either_side_restarts(homed, broker, fakes, processes):
    pro = shelly(broker, fakes, "pro_4pm")
    start(fakes)
    provider, client, found = ready(homed, broker, processes, {PRO_4PM})
    with client:
        accessory_id = found[PRO_4PM].id
        relay = ids_of(found[PRO_4PM])[("shellypro4pm-aabbccddeeff-switch:0", "On")]
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            pro.online(False)
            events.wait_for(is_reachability(accessory_id, False))
            pro.status["switch:0"]["output"] = True  # changed while away
            pro.online(True)
            events.wait_for(is_reachability(accessory_id, True))
            wait_value(client, relay, True, process=provider)  # asked again when it came back
            pro.drop_connection()  # its will, then it connects again
            events.wait_for(is_reachability(accessory_id, False), timeout=10)
            events.wait_for(is_reachability(accessory_id, True), count=2, timeout=10)
        finally:
            events.close()
        provider.proc.terminate()
        assert provider.proc.wait(10) == 0
        wait_accessories(client, {PRO_4PM}, None, reachable=False)
        pro.status["switch:0"]["output"] = False
        provider, _, again = ready(homed, broker, processes, {PRO_4PM})
        assert again[PRO_4PM].id == accessory_id
        wait_value(client, relay, False, process=provider)
    homed.restart()
    with homed.client() as client:
        found = wait_accessories(client, {PRO_4PM}, provider, timeout=20)
        relay = ids_of(found[PRO_4PM])[("shellypro4pm-aabbccddeeff-switch:0", "On")]
        assert write(client, {relay: pb.Value(bool_value=True)}) == [(0, "")]
        assert pro.wait_call("Switch.Set")["params"] == {"id": 0, "on": True}


def test_an_rpc_error_and_unknown_components_leave_out_only_what_they_concern(homed, broker, fakes, processes):
    blind = shelly(broker, fakes, "2pm_gen3_cover")
    blind.refusing = {"Shelly.GetConfig", "Cover.GoToPosition"}  # as a device with authentication on answers
    gateway = FakeShelly(broker.port, recorded.shelly("blu_gateway_gen3"))
    fakes.append(gateway)
    pro = shelly(broker, fakes, "pro_4pm")
    start(fakes)
    provider = start_provider(homed, broker.url, processes, "--shelly", COVER_PREFIX, "--shelly",
                              "shellies-gen3/shelly-blu-gateway-gen3-78742c", "--shelly", "nobody/here")
    with homed.client() as client:
        found = wait_accessories(client, {COVER, PRO_4PM}, provider)
        # One line: the device, its error, and what is left out for it (without its config:
        # named after the device, its inputs left out).
        log = wait_log(provider, f"WARNING homed-mqtt-devices: Shelly 'Test Name' ({COVER}, {COVER_PREFIX}): "
                                 "Shelly.GetConfig answered error 401: {\"auth_type\": \"digest\"")
        [line] = [line for line in log.splitlines() if "Shelly.GetConfig answered" in line]
        assert line.endswith("; registered without its config (its components' names and its inputs' types); left "
                             "out: input:0 (its type is unknown without the device's config), input:1 (its type is "
                             "unknown without the device's config) and number:200 (not a component this provider "
                             "maps)")
        assert services(found[COVER]) == [("WindowCovering", "Test Name")]
        wait_log(provider, "WARNING homed-mqtt-devices: Shelly 'Shelly BLU Gateway Gen3 [DDEEFF]' "
                           "(shelly:shellyblugwg3-aabbccddeeff, shellies-gen3/shelly-blu-gateway-gen3-78742c): none of "
                           "its components has a HAP counterpart; not registered; left out: blutrv:200 (not a "
                           "component this provider maps)")
        assert set(accessories(client)) == {COVER, PRO_4PM}
        # A write the device refuses fails at once, with the device's words.
        shade = ids_of(found[COVER])[("shelly2pmg3-aabbccddeeff-cover:0", "TargetPosition")]
        [(code, message)] = write(client, {shade: pb.Value(int_value=30)})
        assert code == pb.PERMISSION_DENIED
        assert message.startswith(f"device {COVER}: Cover.GoToPosition answered error 401: ")
        # The rest works.
        relay = ids_of(found[PRO_4PM])[("shellypro4pm-aabbccddeeff-switch:0", "On")]
        assert write(client, {relay: pb.Value(bool_value=True)}) == [(0, "")]
        assert provider.proc.poll() is None
        assert wait_for(lambda: pro.status["switch:0"]["output"] is True)
