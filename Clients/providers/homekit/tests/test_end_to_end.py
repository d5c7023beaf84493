"""The provider as a real process between a HAP-python accessory on loopback
(a real separate process) and a real homed; writes and reads through the real
homectl."""

import signal

from homed import pb
from homed_testkit import EventLog, is_reachability, is_value, plain

from .hk_helpers import KEYS, accessories, homectl, ids_of, key, value_of, wait_accessories, wait_for, wait_log

LEVEL = ("Switch", "Gadget level")


def test_the_accessory_database_becomes_homed_accessories_keyed_by_device_id_and_aid(paired):
    found = paired.found
    assert set(found) == set(KEYS)  # aid 1 (the bridge) to 6, nothing else
    bridge = found[key(1)]
    assert bridge.category == pb.CATEGORY_BRIDGE and bridge.name == "Test bridge"
    assert bridge.manufacturer == "homed tests" and bridge.serial_number == "B-1"
    for aid in range(2, 7):
        assert found[key(aid)].bridge_id == bridge.id
    lamp = found[key(2)]
    assert lamp.name == "Desk lamp" and lamp.category == pb.CATEGORY_LIGHTBULB
    ids = ids_of(lamp)
    assert value_of(paired.client, ids[("Lightbulb", "Brightness")]) == 40
    assert value_of(paired.client, ids[("Lightbulb", "On")]) is False
    # The lamp's hidden service (HAP's "hidden") is registered, marked hidden in homed.
    hidden = {s.type_name: s.hidden for s in lamp.services}
    assert hidden == {"AccessoryInformation": False, "Lightbulb": False, "TemperatureSensor": True}
    assert value_of(paired.client, ids[("TemperatureSensor", "CurrentTemperature")]) == 41.0
    assert value_of(paired.client, paired.ids(4)[("TemperatureSensor", "CurrentTemperature")]) == 19.5
    assert found[key(5)].category == pb.CATEGORY_PROGRAMMABLE_SWITCH
    # The custom characteristic, with the device's full metadata.
    gadget = found[key(6)]
    [switch] = [s for s in gadget.services if s.type_name == "Switch"]
    [level] = [c for c in switch.characteristics if c.type_name == "Gadget level"]
    assert level.type == "5B1E0F6A-3C2D-4E8F-9A7B-000000000001"
    assert level.metadata.format == pb.FORMAT_UINT8
    assert (level.metadata.min_value, level.metadata.max_value, level.metadata.step_value) == (0, 20, 1)
    assert level.properties.readable and level.properties.writable and level.properties.supports_event_notification
    assert plain(level.value) == 5
    # The custom service homed cannot take is left out, and said.
    log = wait_log(paired.provider, "is not a type homed knows")
    assert "'Gadget' (aa:bb:cc:dd:ee:01/6): service 5B1E0F6A-3C2D-4E8F-9A7B-0000000000AA (iid 12)" in log


def test_homectl_set_and_get_reach_the_accessory_and_accessory_changes_are_events(paired):
    result = homectl(paired.homed, "set", "Desk lamp/Brightness", "70")
    assert result.returncode == 0, result.stderr
    assert paired.accessory.expect_set("Brightness", 70)  # the accessory itself took it
    result = homectl(paired.homed, "get", "Desk lamp/Brightness")
    assert "70%" in result.stdout
    # AccessoryInformation is homed's; its Identify still reaches the device.
    result = homectl(paired.homed, "set", "Desk lamp/Identify", "true")
    assert result.returncode == 0, result.stderr
    paired.accessory.expect_set("Identify", True)
    brightness = paired.ids(2)[("Lightbulb", "Brightness")]
    events = EventLog(paired.homed.socket_path)
    events.wait_subscribed()
    try:
        # The accessory changes on its own side: an event in homed.
        paired.accessory.send({"set": [3, "On", True]})
        switch = paired.ids(3)[("Switch", "On")]
        [(_, event)] = events.wait_for(lambda e: is_value(switch)(e) and plain(e.value.value) is True)
        assert event.origin.kind == pb.ORIGIN_PROVIDER and event.origin.name == "homekit"
        paired.accessory.send({"set": [4, "CurrentTemperature", 21.5]})
        temperature = paired.ids(4)[("TemperatureSensor", "CurrentTemperature")]
        events.wait_for(lambda e: is_value(temperature)(e) and plain(e.value.value) == 21.5)
        # A fresh read asks the accessory.
        paired.accessory.send({"set": [2, "Brightness", 55]})
        wait_for(lambda: value_of(paired.client, brightness) == 55, 10, "the brightness event")
        result = homectl(paired.homed, "get", "--fresh", "Desk lamp/Brightness")
        assert result.returncode == 0 and "55%" in result.stdout, result.stdout + result.stderr
        # A custom characteristic written through homed.
        level = paired.ids(6)[LEVEL]
        assert paired.client.write({level: pb.Value(uint_value=7)}).results[0].code == 0
        paired.accessory.expect_set("Gadget level", 7)
    finally:
        events.close()


def test_a_write_response_characteristic_is_written_asking_for_the_response_which_becomes_homeds_value(paired):
    reply = paired.ids(6)[("Switch", "Gadget reply")]
    [switch] = [s for s in paired.found[key(6)].services if s.type_name == "Switch"]
    [declared] = [c for c in switch.characteristics if c.id == reply]
    assert declared.properties.write_response and declared.properties.writable
    level = paired.ids(6)[LEVEL]
    result = homectl(paired.homed, "set", "Gadget/Gadget reply", "hello")
    assert result.returncode == 0, result.stderr
    paired.accessory.expect_set("Gadget reply", "hello")
    # The PUT asked for the response ("r") of that characteristic.
    assert paired.accessory.process.expect("put")["items"] == [[6, 11, True]]
    # homed stores the value written, then the accessory's answer, which the
    # provider reports after its answer to the write.
    wait_for(lambda: value_of(paired.client, reply) == "ok:hello", 10, "the write response as homed's value")
    wait_log(paired.provider, "answered the write of 'hello' with 'ok:hello' (its write response)")
    # A batch with a characteristic without "wr": only the one with it asks.
    assert [r.code for r in paired.client.write({reply: pb.Value(string_value="x"),
                                                 level: pb.Value(uint_value=8)}).results] == [0, 0]
    assert sorted(paired.accessory.process.expect("put")["items"]) == [[6, 10, False], [6, 11, True]]
    wait_for(lambda: value_of(paired.client, reply) == "ok:x", 10, "the second write response")
    assert value_of(paired.client, level) == 8
    # A write without a "wr" characteristic goes as aiohomekit writes, without "r".
    assert paired.client.write({level: pb.Value(uint_value=9)}).results[0].code == 0
    assert paired.accessory.process.expect("put")["items"] == [[6, 10, False]]


def test_button_presses_are_events_one_each_never_merged(paired):
    button = paired.ids(5)[("StatelessProgrammableSwitch", "ProgrammableSwitchEvent")]
    events = EventLog(paired.homed.socket_path)
    events.wait_subscribed()
    try:
        paired.accessory.send({"press": [5, 0, 0, 2, 0]})  # single, single, long, single
        found = events.wait_for(is_value(button), count=4)
        assert [plain(e.value.value) for _, e in found] == [0, 0, 2, 0]
    finally:
        events.close()


def test_hap_errors_become_the_homed_statuses_a_user_expects(paired):
    level = paired.ids(6)[LEVEL]
    result = paired.client.write({level: pb.Value(uint_value=13)}).results[0]
    assert result.code == pb.INVALID_ARGUMENT
    assert result.message == ("'Gadget' (aa:bb:cc:dd:ee:01/6) Switch.Gadget level (aid 6, iid 10): the accessory "
                              "refused the value (invalid value in request) (HAP status -70410)")
    result = paired.client.write({level: pb.Value(uint_value=19)}).results[0]
    assert result.code == pb.UNAVAILABLE and "(HAP status -70402)" in result.message
    assert value_of(paired.client, level) == 5  # neither was applied
    log = wait_log(paired.provider, "write of 19 to 'Gadget'")
    assert "write of 13 to 'Gadget' (aa:bb:cc:dd:ee:01/6) Switch.Gadget level (aid 6, iid 10) refused" in log
    # homectl shows it too, and exits non-zero.
    result = homectl(paired.homed, "set", "Gadget/Gadget level", "13")
    assert result.returncode != 0 and "HAP status -70410" in result.stderr


def test_an_accessory_killed_is_unreachable_and_when_back_is_re_read_with_only_changes_reported(paired):
    brightness = paired.ids(2)[("Lightbulb", "Brightness")]
    temperature = paired.ids(4)[("TemperatureSensor", "CurrentTemperature")]
    assert paired.client.write({brightness: pb.Value(int_value=70)}).results[0].code == 0
    ids = {k: a.id for k, a in paired.found.items()}
    events = EventLog(paired.homed.socket_path)
    events.wait_subscribed()
    try:
        paired.accessory.kill()
        for k in KEYS:
            events.wait_for(is_reachability(ids[k], False), timeout=10)
        result = paired.client.write({brightness: pb.Value(int_value=30)}).results[0]
        assert result.code == pb.UNAVAILABLE and "is not reachable" in result.message
        assert value_of(paired.client, brightness) == 70
        wait_log(paired.provider, "connection lost")
        before = len(events.matching(lambda e: e.kind == pb.EVENT_VALUE_CHANGED))
        paired.accessory.start()  # the same pairing; its values start again from the defaults
        for k in KEYS:
            events.wait_for(is_reachability(ids[k], True), timeout=20)
        # Brightness went back to 40 while it was away: that change, and nothing else.
        [(_, event)] = events.wait_for(lambda e: is_value(brightness)(e) and plain(e.value.value) == 40)
        assert event.origin.kind == pb.ORIGIN_PROVIDER
        values = [e for _, e in events.events[before:] if e.kind == pb.EVENT_VALUE_CHANGED]
        assert [e.value.characteristic_id for e in values] == [brightness]
        assert value_of(paired.client, temperature) == 19.5
        # Same accessories, same ids.
        again = wait_accessories(paired.client, KEYS, paired.provider)
        assert {k: a.id for k, a in again.items()} == ids
        assert paired.client.write({brightness: pb.Value(int_value=30)}).results[0].code == 0
        paired.accessory.expect_set("Brightness", 30)
    finally:
        events.close()


def test_a_database_that_changed_is_registered_again_with_the_same_ids(paired):
    ids = {k: a.id for k, a in paired.found.items()}
    lamp = ids_of(paired.found[key(2)])
    paired.accessory.kill()
    wait_accessories(paired.client, KEYS, paired.provider, reachable=False)
    paired.accessory.start(layout=2)  # an outlet added: HAP-python bumps c#
    found = wait_accessories(paired.client, KEYS + [key(7)], paired.provider)
    assert found[key(7)].name == "Extra outlet" and found[key(7)].category == pb.CATEGORY_OUTLET
    assert found[key(7)].bridge_id == ids[key(1)]
    assert {k: found[k].id for k in KEYS} == ids
    assert ids_of(found[key(2)]) == lamp
    outlet = ids_of(found[key(7)])[("Outlet", "On")]
    assert value_of(paired.client, outlet) is True
    assert paired.client.write({outlet: pb.Value(bool_value=False)}).results[0].code == 0
    paired.accessory.expect_set("On", False)
    wait_log(paired.provider, "accessory database changed; registered again")
    # Back to the first layout: the outlet is removed from homed.
    paired.accessory.kill()
    wait_accessories(paired.client, KEYS, paired.provider, reachable=False)
    paired.accessory.start(layout=1)
    wait_for(lambda: key(7) not in accessories(paired.client), 20, "the outlet removed", paired.provider)


def test_an_accessory_gone_mid_write_ends_the_write_with_unavailable(paired):
    level = paired.ids(6)[LEVEL]
    lamp = paired.found[key(2)].id
    events = EventLog(paired.homed.socket_path)
    events.wait_subscribed()
    try:
        result = paired.client.write({level: pb.Value(uint_value=17)}, timeout=10).results[0]  # the process dies
        assert result.code == pb.UNAVAILABLE
        assert "went away before confirming the write" in result.message
        assert "Gadget level (aid 6, iid 10)" in result.message
        assert value_of(paired.client, level) == 5
        events.wait_for(is_reachability(lamp, False), timeout=10)
    finally:
        events.close()


def test_homed_restarted_gets_everything_again(paired):
    brightness_before = paired.ids(2)[("Lightbulb", "Brightness")]
    paired.client.close()
    paired.homed.kill()
    paired.homed.start()  # in memory: a new, empty home
    with paired.homed.client() as client:
        found = wait_accessories(client, KEYS, paired.provider)
        brightness = ids_of(found[key(2)])[("Lightbulb", "Brightness")]
        wait_for(lambda: value_of(client, brightness) == 40, 10, "the brightness read again", paired.provider)
        assert client.write({brightness: pb.Value(int_value=61)}).results[0].code == 0
        paired.accessory.expect_set("Brightness", 61)
    assert brightness_before > 0


def test_sigterm_makes_the_accessories_unreachable_and_exits_0(paired):
    paired.provider.proc.send_signal(signal.SIGTERM)
    assert paired.provider.proc.wait(10) == 0
    wait_accessories(paired.client, KEYS, None, reachable=False)


def test_a_hung_accessory_fails_the_write_with_deadline_exceeded_and_is_followed_back(paired):
    import os
    brightness = paired.ids(2)[("Lightbulb", "Brightness")]
    lamp = paired.found[key(2)].id
    events = EventLog(paired.homed.socket_path)
    events.wait_subscribed()
    os.kill(paired.accessory.process.pid, signal.SIGSTOP)
    try:
        result = paired.client.write({brightness: pb.Value(int_value=20)}, timeout=10).results[0]
        assert result.code == pb.DEADLINE_EXCEEDED
        assert result.message == ("'Desk lamp' (aa:bb:cc:dd:ee:01/2) Lightbulb.Brightness (aid 2, iid 10): device "
                                  f"aa:bb:cc:dd:ee:01 at {paired.accessory.address} did not confirm the write "
                                  "within 3 s")
        assert value_of(paired.client, brightness) == 40
        # aiohomekit drops a session with a request unanswered (its counters are out of step).
        events.wait_for(is_reachability(lamp, False), timeout=10)
    finally:
        os.kill(paired.accessory.process.pid, signal.SIGCONT)
    try:
        events.wait_for(is_reachability(lamp, True), timeout=20)
        assert paired.client.write({brightness: pb.Value(int_value=21)}).results[0].code == 0
    finally:
        events.close()
