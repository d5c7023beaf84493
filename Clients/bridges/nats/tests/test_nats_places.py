"""Where the bridge files events (homed_nats.places over homed.home's replica):
no I/O, GetHome answers made from home.v1 messages."""

import json

from homed import pb

from homed_nats import layout as L
from homed_nats.places import FORMER_PLACES, Places


def lamp_home(journal="J1", seq=10, with_lamp=True, lamp_room=0):
    """Home 1 (default room 2, room 3): accessory 9 (a lamp, characteristic 11)
    in `lamp_room` (0: unassigned), accessory 20 (characteristic 21) in room 3,
    scene 30 and trigger 31."""
    home = pb.Home(id=1, name="Home", default_room_id=2,
                   rooms=[pb.Room(id=2, name="Default Room"), pb.Room(id=3, name="Kitchen")],
                   action_sets=[pb.ActionSet(id=30, name="Evening")], triggers=[pb.Trigger(id=31, name="Dusk")])
    if with_lamp:
        home.accessories.add(id=9, name="Lamp", room_id=lamp_room).services.add(id=10).characteristics.add(id=11)
    home.accessories.add(id=20, name="Sensor", room_id=3).services.add(id=19).characteristics.add(id=21)
    return pb.GetHomeResponse(homes=[home], journal_id=journal, seq=seq)


def test_an_accessory_is_filed_under_its_room_or_its_homes_default_room():
    places = Places()
    assert not places.loaded and places.get(9) == (0, 0)
    places.load(lamp_home())
    assert places.loaded
    assert places.get(9) == (1, 2) and places.get(20) == (1, 3)
    assert 9 in places and 99 not in places
    assert places.get(99) == (0, 0)
    places.load(lamp_home(seq=11, lamp_room=3))
    assert places.get(9) == (1, 3)


def test_a_removed_accessory_keeps_the_room_it_was_last_in_until_it_comes_back():
    places = Places()
    places.load(lamp_home(lamp_room=3))
    places.load(lamp_home(seq=11, with_lamp=False))
    assert 9 not in places and places.get(9) == (1, 3)
    removal = pb.Event(seq=12, kind=pb.EVENT_LAYOUT_CHANGED,
                       layout=pb.LayoutChange(home_id=1, object=pb.OBJECT_ACCESSORY, object_id=9,
                                              action=pb.LAYOUT_REMOVED))
    assert L.event_record(L.Names("home"), "J1", removal, places, places.owners).subject == \
        "homed.home.journal.ev.1.3.9.layout"
    places.load(lamp_home(seq=13))
    assert places.get(9) == (1, 2) and 9 not in places.former


def test_only_the_newest_removed_accessories_are_remembered():
    places = Places()
    places.load(lamp_home())
    places.former.update((1000 + i, (1, 3)) for i in range(FORMER_PLACES))
    places.load(lamp_home(seq=11, with_lamp=False))
    assert len(places.former) == FORMER_PLACES
    assert places.get(9) == (1, 2) and 1000 not in places.former


def test_scenes_and_triggers_are_filed_under_their_home():
    places = Places()
    places.load(lamp_home())
    assert places.owners.get(("scene", 30)) == 1 and places.owners.get(("trigger", 31)) == 1
    # An id of another kind, or unknown: no home.
    assert places.owners.get(("scene", 31)) == 0 and places.owners.get(("trigger", 99)) == 0
    scene = pb.Event(seq=11, kind=pb.EVENT_ACTION_SET_EXECUTED, action_set_id=30)
    assert L.event_record(L.Names("home"), "J1", scene, places, places.owners).subject == \
        "homed.home.journal.ev.1._._.scene"


def test_a_write_names_the_ids_that_are_no_characteristic_of_the_home():
    places = Places()
    places.load(lamp_home())
    assert places.has_home(1) and not places.has_home(2) and not places.has_home(None)
    assert places.characteristics_outside(1, [11, 21]) == []
    # 9 is the lamp itself, 99 nothing: neither can be written.
    assert places.characteristics_outside(1, [11, 9, 99]) == [9, 99]
    assert sorted(places.characteristic_ids()) == [11, 21]


def test_the_buckets_layout_key_loads_the_same_places():
    places = Places()
    key, value = L.layout_entry("J1", 10, lamp_home(lamp_room=3).homes)
    data = json.loads(value)
    places.load_homes(L.homes_from_layout(data), data["journal"], data["seq"])
    assert key == "layout" and places.get(9) == (1, 3) and places.get(20) == (1, 3)
