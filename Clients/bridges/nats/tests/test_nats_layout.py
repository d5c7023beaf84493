"""The layer without I/O: names, subjects, records, tails, bucket entries,
settings and roles."""

import json

import pytest

from homed import pb

from homed_nats import layout as L
from homed_nats.config import SettingsError, load, role_for


def test_names_of_a_site():
    names = L.Names("garage-pi")
    assert names.stream == "HOMED_garage-pi" and names.bucket == "homed_garage-pi"
    assert names.stream_subjects == ["homed.garage-pi.journal.>"]
    assert names.event(1, 2, 3, "value") == "homed.garage-pi.journal.ev.1.2.3.value"
    assert names.event(1, 0, None, "layout") == "homed.garage-pi.journal.ev.1._._.layout"
    assert names.filter(home=1, kind="value") == "homed.garage-pi.journal.ev.1.*.*.value"
    assert names.write(7) == "homed.garage-pi.write.7" and names.home_of_write("homed.garage-pi.write.7") == 7
    assert names.home_of_write("homed.garage-pi.write.x") is None
    for bad in ("", "a.b", "a b", "x*", "a>"):
        with pytest.raises(ValueError, match="site"):
            L.Names(bad)


def test_an_event_record_carries_the_journal_the_seq_and_the_dedup_id():
    event = pb.Event(seq=42, kind=pb.EVENT_VALUE_CHANGED, time_ms=5,
                     value=pb.ValueChange(accessory_id=3, service_id=4, characteristic_id=5,
                                          value=pb.Value(int_value=7)))
    record = L.event_record(L.Names("home"), "J1", event, {3: (1, 2)}, {})
    assert record.subject == "homed.home.journal.ev.1.2.3.value"
    assert record.headers == {"Nats-Msg-Id": "J1:42", "Homed-Journal": "J1", "Homed-Seq": "42",
                              "Homed-Record": "event", "Homed-Kind": "value"}
    body = pb.SubscribeResponse.FromString(record.body)
    assert body.journal_id == "J1" and list(body.events) == [event]
    assert L.tail_of(record.headers) == ("J1", 42, "event")


def test_events_of_no_accessory_name_their_home_or_nothing():
    names = L.Names("home")
    layout = pb.Event(seq=1, kind=pb.EVENT_LAYOUT_CHANGED,
                      layout=pb.LayoutChange(action=pb.LAYOUT_MOVED, object=pb.OBJECT_ACCESSORY, object_id=9,
                                             home_id=1, parent_id=4))
    assert L.event_record(names, "J", layout, {}, {}).subject == "homed.home.journal.ev.1.4.9.layout"
    # Added, renamed or removed: under the room it is (was) in.
    for action in (pb.LAYOUT_ADDED, pb.LAYOUT_UPDATED, pb.LAYOUT_REMOVED):
        change = pb.Event(seq=4, kind=pb.EVENT_LAYOUT_CHANGED,
                          layout=pb.LayoutChange(action=action, object=pb.OBJECT_ACCESSORY, object_id=9, home_id=1))
        assert L.event_record(names, "J", change, {9: (1, 3)}, {}).subject == "homed.home.journal.ev.1.3.9.layout"
    scene = pb.Event(seq=2, kind=pb.EVENT_ACTION_SET_EXECUTED, action_set_id=6)
    assert L.event_record(names, "J", scene, {}, {("scene", 6): 1}).subject == "homed.home.journal.ev.1._._.scene"
    unknown = pb.Event(seq=3, kind=pb.EVENT_REACHABILITY_CHANGED,
                       reachability=pb.ReachabilityChange(accessory_id=99, reachable=True))
    assert L.event_record(names, "J", unknown, {}, {}).subject == "homed.home.journal.ev._._.99.reachability"


def test_a_snapshot_is_a_resync_record_pages_and_an_end():
    names = L.Names("home")
    chars = [pb.Characteristic(id=i, value=pb.Value(int_value=i)) for i in range(L.SNAPSHOT_PAGE + 1)]
    resync = L.marker_record(names, "J", L.RESYNC, 10, "the journal changed")
    pages = L.snapshot_records(names, "J", 10, chars)
    end = L.marker_record(names, "J", L.END, 10)
    assert [r.subject for r in [resync, *pages, end]] == [
        "homed.home.journal.sync.resync", "homed.home.journal.sync.snapshot", "homed.home.journal.sync.snapshot",
        "homed.home.journal.sync.end"]
    assert pb.SubscribeResponse.FromString(resync.body).marker.reason == "the journal changed"
    assert sum(len(pb.SubscribeResponse.FromString(p.body).snapshot) for p in pages) == len(chars)
    # <journal>:<seq>:<record>, the publish adding @<stream position> (which tells pages apart)
    assert [r.headers["Nats-Msg-Id"] for r in [resync, *pages, end]] == [
        "J:10:resync", "J:10:snapshot", "J:10:snapshot", "J:10:end"]
    assert pb.SubscribeResponse.FromString(end.body).marker.kind == pb.MARKER_SNAPSHOT_END


def test_a_message_homed_did_not_write_has_no_tail():
    assert L.tail_of(None) is None
    assert L.tail_of({"Homed-Journal": "J", "Homed-Seq": "x", "Homed-Record": "event"}) is None
    assert L.tail_of({"Homed-Journal": "J", "Homed-Seq": "3", "Homed-Record": "other"}) is None


def test_bucket_entries_are_json_with_seq_and_stream_seq():
    key, value = L.char_entry(5, 3, 4, pb.Value(float_value=1.5), 42, "J", 100, 7)
    assert key == "c.5"
    assert json.loads(value) == {"id": 5, "accessory": 3, "service": 4, "value": {"float_value": 1.5}, "seq": 42,
                                 "journal": "J", "stream_seq": 100, "updated_ms": 7}
    assert L.value_from_json(json.loads(value)["value"]) == pb.Value(float_value=1.5)
    assert L.cursor_entry(100, "J", 42) == ("cursor", b'{"journal":"J","seq":42,"stream_seq":100}')


def test_a_stream_with_other_settings_is_named_setting_by_setting():
    wanted = L.Names("home").stream_config(replicas=3)
    found = dict(wanted, subjects=["x.>"], num_replicas=1)
    assert L.stream_config_problems(found, wanted) == ["subjects is ['x.>'], not ['homed.home.journal.>']",
                                                       "num_replicas is 1, not 3"]
    assert L.stream_config_problems(dict(wanted, max_age=60), wanted) == []


def test_roles_from_account_and_user(tmp_path):
    config = tmp_path / "c.ini"
    config.write_text("[nats]\nsite = cellar\nservers = nats://a:4222, nats://b:4222\n"
                      "[roles]\nREMOTE/alice = user\nREMOTE/* = viewer\nOPS/* = admin\n")
    settings = load(str(config))
    assert settings.names.site == "cellar" and settings.servers == ["nats://a:4222", "nats://b:4222"]
    assert role_for(settings.roles, "REMOTE", "alice") == "user"
    assert role_for(settings.roles, "REMOTE", "bob") == "viewer"
    assert role_for(settings.roles, "OPS", None) == "admin"
    assert role_for(settings.roles, "OTHER", "x") == "none"
    assert role_for(settings.roles, None, None) == "none"
    config.write_text("[roles]\nREMOTE/alice = root\n")
    with pytest.raises(SettingsError, match="root"):
        load(str(config))
    config.write_text("[nats]\nsite = a.b\n")
    with pytest.raises(SettingsError, match="site"):
        load(str(config))
