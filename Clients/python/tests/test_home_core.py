"""homed.home's rules with no daemon: which of a load and an event wins, what a
resync starts, what layout events change, and names across several homes."""

import pytest

from homed import pb
from homed.home import Home, PathError

JOURNAL = "j1"


def response(seq, journal=JOURNAL, lamp_name="Lamp", on=False, reachable=True, extra=False):
    home = pb.Home(id=1, name="Home", primary=True, default_room_id=2)
    home.rooms.add(id=2, name="Default Room", home_id=1)
    home.rooms.add(id=3, name="Kitchen", home_id=1)
    lamp = home.accessories.add(id=10, name=lamp_name, room_id=3, home_id=1, reachable=reachable)
    bulb = lamp.services.add(id=11, type="43", type_name="Lightbulb", name=lamp_name, accessory_id=10)
    bulb.characteristics.add(id=12, type="25", type_name="On", value=pb.Value(bool_value=on), service_id=11,
                             accessory_id=10)
    if extra:
        fan = home.accessories.add(id=20, name="Fan", room_id=3, home_id=1, reachable=True)
        service = fan.services.add(id=21, type="40", type_name="Fan", name="Fan", accessory_id=20)
        service.characteristics.add(id=22, type="25", type_name="On", value=pb.Value(bool_value=False),
                                    service_id=21, accessory_id=20)
    return pb.GetHomeResponse(homes=[home], seq=seq, journal_id=journal)


def value_event(seq, cid, on):
    return pb.Event(seq=seq, kind=pb.EVENT_VALUE_CHANGED, time_ms=1000 + seq,
                    value=pb.ValueChange(characteristic_id=cid, value=pb.Value(bool_value=on)))


def layout_event(seq, action, kind, oid, name="", parent=0, home=1):
    return pb.Event(seq=seq, kind=pb.EVENT_LAYOUT_CHANGED, layout=pb.LayoutChange(
        action=action, object=kind, object_id=oid, home_id=home, name=name, parent_id=parent))


def message(*events, journal=JOURNAL):
    return pb.SubscribeResponse(journal_id=journal, events=list(events))


def loaded(seq=10, **kwargs):
    home = Home()
    assert home.needs_load
    home.load(response(seq, **kwargs))
    assert not home.needs_load
    return home


def test_the_subscription_resumes_where_the_loaded_home_stands():
    home = loaded(10)
    request = home.resume(pb.SubscribeRequest(snapshot=True))
    assert (request.since_seq, request.journal_id, request.snapshot) == (10, JOURNAL, False)


def test_events_the_loaded_home_holds_are_skipped_and_later_ones_applied():
    home = loaded(10, on=True)
    home.cursor.highest_seq = home.cursor.resume_seq = 5  # a stream that lags behind the load
    changes = home.apply(message(value_event(8, 12, False)))
    assert home.value(12) == pb.Value(bool_value=True) and not changes
    assert [e.seq for e in changes.earlier] == [8]  # still told: it may be a button press
    changes = home.apply(message(value_event(11, 12, False)))
    assert home.value(12) == pb.Value(bool_value=False) and changes.values == {12}
    assert home.characteristics[12].last_updated_ms == 1011 and home.seq == 11


def test_a_load_never_takes_back_what_newer_events_said():
    home = loaded(10)
    home.apply(message(value_event(15, 12, True),
                       pb.Event(seq=16, kind=pb.EVENT_REACHABILITY_CHANGED,
                                reachability=pb.ReachabilityChange(accessory_id=10, reachable=False))))
    assert home.load(response(13, on=False, reachable=True))  # taken between the two loads' events
    assert home.value(12) == pb.Value(bool_value=True) and not home.accessories[10].reachable
    assert home.load(response(20, on=False, reachable=True))  # newer than both: it wins
    assert home.value(12) == pb.Value(bool_value=False) and home.accessories[10].reachable
    assert not home.load(response(18))  # older than the one loaded


def test_values_of_an_accessory_not_loaded_yet_wait_for_the_load_that_brings_it():
    home = loaded(10)
    home.apply(message(layout_event(11, pb.LAYOUT_ADDED, pb.OBJECT_ACCESSORY, 20, "Fan"), value_event(12, 22, True),
                       pb.Event(seq=13, kind=pb.EVENT_REACHABILITY_CHANGED,
                                reachability=pb.ReachabilityChange(accessory_id=20, reachable=False))))
    assert home.needs_load and 22 not in home.characteristics
    home.load(response(11, extra=True))  # taken right after the accessory was added
    assert home.value(22) == pb.Value(bool_value=True) and not home.accessories[20].reachable
    assert not home.needs_load


def test_layout_events_rename_move_and_remove_at_once_and_ask_for_a_load():
    home = loaded(10)
    changes = home.apply(message(layout_event(11, pb.LAYOUT_ADDED, pb.OBJECT_ROOM, 30, "Study"),
                                 layout_event(12, pb.LAYOUT_MOVED, pb.OBJECT_ACCESSORY, 10, "Lamp", parent=30),
                                 layout_event(13, pb.LAYOUT_UPDATED, pb.OBJECT_ACCESSORY, 10, "Reading Lamp")))
    assert changes.layout and [e.seq for e in changes.events] == [11, 12, 13]
    assert home.path_of(12) == "Home/Study/Reading Lamp/Lightbulb/On"
    assert home.resolve_characteristic("Study/Reading Lamp/On") == 12
    assert home.needs_load
    home.load(response(12, lamp_name="Lamp"))  # older than the rename: still stale
    assert home.needs_load
    home.load(response(13, lamp_name="Reading Lamp"))
    assert not home.needs_load

    home.apply(message(layout_event(14, pb.LAYOUT_REMOVED, pb.OBJECT_ACCESSORY, 10, "Reading Lamp")))
    assert 10 not in home.accessories and 12 not in home.characteristics and home.path_of(12) is None
    with pytest.raises(PathError) as error:
        home.resolve_characteristic("Kitchen/Reading Lamp/On")
    assert error.value.code == pb.NOT_FOUND


def test_a_resync_starts_the_journal_anew_from_its_snapshot_and_asks_for_a_load():
    home = loaded(10)
    home.apply(message(value_event(11, 12, True)))
    resync = pb.SubscribeResponse(journal_id="j2", marker=pb.StreamMarker(kind=pb.MARKER_RESYNC, seq=3,
                                                                          reason="the journal changed"))
    changes = home.apply(resync)
    assert changes.resync and home.needs_load and home.journal_id == "j2"
    page = pb.SubscribeResponse(journal_id="j2", snapshot=[pb.Characteristic(id=12, value=pb.Value(
        bool_value=False), last_updated_ms=5)])
    assert home.apply(page).values == {12}
    assert home.value(12) == pb.Value(bool_value=False)
    home.apply(pb.SubscribeResponse(journal_id="j2", marker=pb.StreamMarker(kind=pb.MARKER_SNAPSHOT_END, seq=3)))
    home.apply(message(value_event(4, 12, True), journal="j2"))  # seq 4 of the new journal: below the old 11
    assert home.value(12) == pb.Value(bool_value=True)
    home.load(response(3, journal="j2", on=False))
    assert not home.needs_load and home.value(12) == pb.Value(bool_value=True)
    assert home.resume(pb.SubscribeRequest()).since_seq == 4


def test_another_journal_without_a_marker_is_a_resync_too():
    home = loaded(10)
    home.apply(pb.SubscribeResponse(journal_id="j9", marker=pb.StreamMarker(kind=pb.MARKER_SUBSCRIBED, seq=2)))
    assert home.needs_load and home.journal_id == "j9"
    home.apply(message(value_event(3, 12, True), journal="j9"))
    assert home.value(12) == pb.Value(bool_value=True)  # not skipped as below the old journal's 10
    home.load(response(2, journal="j9"))
    assert home.value(12) == pb.Value(bool_value=True) and not home.needs_load


def test_a_name_in_two_homes_needs_the_home_and_says_so():
    two = response(10)
    other = two.homes.add(id=100, name="Cabin", default_room_id=101)
    other.rooms.add(id=101, name="Kitchen", home_id=100)
    lamp = other.accessories.add(id=110, name="Lamp", room_id=101, home_id=100)
    lamp.services.add(id=111, type_name="Lightbulb", name="Lamp").characteristics.add(id=112, type_name="On")
    home = Home()
    home.load(two)
    with pytest.raises(PathError) as error:
        home.resolve_path("Kitchen/Lamp/On")
    assert error.value.code == pb.INVALID_ARGUMENT
    assert error.value.message == ('"Kitchen/Lamp/On" names objects in 2 homes: Home/Kitchen/Lamp/On (id 12), '
                                   'Cabin/Kitchen/Lamp/On (id 112); start the path with the home\'s name')
    assert home.resolve_path("cabin/kitchen/lamp/on") == 112
    assert home.resolve_home(None) == 1 and home.resolve_home("Cabin") == 100
    with pytest.raises(PathError) as error:
        home.resolve_accessory("Lamp")
    assert error.value.message.startswith('"Lamp" names 2 accessories: "Home/Kitchen/Lamp (id 10)"')
    assert home.path_of(111) == "Cabin/Kitchen/Lamp/Lightbulb"


def test_a_write_of_ones_own_applies_as_its_event_would_unless_something_newer_came():
    home = loaded(10)
    assert home.written(12, pb.Value(bool_value=True), 14)
    assert home.value(12) == pb.Value(bool_value=True)
    home.apply(message(value_event(16, 12, False)))
    assert not home.written(12, pb.Value(bool_value=True), 15)  # answered after a newer event
    assert not home.written(12, pb.Value(bool_value=True), 0)  # it changed nothing
    assert not home.written(12, pb.Value(bool_value=True), 9)  # the loaded home is newer
    assert home.value(12) == pb.Value(bool_value=False)
    assert home.load(response(15, on=True)) and home.value(12) == pb.Value(bool_value=False)


def test_removals_take_out_what_the_objects_held_and_leave_the_rest():
    big = response(10)
    home_message = big.homes[0]
    for n in range(300):
        aid = 1000 + 10 * n
        accessory = home_message.accessories.add(id=aid, name=f"Sensor {n}", room_id=3, home_id=1)
        service = accessory.services.add(id=aid + 1, type_name="TemperatureSensor", name=f"Sensor {n}")
        service.characteristics.add(id=aid + 2, type_name="CurrentTemperature")
        service.characteristics.add(id=aid + 3, type_name="StatusActive")
    home = Home()
    home.load(big)
    events = [layout_event(11 + n, pb.LAYOUT_REMOVED, pb.OBJECT_ACCESSORY, 1000 + 20 * n) for n in range(150)]
    events.append(layout_event(200, pb.LAYOUT_REMOVED, pb.OBJECT_CHARACTERISTIC, 1013))
    events.append(layout_event(201, pb.LAYOUT_REMOVED, pb.OBJECT_SERVICE, 11))
    events.append(layout_event(202, pb.LAYOUT_UPDATED, pb.OBJECT_ACCESSORY, 1030, "Renamed"))
    home.apply(message(*events))
    assert len(home.accessories) == 1 + 150 and len(home.homes[1].accessories) == 151
    assert all(1000 + 20 * n not in home.accessories and 1000 + 20 * n + 2 not in home.characteristics
               for n in range(150))
    assert 1013 not in home.characteristics and [c.id for c in home.services[1011].characteristics] == [1012]
    assert 11 not in home.services and 12 not in home.characteristics and list(home.accessories[10].services) == []
    assert home.path_of(1032) == "Home/Kitchen/Renamed/TemperatureSensor/CurrentTemperature"
    home.apply(message(layout_event(300, pb.LAYOUT_REMOVED, pb.OBJECT_HOME, 1, "Home")))
    assert not home.homes and not home.accessories and not home.characteristics and not home.rooms


def test_a_load_of_another_journal_is_the_whole_truth_and_the_stream_resumes_from_it():
    home = loaded(10)
    home.apply(message(value_event(40, 12, True)))
    assert home.load(response(5, journal="j2", on=False))  # a restarted daemon: its numbers start again
    assert home.value(12) == pb.Value(bool_value=False) and home.seq == 5
    request = home.resume(pb.SubscribeRequest())
    assert (request.since_seq, request.journal_id) == (5, "j2")
