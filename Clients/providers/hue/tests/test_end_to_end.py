"""End to end: a real homed, the fake bridge and the provider as real
processes. Registration, values, writes confirmed by the bridge's event,
presses once each, reachability from zigbee_connectivity, a resource type the
mapping does not know, and restarts of either side."""

import pytest

from homed import pb
from homed.device_values import xy_to_hs
from homed_testkit import EventLog, is_value, plain

from .hue_helpers import (accessories, ids_of, resources, start_provider, value_of, wait_accessories, wait_for,
                          wait_log, wait_value, write_pairing)

LAMP = "42b8327b-b7d7-2469-3c45-069a41b4dca8"        # Device 36: colour light, off, 81.03 %
WHITE = "f747dba7-6ec9-5683-7674-98095f330517"       # Device 1: white ambiance, 62.45 %, 369 mirek
STRIP = "7e7fa7bc-8c1a-576b-6fef-b1ff0ea7e77b"       # Device 26: light with zigbee_connectivity "connected"
TROUBLED = "51428b4a-5805-c25a-081e-f922bb76eb4f"    # Device 6: zigbee_connectivity "connectivity_issue"
DIMMER = "c59ce269-4b38-b432-f6c4-ca9181865666"      # Device 5: one button (control_id 3)
THERMO = "b2879c32-1bf3-9c99-4825-539401a42ab7"      # Device 33: temperature 22.55
MOTION = "7bd86197-ef7c-7625-3170-1b6de1502441"      # Device 46: motion, none
CONTACT = "6b31cfbc-fdec-c439-f6ca-85fdb03f30d3"     # Device 43: contact and tamper, not mapped
KEYS = [LAMP, WHITE, STRIP, DIMMER, THERMO, MOTION]


def rid(device_id, rtype):
    device = next(r for r in resources() if r["id"] == device_id)
    return next(s["rid"] for s in device["services"] if s["rtype"] == rtype)


def ids(found, device_id, rtype, ctype):
    return ids_of(found[device_id])[(f"{rtype}:{rid(device_id, rtype)}", ctype)]


def test_registration_and_values(homed, bridge, running):
    with homed.client() as client:
        found = wait_accessories(client, KEYS, running)
        assert found[TROUBLED].reachable is False  # registered, but the bridge says it does not answer
        assert CONTACT not in found
        assert found[LAMP].name == "Device 36"
        assert value_of(client, ids(found, LAMP, "light", "On")) is False
        assert value_of(client, ids(found, LAMP, "light", "Brightness")) == 81
        hue, saturation = xy_to_hs(0.5974, 0.36)
        assert value_of(client, ids(found, LAMP, "light", "Hue")) == pytest.approx(hue, abs=1)
        assert value_of(client, ids(found, LAMP, "light", "Saturation")) == pytest.approx(saturation, abs=1)
        assert value_of(client, ids(found, WHITE, "light", "ColorTemperature")) == 369
        assert value_of(client, ids(found, THERMO, "temperature", "CurrentTemperature")) == pytest.approx(22.55, abs=0.06)
        assert value_of(client, ids(found, MOTION, "motion", "MotionDetected")) is False
    # The device whose resource types the mapping does not know: one line, naming them.
    log = wait_log(running, "Device 43 (6b31cfbc-fdec-c439-f6ca-85fdb03f30d3): not registered")
    line = next(line for line in log.splitlines() if "Device 43" in line)
    assert "contact" in line and "tamper" in line
    assert log.count("Device 43") == 1


def test_a_write_is_acknowledged_once_the_bridge_confirms_it(homed, bridge, running):
    with homed.client() as client:
        found = wait_accessories(client, KEYS, running)
        on, brightness = ids(found, LAMP, "light", "On"), ids(found, LAMP, "light", "Brightness")
        result = client.write({on: pb.Value(bool_value=True), brightness: pb.Value(int_value=40)})
        assert [r.code for r in result.results] == [pb.OK, pb.OK]
        assert value_of(client, on) is True and value_of(client, brightness) == 40
        put = bridge.puts()[-1]
        assert put["rid"] == rid(LAMP, "light")
        assert put["body"] == {"on": {"on": True}, "dimming": {"brightness": 40.0}}
        assert bridge.resource(rid(LAMP, "light"))["dimming"]["brightness"] == 40.0


def test_a_colour_write_goes_as_xy(homed, bridge, running):
    with homed.client() as client:
        found = wait_accessories(client, KEYS, running)
        hue, saturation = ids(found, LAMP, "light", "Hue"), ids(found, LAMP, "light", "Saturation")
        result = client.write({hue: pb.Value(float_value=240), saturation: pb.Value(float_value=100)})
        assert [r.code for r in result.results] == [pb.OK, pb.OK]
        xy = bridge.resource(rid(LAMP, "light"))["color"]["xy"]
        read_hue, _ = xy_to_hs(xy["x"], xy["y"])
        assert read_hue == pytest.approx(240, abs=3)
        temperature = ids(found, WHITE, "light", "ColorTemperature")
        assert client.write({temperature: pb.Value(int_value=250)}).results[0].code == pb.OK
        assert bridge.resource(rid(WHITE, "light"))["color_temperature"]["mirek"] == 250


def test_a_write_the_bridge_never_confirms_fails(homed, bridge, running):
    with homed.client() as client:
        found = wait_accessories(client, KEYS, running)
        on = ids(found, WHITE, "light", "On")
        bridge.call("POST", "/fake/confirm", {"confirm": False})
        result = client.write({on: pb.Value(bool_value=False)})
        assert result.results[0].code == pb.DEADLINE_EXCEEDED
        assert value_of(client, on) is True


def test_changes_from_the_bridge_and_presses_once_each(homed, bridge, running):
    with homed.client() as client:
        found = wait_accessories(client, KEYS, running)
        press = ids(found, DIMMER, "button", "ProgrammableSwitchEvent")
        temperature = ids(found, THERMO, "temperature", "CurrentTemperature")
        motion = ids(found, MOTION, "motion", "MotionDetected")
        events = EventLog(homed.socket_path)
        try:
            events.wait_subscribed()
            button = rid(DIMMER, "button")
            for event in ("initial_press", "short_release"):  # one short press
                bridge.push({"id": button, "type": "button", "button": {"button_report": {"event": event}}})
            events.wait_for(lambda e: is_value(press)(e) and plain(e.value.value) == 0)
            for event in ("initial_press", "long_press", "repeat", "repeat", "long_release"):  # one long press
                bridge.push({"id": button, "type": "button", "button": {"button_report": {"event": event}}})
            events.wait_for(lambda e: is_value(press)(e) and plain(e.value.value) == 2)
            bridge.push({"id": rid(THERMO, "temperature"), "type": "temperature",
                         "temperature": {"temperature_report": {"temperature": 19.25}}},
                        {"id": rid(MOTION, "motion"), "type": "motion",
                         "motion": {"motion": True, "motion_report": {"motion": True}}})
            wait_value(client, temperature, pytest.approx(19.25, abs=0.06), process=running)
            wait_value(client, motion, True, process=running)
            assert [plain(e.value.value) for _, e in events.matching(is_value(press))] == [0, 2]
        finally:
            events.close()


def test_reachability_follows_zigbee_connectivity(homed, bridge, running):
    with homed.client() as client:
        found = wait_accessories(client, KEYS, running)
        connectivity = rid(STRIP, "zigbee_connectivity")
        bridge.push({"id": connectivity, "type": "zigbee_connectivity", "status": "connectivity_issue"})
        wait_for(lambda: not accessories(client)[STRIP].reachable, 10, "the strip unreachable", running)
        assert accessories(client)[LAMP].reachable
        bridge.push({"id": connectivity, "type": "zigbee_connectivity", "status": "connected"})
        wait_for(lambda: accessories(client)[STRIP].reachable, 10, "the strip reachable again", running)
        assert found[STRIP].id == accessories(client)[STRIP].id


def test_the_bridge_restarted_is_read_again(homed, bridge, running):
    with homed.client() as client:
        found = wait_accessories(client, KEYS, running)
        on = ids(found, LAMP, "light", "On")
        bridge.push({"id": rid(LAMP, "light"), "type": "light", "on": {"on": True}})
        wait_value(client, on, True, process=running)
        bridge.kill()
        wait_accessories(client, KEYS, running, reachable=False)
        bridge.start()  # the recorded resources again: the lamp is off
        again = wait_accessories(client, KEYS, running)
        wait_value(client, on, False, process=running)
        assert {k: again[k].id for k in KEYS} == {k: found[k].id for k in KEYS}
        wait_for(lambda: bridge.streams() == 1, 10, "the provider following the new bridge's events", running)
        bridge.push({"id": rid(LAMP, "light"), "type": "light", "dimming": {"brightness": 10.0}})
        wait_value(client, ids(found, LAMP, "light", "Brightness"), 10, process=running)


def test_the_provider_restarted_keeps_the_ids(homed, bridge, workdir, processes, running):
    with homed.client() as client:
        found = wait_accessories(client, KEYS, running)
        running.kill()
        wait_accessories(client, KEYS, running, reachable=False)
        again = start_provider(homed, write_pairing(workdir, bridge), processes)
        after = wait_accessories(client, KEYS, again)
        assert {k: after[k].id for k in found} == {k: found[k].id for k in found}
        assert ids_of(after[LAMP]) == ids_of(found[LAMP])


def test_a_device_added_and_deleted_on_the_bridge(homed, bridge, running):
    with homed.client() as client:
        wait_accessories(client, KEYS, running)
        new_device = {"id": "00000000-0000-4000-8000-000000000001", "type": "device",
                      "metadata": {"name": "Porch", "archetype": "classic_bulb"},
                      "product_data": {"manufacturer_name": "Signify Netherlands B.V.", "model_id": "LWA001"},
                      "services": [{"rid": "00000000-0000-4000-8000-000000000002", "rtype": "light"}]}
        new_light = {"id": "00000000-0000-4000-8000-000000000002", "type": "light", "on": {"on": True},
                     "owner": {"rid": new_device["id"], "rtype": "device"}, "dimming": {"brightness": 30.0}}
        bridge.push(new_light, new_device, kind="add")
        found = wait_accessories(client, [new_device["id"]], running)
        assert found[new_device["id"]].name == "Porch"
        brightness = ids_of(found[new_device["id"]])[(f"light:{new_light['id']}", "Brightness")]
        assert value_of(client, brightness) == 30
        bridge.push({"id": new_device["id"], "type": "device"}, {"id": new_light["id"], "type": "light"},
                    kind="delete")
        wait_for(lambda: new_device["id"] not in accessories(client), 10, "the deleted device removed", running)
        assert set(KEYS) <= set(accessories(client))


def test_homed_restarted_gets_the_values_of_now(stored_homed, bridge, workdir, processes):
    homed = stored_homed
    process = start_provider(homed, write_pairing(workdir, bridge), processes)
    with homed.client() as client:
        found = wait_accessories(client, KEYS, process)
        on = ids(found, LAMP, "light", "On")
        assert value_of(client, on) is False
    homed.kill()
    # While homed is away the lamp is switched on; homed restarted must not
    # be told the "off" the provider registered at first.
    wait_for(lambda: bridge.streams() == 1, 5, "the provider still following the bridge", process)
    bridge.push({"id": rid(LAMP, "light"), "type": "light", "on": {"on": True}})
    wait_log(process, "not connected to homed", timeout=10)
    homed.start()
    with homed.client() as client:
        after = wait_accessories(client, KEYS, process, timeout=30)
        assert after[LAMP].id == found[LAMP].id
        wait_value(client, on, True, process=process)


def test_a_new_accessory_goes_to_the_room_of_its_hue_room(homed, bridge, workdir, processes):
    with homed.client() as client:
        home = client.call("ChangeLayout", pb.LayoutRequest(add_home=pb.AddHome(name="Home"))).created_id
        room = client.call("ChangeLayout",
                           pb.LayoutRequest(add_room=pb.AddRoom(home_id=home, name="room 9"))).created_id
        process = start_provider(homed, write_pairing(workdir, bridge), processes)
        found = wait_accessories(client, KEYS, process)
        assert found[WHITE].room_id == room and found[STRIP].room_id == room  # both in the bridge's "Room 9"
        assert found[LAMP].room_id != room


def test_hue_rooms_and_zones_are_service_groups(homed, bridge, workdir, processes, running):
    def groups(client):
        home = client.get_home().homes[0]
        names = {s.id: (a.provider_key, s.provider_key) for a in home.accessories for s in a.services}
        return {g.name: {names[i][0] for i in g.service_ids} for g in home.service_groups}

    with homed.client() as client:
        wait_accessories(client, KEYS, running)
        found = wait_for(lambda: groups(client).get("Room 9"), 15, "the group Room 9", running)
        assert found == {"abb87463-e3a8-7edd-d7b3-07092678dce6", STRIP, WHITE, "739ebab0-97a7-0ee3-91a0-29be479d34f4"}
        assert len(groups(client)["Zone 8"]) == 2
        before = client.get_home().homes[0].service_groups
        # The provider restarted finds its groups and makes none again.
        running.kill()
        again = start_provider(homed, write_pairing(workdir, bridge), processes)
        wait_log(again, "accessories registered; following its events", timeout=20)
        after = client.get_home().homes[0].service_groups
        assert sorted((g.id, g.name, sorted(g.service_ids)) for g in after) == \
            sorted((g.id, g.name, sorted(g.service_ids)) for g in before)


def test_a_resource_type_the_mapping_does_not_know_is_one_line_and_the_rest_registered(homed, workdir, processes):
    import json
    import os
    from .hue_helpers import FakeBridge
    data = resources()
    extra = {"id": "00000000-0000-4000-8000-0000000000ff", "type": "fancy_new_thing", "owner": {"rid": STRIP,
                                                                                                 "rtype": "device"}}
    next(r for r in data if r["id"] == STRIP)["services"].append({"rid": extra["id"], "rtype": extra["type"]})
    path = os.path.join(workdir, "with-unknown.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"data": data + [extra]}, f)
    bridge = FakeBridge(workdir, processes, resources_path=path).start()
    process = start_provider(homed, write_pairing(workdir, bridge), processes)
    with homed.client() as client:
        found = wait_accessories(client, KEYS, process)
        assert [s.type_name for s in found[STRIP].services][1:] == ["Lightbulb"]
    log = wait_log(process, "accessories registered; following its events")
    lines = [line for line in log.splitlines() if "fancy_new_thing" in line]
    assert lines == [f"WARNING homed-hue: Device 26 ({STRIP}): registered without fancy_new_thing: resource types "
                     "this mapping does not know or cannot read"]


def test_a_bridge_that_stops_answering_is_noticed(homed, bridge, workdir, processes):
    import os
    import signal
    process = start_provider(homed, write_pairing(workdir, bridge), processes, "--probe-interval", "0.5")
    with homed.client() as client:
        wait_accessories(client, KEYS, process)
        os.kill(bridge.process.pid, signal.SIGSTOP)  # hung: its connections stay open, nothing answers
        try:
            wait_accessories(client, KEYS, process, reachable=False)
            assert "it stopped answering" in wait_log(process, "it stopped answering")
        finally:
            os.kill(bridge.process.pid, signal.SIGCONT)
        wait_accessories(client, KEYS, process, timeout=30)
