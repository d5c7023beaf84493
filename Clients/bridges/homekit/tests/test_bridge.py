"""The bridge between a real homed and aiohomekit on loopback: the accessory
database, reads, writes and their errors, events, "No Response", layout
changes, the exposure filter and more accessories than one bridge takes."""

import asyncio
import json
import os
import sys

import pytest

from .bridge_kit import (BRIGHTNESS, CUSTOM_TYPE, ON, PRESS, REPLY, REPO, RUNTIME, SENSOR, TEMPERATURE, WARMTH,
                        BridgeProcess, TestDevices, placement, value_of)
from homed import pb
from homed_testkit import EventLog, ProviderProcess, is_value
from homed_testkit.providers import wait_for

HOST = "127.0.0.1"
APPLE = "-0000-1000-8000-0026BB765291"


@pytest.fixture
def paired(homed, devices, processes, workdir, controllers):
    bridge = BridgeProcess(workdir, homed.socket_path).start(processes)
    controller = controllers()
    controller.pair(HOST, bridge.port, bridge.pincode())
    return bridge, controller


def at(bridge, devices, ref):
    key = ref[0]
    return placement(bridge, devices.accessory_id(key), devices.id_of(ref))


def by_iid(accessories, aid):
    accessory = next(a for a in accessories if a["aid"] == aid)
    return {c["iid"]: c for s in accessory["services"] for c in s["characteristics"]}, accessory


def test_the_accessory_database_has_homed_types_ids_and_metadata(paired, devices):
    bridge, controller = paired
    accessories = controller.accessories()
    assert [a["aid"] for a in accessories] == [1, 2, 3, 4]  # the bridge, then homed's accessories by id
    aid, on_iid = at(bridge, devices, ON)
    chars, lamp = by_iid(accessories, aid)
    info = lamp["services"][0]
    assert info["iid"] == 1 and info["type"] == f"0000003E{APPLE}"
    assert {c["type"] for c in info["characteristics"]} >= {f"00000014{APPLE}", f"00000023{APPLE}"}
    light = lamp["services"][1]
    assert light["type"] == f"00000043{APPLE}" and light["primary"] is True
    # A service homed marks hidden is hidden in HomeKit too; the others carry no flag.
    driver = lamp["services"][2]
    assert driver["type"] == f"0000008A{APPLE}" and driver["hidden"] is True
    assert "hidden" not in info and "hidden" not in light
    assert chars[on_iid]["type"] == f"00000025{APPLE}" and chars[on_iid]["format"] == "bool"
    assert set(chars[on_iid]["perms"]) == {"pr", "pw", "ev"} and chars[on_iid]["value"] is False
    brightness = chars[at(bridge, devices, BRIGHTNESS)[1]]
    assert (brightness["minValue"], brightness["maxValue"], brightness["unit"], brightness["value"]) == (
        0, 100, "percentage", 40)
    warmth = chars[at(bridge, devices, WARMTH)[1]]
    assert warmth["type"] == CUSTOM_TYPE and warmth["description"] == "Warmth" and warmth["format"] == "uint8"
    assert (warmth["minValue"], warmth["maxValue"], warmth["minStep"], warmth["value"]) == (0, 50, 5, 10)
    button_aid, press_iid = at(bridge, devices, PRESS)
    press = by_iid(accessories, button_aid)[0][press_iid]
    assert press["type"] == f"00000073{APPLE}" and press["value"] is None  # a button reads as null
    # Identify is write-only: a read gets HAP's -70405.
    identify = next(c["iid"] for c in info["characteristics"] if c["type"] == f"00000014{APPLE}")
    assert controller.get([(aid, identify)])[(aid, identify)]["status"] == -70405
    # Stable: the same ids in the database and in the persisted table.
    assert bridge.ids()["accessories"][str(devices.accessory_id("lamp"))]["aid"] == aid


def test_a_write_reaches_the_device_through_homed_with_the_bridge_as_origin(homed, paired, devices):
    bridge, controller = paired
    log = EventLog(homed.socket_path, pb.SubscribeRequest(filter=pb.SubscriptionFilter(
        characteristic_ids=[devices.id_of(BRIGHTNESS)])))
    try:
        log.wait_subscribed()
        aid, iid = at(bridge, devices, BRIGHTNESS)
        assert controller.put([(aid, iid, 70)]) == {}
        devices.wait_write(BRIGHTNESS, 70)
        (_, event), = log.wait_for(is_value(devices.id_of(BRIGHTNESS)))
        assert event.value.value.int_value == 70
        assert (event.origin.kind, event.origin.name) == (pb.ORIGIN_CLIENT, "homekit-bridge")
        assert controller.get([(aid, iid)])[(aid, iid)]["value"] == 70
    finally:
        log.close()


def test_bad_writes_get_the_hap_status_a_controller_expects_and_a_log_line(homed, paired, devices):
    bridge, controller = paired
    aid, on = at(bridge, devices, ON)
    _, brightness = at(bridge, devices, BRIGHTNESS)
    sensor_aid, temperature = at(bridge, devices, TEMPERATURE)
    # The wrong type: refused by the bridge, never sent on.
    assert controller.put([(aid, on, "yes")])[(aid, on)]["status"] == -70410
    bridge.wait_log("HomeKit write to Desk Lamp / On (aid 2")
    # Out of range: refused by homed's validation.
    assert controller.put([(aid, brightness, 150)])[(aid, brightness)]["status"] == -70410
    bridge.wait_log("HomeKit write of 150 to Desk Lamp / Brightness")
    # Read-only.
    assert controller.put([(sensor_aid, temperature, 20.0)])[(sensor_aid, temperature)]["status"] == -70404
    bridge.wait_log("Cellar Sensor / CurrentTemperature")
    # No such characteristic.
    answer = controller.put_raw({"characteristics": [{"aid": aid, "iid": 999, "value": True}]})
    assert answer["characteristics"] == [{"aid": aid, "iid": 999, "status": -70409}]
    # A batch: the good item is applied, the bad one refused.
    answer = controller.put([(aid, on, True), (aid, brightness, "bright")])
    assert answer[(aid, on)]["status"] == 0 and answer[(aid, brightness)]["status"] == -70410
    devices.wait_write(ON, True)
    assert [value for ref, value in devices.writes if ref == BRIGHTNESS] == []
    with homed.client() as client:
        assert value_of(client, devices.id_of(BRIGHTNESS)) == 40
    # The device refusing: its status, as HAP's.
    devices.refuse = (pb.UNAVAILABLE, "the lamp's radio is off")
    assert controller.put([(aid, brightness, 10)])[(aid, brightness)]["status"] == -70402
    bridge.wait_log("the lamp's radio is off")


def test_homed_value_events_reach_the_controller_at_once_and_presses_are_never_merged(paired, devices):
    bridge, controller = paired
    brightness = at(bridge, devices, BRIGHTNESS)
    press = at(bridge, devices, PRESS)
    temperature = at(bridge, devices, TEMPERATURE)
    controller.subscribe([brightness, press, temperature])
    devices.provider.report({BRIGHTNESS: 77, TEMPERATURE: 14.0})
    assert controller.wait_values(brightness) == [77]
    assert controller.wait_values(temperature) == [14.0]
    # Five presses in one report (one commit: homed sends them together), then
    # three more as fast as the device reports them: every one an event, in order.
    devices.provider.report([(PRESS, 0), (PRESS, 0), (PRESS, 1), (PRESS, 2), (PRESS, 0)])
    for kind in (1, 1, 0):
        devices.provider.report({PRESS: kind})
    assert controller.wait_values(press, count=8) == [0, 0, 1, 2, 0, 1, 1, 0]


def test_the_writer_gets_no_event_of_its_own_write_even_when_homed_tells_it_first(homed, paired, devices,
                                                                                 controllers):
    bridge, owner = paired
    guest = controllers()
    guest.pair_as_guest_of(owner, HOST, bridge.port)
    brightness = at(bridge, devices, BRIGHTNESS)
    owner.subscribe([brightness])
    guest.subscribe([brightness])
    # The device reports the value before it answers: homed's event of it
    # reaches the bridge before homed's answer to the write.
    devices.report_first = True
    # put_raw: aiohomekit's put_characteristics tells its own listeners of what it wrote.
    assert owner.put_raw({"characteristics": [{"aid": brightness[0], "iid": brightness[1], "value": 66}]}) == {}
    assert guest.wait_values(brightness) == [66]
    devices.report_first = False
    devices.provider.report({BRIGHTNESS: 12})
    assert guest.wait_values(brightness, count=2) == [66, 12]
    assert owner.wait_values(brightness) == [12]
    # A write as iOS sends a bool (1): the others get the value as homed stored it.
    on = at(bridge, devices, ON)
    guest.subscribe([on])
    assert owner.put_raw({"characteristics": [{"aid": on[0], "iid": on[1], "value": 1}]}) == {}
    [value] = guest.wait_values(on)
    assert value is True
    assert owner.get([on]) == {on: {"value": True}}


def test_a_characteristic_without_events_is_read_from_homed(paired, devices):
    """homed streams only what supports events: the others are asked of homed
    at each read, so a read is never stale."""
    bridge, controller = paired
    runtime = at(bridge, devices, RUNTIME)
    assert controller.get([runtime])[runtime] == {"value": 0}
    devices.provider.report({RUNTIME: 3600})
    assert controller.get([runtime])[runtime] == {"value": 3600}


def test_a_write_asking_for_its_response_is_answered_with_homeds_value_once_confirmed(paired, devices):
    bridge, controller = paired
    reply, brightness = at(bridge, devices, REPLY), at(bridge, devices, BRIGHTNESS)
    chars, _ = by_iid(controller.accessories(), reply[0])
    assert set(chars[reply[1]]["perms"]) == {"pr", "pw", "wr"}

    def put(key, value, **extra):
        return controller.put_raw({"characteristics": [{"aid": key[0], "iid": key[1], "value": value, **extra}]})
    # "r" on a "wr" characteristic: a 207 whose item carries the value.
    assert put(reply, "hi", r=True) == {"characteristics": [
        {"aid": reply[0], "iid": reply[1], "status": 0, "value": "hi"}]}
    devices.wait_write(REPLY, "hi")
    # Without "r", or "r" on a characteristic without "wr": no value (204).
    assert put(reply, "ho") == {}
    devices.wait_write(REPLY, "ho")
    assert put(brightness, 20, r=True) == {}
    devices.wait_write(BRIGHTNESS, 20)
    # A refused write answers its status, no value.
    devices.refuse = (pb.INVALID_ARGUMENT, "not a reply the device takes")
    assert put(reply, "no", r=True) == {"characteristics": [
        {"aid": reply[0], "iid": reply[1], "status": -70410}]}


def test_an_accessory_whose_provider_is_gone_answers_no_response(homed, paired, devices):
    bridge, controller = paired
    on = at(bridge, devices, ON)
    devices.stop()
    bridge.wait_log("Desk Lamp is unreachable")
    assert controller.get([on])[on]["status"] == -70402
    assert controller.put([(*on, True)])[on]["status"] == -70402
    bridge.wait_log("HomeKit write of True to Desk Lamp / On")
    back = TestDevices(homed.socket_path).start()
    try:
        bridge.wait_log("Desk Lamp is reachable again")
        assert controller.get([on])[on] == {"value": False}
    finally:
        back.stop()


def test_a_write_to_an_accessory_homed_marks_unreachable_answers_no_response(homed, paired, devices):
    """README: an unreachable accessory answers -70402 to reads and writes. Its
    provider is connected and says the lamp does not answer: the controller's
    write is refused by the bridge, logged, and never sent to the device."""
    bridge, controller = paired
    on = at(bridge, devices, ON)
    brightness = at(bridge, devices, BRIGHTNESS)
    devices.provider.set_reachable("lamp", False)
    bridge.wait_log("Desk Lamp is unreachable")
    assert controller.get([on])[on]["status"] == -70402
    answer = controller.put([(*on, True), (*brightness, 80)])
    assert answer[on]["status"] == -70402 and answer[brightness]["status"] == -70402
    bridge.wait_log("HomeKit write of True to Desk Lamp / On (aid 2")
    assert "the accessory is unreachable in homed" in bridge.log()
    with devices.cond:
        assert devices.writes == []
    with homed.client() as client:
        assert value_of(client, devices.id_of(ON)) is False
    # Reachable again: reads and writes as before.
    devices.provider.set_reachable("lamp", True)
    bridge.wait_log("Desk Lamp is reachable again")
    assert controller.put([(*on, True)]) == {}
    devices.wait_write(ON, True)
    assert controller.get([on])[on] == {"value": True}


def test_layout_changes_update_the_database_and_its_configuration_number(homed, paired, devices):
    bridge, controller = paired
    before = bridge.hap_state()["config_version"]
    lamp_id = devices.accessory_id("lamp")
    lamp_aid, _ = at(bridge, devices, ON)
    sensor_aid, _ = at(bridge, devices, TEMPERATURE)
    with homed.client() as client:
        client.call("ChangeLayout", pb.LayoutRequest(rename=pb.RenameObject(id=lamp_id, name="Reading Lamp")))
    wait_for(lambda: bridge.hap_state()["config_version"] > before, what="a new configuration number")
    assert "Reading Lamp" in [c.get("value") for c in by_iid(controller.accessories(), lamp_aid)[0].values()]
    renamed = bridge.hap_state()["config_version"]
    devices.provider.remove(["sensor"])
    wait_for(lambda: sensor_aid not in [a["aid"] for a in controller.accessories()], what="the sensor gone")
    assert bridge.hap_state()["config_version"] > renamed
    removed = bridge.hap_state()["config_version"]
    # Registered anew it is a new accessory for homed (a new id), so a new aid.
    devices.provider.update([SENSOR])
    wait_for(lambda: len(controller.accessories()) == 4, what="the sensor back")
    assert bridge.hap_state()["config_version"] > removed
    aids = [a["aid"] for a in controller.accessories()]
    assert lamp_aid in aids and sensor_aid not in aids and max(aids) == 5


def test_only_the_configured_rooms_and_accessories_are_shown(homed, devices, processes, workdir, controllers):
    config = os.path.join(workdir, "homekit.toml")
    with open(config, "w") as f:
        f.write('[expose]\nrooms = ["Office"]\naccessories = ["Default Room/Wall Button"]\n')
    bridge = BridgeProcess(workdir, homed.socket_path, extra=["--config", config]).start(processes)
    controller = controllers()
    controller.pair(HOST, bridge.port, bridge.pincode())
    button_aid, _ = at(bridge, devices, PRESS)
    assert [a["aid"] for a in controller.accessories()] == [1, button_aid]  # no room "Office" yet
    with homed.client() as client:
        home_id = client.get_home().homes[0].id
        room = client.call("ChangeLayout", pb.LayoutRequest(add_room=pb.AddRoom(home_id=home_id, name="Office")))
        client.call("ChangeLayout", pb.LayoutRequest(assign_accessory=pb.AssignAccessory(
            accessory_id=devices.accessory_id("lamp"), room_id=room.created_id)))
    wait_for(lambda: len(controller.accessories()) == 3, what="the lamp shown once in the Office")
    assert "Cellar Sensor" not in str(controller.accessories())


def test_more_accessories_than_a_bridge_takes_are_spread_over_bridges(homed, devices, processes, workdir,
                                                                       controllers):
    bridge = BridgeProcess(workdir, homed.socket_path, extra=["--max-per-bridge", "2"]).start(processes)
    bridge.wait_log("HomeKit bridge 'homed Bridge 2' listening on port %d" % (bridge.port + 1))
    first, second = controllers(), controllers()
    first.pair(HOST, bridge.port, bridge.pincode(0))
    try:
        second.pair(HOST, bridge.port + 1, bridge.pincode(1))
    except Exception:
        print(bridge.log(), open(bridge.state_dir + "/setup.json").read())
        raise
    assert [a["aid"] for a in first.accessories()] == [1, 2, 3]
    assert [a["aid"] for a in second.accessories()] == [1, 2]
    aid, iid = at(bridge, devices, TEMPERATURE)
    assert bridge.ids()["accessories"][str(devices.accessory_id("sensor"))]["bridge"] == 1
    assert second.get([(aid, iid)])[(aid, iid)] == {"value": 12.5}


def test_a_provider_killed_mid_write_answers_no_response(homed, processes, workdir, controllers):
    """A real provider process (Clients/python/tests/provider_fixture.py) whose
    device never confirms, killed with SIGKILL while a controller's write waits."""
    spec = [{"key": "plug", "name": "Plug", "category": "OUTLET", "services": [{"type": "Outlet", "characteristics": [
        {"type": "On"}, {"type": "OutletInUse"}]}]}]
    state = [["plug", "Outlet", "On", False], ["plug", "Outlet", "OutletInUse", False]]
    for name, data in (("plug.spec.json", spec), ("plug.state.json", state)):
        with open(os.path.join(workdir, name), "w") as f:
            json.dump(data, f)
    fixture = str(REPO / "Clients" / "python" / "tests" / "provider_fixture.py")
    provider = ProviderProcess([sys.executable, fixture, "--socket", homed.socket_path, "--id", "plugs",
                                "--spec", os.path.join(workdir, "plug.spec.json"),
                                "--state", os.path.join(workdir, "plug.state.json"), "--stall-writes"],
                               os.path.join(workdir, "plugs.log"))
    processes.append(provider)
    registered = provider.start().expect("registered", timeout=10)
    bridge = BridgeProcess(workdir, homed.socket_path).start(processes)
    controller = controllers()
    controller.pair(HOST, bridge.port, bridge.pincode())
    on = placement(bridge, registered["accessories"]["plug"], registered["ids"]["plug|Outlet|On"])
    pending = asyncio.run_coroutine_threadsafe(controller.pairing.put_characteristics([(*on, True)]), controller.loop)
    provider.expect("write", timeout=10)     # the device has it, and never answers
    provider.kill()
    assert pending.result(15)[on]["status"] == -70402
    bridge.wait_log("HomeKit write of True to Plug / On")
    bridge.wait_log("Plug is unreachable: HomeKit shows No Response")
    assert controller.get([on])[on]["status"] == -70402


DOOR = {"key": "door", "name": "Hall Door", "category": "SENSOR", "room": "Office",
        "services": [{"type": "ContactSensor", "characteristics": [{"type": "ContactSensorState"}]}]}
FAN = {"key": "fan", "name": "Hall Fan", "category": "SWITCH", "room": "Office",
       "services": [{"type": "Switch", "characteristics": [{"type": "On"}]}]}


def test_a_characteristic_nothing_reported_answers_no_response_until_its_first_value(homed, processes, workdir,
                                                                                      controllers):
    """Registered without values and never reported: the read is No Response,
    not HAP-python's placeholder; the first report is an event and the value
    read; a write to one without a value goes through to the device."""
    from homed.provider import Ref
    devices = TestDevices(homed.socket_path, accessories=(DOOR, FAN)).start()
    try:
        bridge = BridgeProcess(workdir, homed.socket_path).start(processes)
        controller = controllers()
        controller.pair(HOST, bridge.port, bridge.pincode())
        contact_ref, fan_ref = Ref("door", "ContactSensor", "ContactSensorState"), Ref("fan", "Switch", "On")
        contact, fan = at(bridge, devices, contact_ref), at(bridge, devices, fan_ref)
        read = controller.get([contact, fan])
        assert (read[contact]["status"], read[fan]["status"]) == (-70402, -70402)
        assert "value" not in read[contact] and "value" not in read[fan]
        controller.subscribe([contact])
        devices.provider.report({contact_ref: 1})
        assert controller.wait_values(contact) == [1]   # nothing before the first report
        assert controller.get([contact]) == {contact: {"value": 1}}
        assert controller.put([(*fan, True)]) == {}
        devices.wait_write(fan_ref, True)
        assert controller.get([fan]) == {fan: {"value": True}}
    finally:
        devices.stop()
