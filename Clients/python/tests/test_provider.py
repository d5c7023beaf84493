"""homed.provider against a real homed (conftest.homed_db: on a database of its
own, restartable) with real provider processes (provider_fixture.py, run with this
interpreter, killed for real with SIGKILL and always killed by pid at teardown).

Every wait has a timeout; the file takes about 8 s.
"""

import json
import os
import signal
import sys
import threading
import time

import pytest

from homed import Client, HomedError, pb
from homed.provider import Provider, Ref, accessory_message, from_value, to_value
from homed_testkit import CALL_TIMEOUT, EventLog, ProviderProcess, is_reachability, is_value, plain

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "provider_fixture.py")

LAMP = {"key": "lamp-1", "name": "Desk Lamp", "category": "LIGHTBULB", "manufacturer": "Acme",
        "services": [{"type": "Lightbulb", "characteristics": [{"type": "On"}, {"type": "Brightness"}]}]}
SENSOR = {"key": "sensor-1", "name": "Hall Sensor", "category": "SENSOR",
          "services": [{"type": "TemperatureSensor", "characteristics": [{"type": "CurrentTemperature"}]}]}
STATE = [["lamp-1", "Lightbulb", "On", False], ["lamp-1", "Lightbulb", "Brightness", 40],
         ["sensor-1", "TemperatureSensor", "CurrentTemperature", 20.0]]
ON, BRIGHTNESS, TEMPERATURE = "lamp-1|Lightbulb|On", "lamp-1|Lightbulb|Brightness", \
    "sensor-1|TemperatureSensor|CurrentTemperature"


# -- helpers ------------------------------------------------------------------

def state_path(daemon, provider_id):
    return os.path.join(daemon.directory, f"{provider_id}.state.json")


def set_device(daemon, provider_id, key, service, characteristic, value):
    """Changes a value on the fixture's "device" (its state file)."""
    path = state_path(daemon, provider_id)
    with open(path) as f:
        state = json.load(f)
    for entry in state:
        if entry[:3] == [key, service, characteristic]:
            entry[3] = value
    with open(path + ".tmp", "w") as f:
        json.dump(state, f)
    os.replace(path + ".tmp", path)


def start_provider(daemon, processes, provider_id="pyfix", spec=(LAMP, SENSOR), state=STATE, flags=(),
                   fresh_state=True):
    """A provider_fixture.py process; returns (process, its first "registered" event)."""
    spec_path = os.path.join(daemon.directory, f"{provider_id}.spec.json")
    with open(spec_path, "w") as f:
        json.dump(list(spec), f)
    if fresh_state:
        with open(state_path(daemon, provider_id), "w") as f:
            json.dump(state, f)
    argv = [sys.executable, FIXTURE, "--socket", daemon.socket_path, "--id", provider_id, "--spec", spec_path,
            "--state", state_path(daemon, provider_id), *flags]
    process = ProviderProcess(argv, os.path.join(daemon.directory, f"{provider_id}.log"))
    processes.append(process)
    process.start()
    return process, process.expect("registered", timeout=10)


def listed(client, provider_id=None):
    """{(provider, key): Accessory} of every provider's accessory."""
    response = client.call("ListAccessories", pb.ListAccessoriesRequest())
    return {(a.provider, a.provider_key): a for a in response.accessories
            if a.provider_key and (provider_id is None or a.provider == provider_id)}


def provider_info(client, provider_id):
    for info in client.call("ListProviders", pb.ListProvidersRequest()).providers:
        if info.provider_id == provider_id:
            return info
    return None


def read_value(client, cid, fresh=False, timeout=None):
    read = client.read([cid], fresh=fresh, timeout=timeout).reads[0]
    assert read.code == pb.OK, read.message
    return plain(read.value)


def layout(client, **op):
    return client.call("ChangeLayout", pb.LayoutRequest(**op))


@pytest.fixture
def client(homed_db):
    c = homed_db.client("pytest")
    yield c
    c.close()


# -- values and dicts (no daemon) ----------------------------------------------

def test_values_follow_the_characteristic_format():
    assert to_value(True, pb.FORMAT_BOOL) == pb.Value(bool_value=True)
    assert to_value(1, pb.FORMAT_BOOL) == pb.Value(bool_value=True)
    assert to_value(40, pb.FORMAT_UINT8) == pb.Value(uint_value=40)
    assert to_value(40.0, pb.FORMAT_UINT16) == pb.Value(uint_value=40)
    assert to_value(-3, pb.FORMAT_INT) == pb.Value(int_value=-3)
    assert to_value(21, pb.FORMAT_FLOAT) == pb.Value(float_value=21.0)
    assert to_value("x", pb.FORMAT_STRING) == pb.Value(string_value="x")
    assert to_value(b"\x01", pb.FORMAT_TLV8) == pb.Value(data_value=b"\x01")
    assert to_value(7) == pb.Value(int_value=7) and to_value(2 ** 64 - 1) == pb.Value(uint_value=2 ** 64 - 1)
    for bad, fmt in ((256, pb.FORMAT_UINT8), (-1, pb.FORMAT_UINT32), (2.5, pb.FORMAT_INT), ("1", pb.FORMAT_FLOAT),
                     (2, pb.FORMAT_BOOL), (3, pb.FORMAT_STRING), ("x", pb.FORMAT_DATA)):
        with pytest.raises((TypeError, ValueError)):
            to_value(bad, fmt)
    assert from_value(pb.Value(int_value=1), pb.FORMAT_BOOL) is True
    assert from_value(pb.Value(uint_value=5), pb.FORMAT_FLOAT) == 5.0
    assert from_value(pb.Value(string_value="s")) == "s" and from_value(pb.Value()) is None

    message = accessory_message({"key": "k", "name": "N", "category": "sensor", "services": [
        {"type": "TemperatureSensor", "characteristics": [
            {"type": "CurrentTemperature", "value": 21, "metadata": {"format": "float", "unit": "celsius",
                                                                   "min_value": 0}}, "StatusActive"]}]})
    assert message.category == pb.CATEGORY_SENSOR
    first, second = message.services[0].characteristics
    assert first.value == pb.Value(float_value=21.0)
    assert (first.metadata.format, first.metadata.unit) == (pb.FORMAT_FLOAT, pb.UNIT_CELSIUS)
    assert first.metadata.WhichOneof("min_present") == "min_value"  # present, though 0
    assert second.type == "StatusActive" and not second.HasField("value") and not second.HasField("metadata")


# -- connecting, restarts, kills ---------------------------------------------------

def test_accessories_appear_with_layout_events_and_keep_their_ids_across_a_daemon_restart(homed_db, processes,
                                                                                          client):
    events = EventLog(homed_db.socket_path, pb.SubscribeRequest(filter=pb.SubscriptionFilter(
        kinds=[pb.EVENT_LAYOUT_CHANGED, pb.EVENT_REACHABILITY_CHANGED])))
    try:
        events.wait_subscribed()
        process, registered = start_provider(homed_db, processes)
        lamp_id, sensor_id = registered["accessories"]["lamp-1"], registered["accessories"]["sensor-1"]
        added = events.wait_for(lambda e: e.kind == pb.EVENT_LAYOUT_CHANGED and e.layout.action == pb.LAYOUT_ADDED
                                and e.layout.object == pb.OBJECT_ACCESSORY, count=2)
        assert {e.layout.object_id: e.layout.name for _, e in added} == {lamp_id: "Desk Lamp",
                                                                         sensor_id: "Hall Sensor"}
        for _, event in added:
            assert (event.origin.kind, event.origin.name) == (pb.ORIGIN_PROVIDER, "pyfix")
    finally:
        events.close()

    accessories = listed(client, "pyfix")
    assert set(accessories) == {("pyfix", "lamp-1"), ("pyfix", "sensor-1")}
    lamp = accessories["pyfix", "lamp-1"]
    assert lamp.id == lamp_id and lamp.reachable and lamp.manufacturer == "Acme"
    assert lamp.category == pb.CATEGORY_LIGHTBULB
    assert [s.type_name for s in lamp.services] == ["AccessoryInformation", "Lightbulb"]
    assert [c.id for c in lamp.services[1].characteristics] == [registered["ids"][ON], registered["ids"][BRIGHTNESS]]
    # The values the registration gave are the cache's.
    assert read_value(client, registered["ids"][BRIGHTNESS]) == 40
    assert read_value(client, registered["ids"][TEMPERATURE]) == 20.0
    info = provider_info(client, "pyfix")
    assert info.connected and sorted(info.accessory_ids) == sorted([lamp_id, sensor_id])
    client.close()

    # The daemon restarts on its database (and the device changes meanwhile): the
    # same process reconnects and registers again by itself, and every id is the same.
    homed_db.stop()
    set_device(homed_db, "pyfix", "sensor-1", "TemperatureSensor", "CurrentTemperature", 24.0)
    homed_db.start()
    again = process.expect("registered", timeout=10)
    assert again["ids"] == registered["ids"] and again["accessories"] == registered["accessories"]
    # Values were left out of that registration, so the daemon asked the device.
    process.expect("read", timeout=5)
    with homed_db.client("after restart") as after:
        accessories = listed(after, "pyfix")
        assert {a.id for a in accessories.values()} == {lamp_id, sensor_id}
        assert all(a.reachable for a in accessories.values())
        assert read_value(after, registered["ids"][BRIGHTNESS]) == 40
        deadline = time.monotonic() + 5
        while read_value(after, registered["ids"][TEMPERATURE]) != 24.0:
            assert time.monotonic() < deadline, "the value the device got meanwhile never came"
            time.sleep(0.02)
        assert provider_info(after, "pyfix").connected
    assert process.proc.poll() is None


def test_a_killed_provider_is_unreachable_within_a_second_and_comes_back_with_its_room_scene_and_ids(
        homed_db, processes, client):
    process, registered = start_provider(homed_db, processes)
    ids, lamp_id, sensor_id = registered["ids"], registered["accessories"]["lamp-1"], \
        registered["accessories"]["sensor-1"]
    home_id = listed(client)["pyfix", "lamp-1"].home_id
    office = layout(client, add_room=pb.AddRoom(home_id=home_id, name="Office")).created_id
    layout(client, assign_accessory=pb.AssignAccessory(accessory_id=lamp_id, room_id=office))
    scene = layout(client, add_action_set=pb.AddActionSet(home_id=home_id, name="Evening")).created_id
    layout(client, add_action=pb.AddAction(action_set_id=scene, action=pb.CharacteristicWriteAction(
        characteristic_id=ids[BRIGHTNESS], value=pb.Value(int_value=10))))

    events = EventLog(homed_db.socket_path, pb.SubscribeRequest(filter=pb.SubscriptionFilter(
        accessory_ids=[lamp_id, sensor_id], kinds=[pb.EVENT_REACHABILITY_CHANGED, pb.EVENT_VALUE_CHANGED])))
    try:
        events.wait_subscribed()
        killed = time.monotonic()
        process.kill()
        for accessory_id in (lamp_id, sensor_id):
            (arrived, event), = events.wait_for(is_reachability(accessory_id, False), timeout=3)
            assert arrived - killed < 1.0, f"unreachable {arrived - killed:.3f} s after the kill"
            assert (event.origin.kind, event.origin.name) == (pb.ORIGIN_PROVIDER, "pyfix")
        assert not any(a.reachable for a in listed(client, "pyfix").values())
        # A write now fails at once: nobody would apply it.
        refused = client.write({ids[ON]: pb.Value(bool_value=True)}, timeout=5)
        assert refused.results[0].code == pb.UNAVAILABLE

        # The device changes while its provider is away; the provider comes back.
        set_device(homed_db, "pyfix", "sensor-1", "TemperatureSensor", "CurrentTemperature", 23.5)
        process, again = start_provider(homed_db, processes, fresh_state=False)
        assert again["ids"] == ids and again["accessories"] == registered["accessories"]
        for accessory_id in (lamp_id, sensor_id):
            events.wait_for(is_reachability(accessory_id, True), timeout=5)
        (_, change), = events.wait_for(is_value(ids[TEMPERATURE]), timeout=5)
        assert plain(change.value.value) == 23.5 and change.origin.kind == pb.ORIGIN_PROVIDER
        time.sleep(0.6)  # anything doubled would come now
        assert len(events.matching(is_value(ids[TEMPERATURE]))) == 1
        # Values that did not change are not published again.
        assert events.matching(lambda e: e.kind == pb.EVENT_VALUE_CHANGED and e.value.characteristic_id in
                               (ids[ON], ids[BRIGHTNESS])) == []
    finally:
        events.close()

    home = client.get_home()
    (lamp,) = [a for h in home.homes for a in h.accessories if a.id == lamp_id]
    assert lamp.room_id == office and lamp.reachable
    (evening,) = [s for h in home.homes for s in h.action_sets if s.id == scene]
    assert [(a.characteristic_id, plain(a.value)) for a in evening.actions] == [(ids[BRIGHTNESS], 10)]
    assert read_value(client, ids[TEMPERATURE]) == 23.5


def test_a_frozen_provider_loses_its_session_to_the_pings_and_registers_again_when_it_thaws(
        homed_db, processes, client):
    process, registered = start_provider(homed_db, processes)
    lamp_id = registered["accessories"]["lamp-1"]
    events = EventLog(homed_db.socket_path, pb.SubscribeRequest(filter=pb.SubscriptionFilter(
        accessory_ids=[lamp_id], kinds=[pb.EVENT_REACHABILITY_CHANGED])))
    try:
        events.wait_subscribed()
        frozen = time.monotonic()
        os.kill(process.pid, signal.SIGSTOP)  # its connection stays open; it answers nothing
        try:
            (arrived, event), = events.wait_for(is_reachability(lamp_id, False), timeout=3)
        finally:
            os.kill(process.pid, signal.SIGCONT)
        # Pings every 300-400 ms, each answered within twice that: under a second and a half.
        assert arrived - frozen < 1.5, f"unreachable {arrived - frozen:.3f} s after it froze"
        # Thawed, it finds its stream ended, connects again and registers by itself.
        again = process.expect("registered", timeout=5)
        assert again["ids"] == registered["ids"]
        events.wait_for(is_reachability(lamp_id, True), timeout=5)
        # A session is counted when it opens, its registration once answered: a stats
        # line may fall in between, so wait for one after both.
        stats = process.expect(
            "stats", where=lambda e: e.get("sessions") == 2 and e.get("registrations") == 2, timeout=5)
        assert stats["reconnects"] >= 1
    finally:
        events.close()
    assert provider_info(client, "pyfix").connected


def test_changes_made_while_homed_is_down_are_registered_when_it_is_back(homed_db, client):
    second = {"key": "lamp-2", "name": "Second Lamp", "category": "LIGHTBULB",
              "services": [{"type": "Lightbulb", "characteristics": [{"type": "On", "value": True}]}]}
    device = {Ref(*entry[:3]): entry[3] for entry in STATE}
    provider = Provider("pyinproc", [LAMP, SENSOR], socket_path=homed_db.socket_path,
                        on_read=lambda refs: {r: v for r, v in device.items() if r in refs})
    provider.start()
    try:
        assert provider.wait_registered(timeout=5)
        lamp_id = provider.accessory_id("lamp-1")
        client.close()
        homed_db.stop()
        assert provider.update([second]) is None  # not connected: kept for the next registration
        assert provider.remove(["sensor-1"]) is None
        with pytest.raises(HomedError) as unavailable:
            provider.report({("lamp-1", "Lightbulb", "On"): True})
        assert unavailable.value.code == pb.UNAVAILABLE
        homed_db.start()
        assert provider.wait_registered(timeout=10, count=2)
        with homed_db.client("after") as after:
            accessories = listed(after, "pyinproc")
            assert set(accessories) == {("pyinproc", "lamp-1"), ("pyinproc", "lamp-2")}
            assert accessories["pyinproc", "lamp-1"].id == lamp_id
            assert all(a.reachable for a in accessories.values())
            assert read_value(after, provider.id_of(("lamp-2", "Lightbulb", "On"))) is True
        assert provider.accessory_id("sensor-1") is None
    finally:
        provider.stop()


# -- requests to the provider ----------------------------------------------------

def test_a_write_the_provider_never_answers_ends_with_deadline_exceeded_while_reads_keep_flowing(
        homed_db, processes, client):
    process, registered = start_provider(homed_db, processes, flags=["--stall-writes"])
    ids, lamp_id = registered["ids"], registered["accessories"]["lamp-1"]
    events = EventLog(homed_db.socket_path, pb.SubscribeRequest(filter=pb.SubscriptionFilter(
        accessory_ids=[lamp_id], kinds=[pb.EVENT_REACHABILITY_CHANGED])))
    events.wait_subscribed()
    reader = homed_db.client("reader")
    done = threading.Event()
    stamps = {"cache": [], "fresh": []}
    failures = []

    def keep_reading(kind, cid, fresh):
        try:
            while not done.is_set():
                read = reader.read([cid], fresh=fresh, timeout=2.0).reads[0]
                if read.code != pb.OK:
                    failures.append(read.message)
                stamps[kind].append(time.monotonic())
        except HomedError as error:
            failures.append(str(error))

    threads = [threading.Thread(target=keep_reading, args=("cache", ids[BRIGHTNESS], False)),
               threading.Thread(target=keep_reading, args=("fresh", ids[TEMPERATURE], True))]
    writer = homed_db.client("writer")
    try:
        for thread in threads:
            thread.start()
        started = time.monotonic()
        try:
            code = writer.write({ids[BRIGHTNESS]: pb.Value(int_value=70)}, timeout=1.0).results[0].code
        except HomedError as error:  # the call's deadline may end it before the item's
            code = error.code
        ended = time.monotonic()
    finally:
        done.set()
        for thread in threads:
            thread.join(5)
        writer.close()
        reader.close()
    assert code == pb.DEADLINE_EXCEEDED
    assert 0.9 <= ended - started < 1.3, f"the write ended after {ended - started:.3f} s, its deadline is 1 s"
    assert failures == []
    during = {kind: len([t for t in times if started <= t <= ended]) for kind, times in stamps.items()}
    assert during["cache"] >= 20, during
    # The provider itself kept answering: fresh reads went through it meanwhile.
    assert during["fresh"] >= 5, during
    process.expect("write", timeout=1)  # the write did reach it
    # Not applied, and the provider never looked dead (it answered every ping).
    assert read_value(client, ids[BRIGHTNESS]) == 40
    info = provider_info(client, "pyfix")
    assert info.connected and info.timeouts >= 1
    assert events.matching(lambda e: True) == []
    events.close()


def test_a_fresh_read_reaches_the_provider(homed_db, processes, client):
    process, registered = start_provider(homed_db, processes)
    cid = registered["ids"][TEMPERATURE]
    assert read_value(client, cid) == 20.0
    set_device(homed_db, "pyfix", "sensor-1", "TemperatureSensor", "CurrentTemperature", 31.5)
    assert read_value(client, cid) == 20.0  # the cache does not know
    assert read_value(client, cid, fresh=True, timeout=5) == 31.5
    process.expect("read", where=lambda e: e["refs"] == [["sensor-1", "TemperatureSensor", "CurrentTemperature"]])
    assert read_value(client, cid) == 31.5  # and now the cache has it


def test_a_late_answer_is_dropped_and_changes_nothing(homed_db, processes, client):
    process, registered = start_provider(homed_db, processes, flags=["--read-delay", "1.0"])
    cid = registered["ids"][TEMPERATURE]
    events = EventLog(homed_db.socket_path, pb.SubscribeRequest(filter=pb.SubscriptionFilter(
        characteristic_ids=[cid], kinds=[pb.EVENT_VALUE_CHANGED])))
    try:
        events.wait_subscribed()
        set_device(homed_db, "pyfix", "sensor-1", "TemperatureSensor", "CurrentTemperature", 55.0)
        try:
            code = client.read([cid], fresh=True, timeout=0.4).reads[0].code
        except HomedError as error:
            code = error.code
        assert code == pb.DEADLINE_EXCEEDED
        # The provider answers a second later: the daemon says it no longer waits.
        stats = process.expect("stats", where=lambda e: e.get("answers_dropped", 0) >= 1, timeout=4)
        assert stats["answers_dropped"] == 1 and stats["reads"] == 1
        assert read_value(client, cid) == 20.0
        time.sleep(0.2)
        assert events.matching(is_value(cid)) == []
    finally:
        events.close()
    assert provider_info(client, "pyfix").timeouts >= 1


def test_a_command_whose_deadline_passed_while_it_waited_for_a_worker_is_not_handled(homed_db, client):
    # One worker, stuck for a second on the first read: the second read's
    # deadline passes while it waits, so its handler must not run at all.
    handled = []

    def on_read(refs):
        handled.append([tuple(r) for r in refs])
        time.sleep(1.0)
        return {ref: (ref.characteristic == "On" or 40) for ref in refs}

    lamp = {"key": "lamp-1", "name": "Desk Lamp", "category": "LIGHTBULB", "services": [
        {"type": "Lightbulb", "characteristics": [{"type": "On", "value": False},
                                                  {"type": "Brightness", "value": 40}]}]}
    provider = Provider("pylate", [lamp], on_read=on_read, socket_path=homed_db.socket_path, workers=1).start()
    try:
        assert provider.wait_registered(timeout=10), provider.error
        on, brightness = provider.id_of(("lamp-1", "Lightbulb", "On")), provider.id_of(
            ("lamp-1", "Lightbulb", "Brightness"))
        codes = []

        def fresh_read(cid):
            try:
                codes.append(client.read([cid], fresh=True, timeout=0.4).reads[0].code)
            except HomedError as error:
                codes.append(error.code)

        first = threading.Thread(target=fresh_read, args=(on,))
        first.start()
        time.sleep(0.1)
        fresh_read(brightness)
        first.join()
        assert codes == [pb.DEADLINE_EXCEEDED, pb.DEADLINE_EXCEEDED]
        deadline = time.monotonic() + 5
        while provider.stats.get("late", 0) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        stats = provider.stats
        assert stats.get("late") == 1 and stats.get("reads") == 1, stats
        assert handled == [[("lamp-1", "Lightbulb", "On")]]
    finally:
        provider.stop()


def test_two_providers_registering_the_same_key_get_their_own_accessories(homed_db, processes, client):
    alpha, registered_alpha = start_provider(homed_db, processes, provider_id="alpha", spec=[LAMP])
    beta, registered_beta = start_provider(homed_db, processes, provider_id="beta", spec=[LAMP])
    assert registered_alpha["accessories"]["lamp-1"] != registered_beta["accessories"]["lamp-1"]
    assert not set(registered_alpha["ids"].values()) & set(registered_beta["ids"].values())
    accessories = listed(client)
    assert {("alpha", "lamp-1"), ("beta", "lamp-1")} <= set(accessories)
    assert accessories["alpha", "lamp-1"].id == registered_alpha["accessories"]["lamp-1"]
    assert accessories["beta", "lamp-1"].id == registered_beta["accessories"]["lamp-1"]
    # A write to alpha's lamp goes to alpha alone.
    result = client.write({registered_alpha["ids"][ON]: pb.Value(bool_value=True)}, timeout=5).results[0]
    assert result.code == pb.OK, result.message
    assert result.seq > 0  # acknowledged once alpha confirmed, with its event's number
    alpha.expect("write", where=lambda e: e["values"] == [["lamp-1", "Lightbulb", "On", True]])
    assert read_value(client, registered_alpha["ids"][ON]) is True
    assert read_value(client, registered_beta["ids"][ON]) is False
    assert not any(e["event"] == "write" for e in beta.history)


# -- refused registrations ---------------------------------------------------------

GOOD = {"key": "good-first", "name": "Good Lamp", "category": "LIGHTBULB",
        "services": [{"type": "Lightbulb", "characteristics": ["On"]}]}
CUSTOM = "12345678-ABCD-4000-8000-000000000001"
MALFORMED = {
    "unknown format on a custom characteristic": (
        {"key": "bad-1", "name": "Odd", "category": "OTHER", "services": [{"type": "Switch", "characteristics": [
            "On", {"type": CUSTOM, "type_name": "Wobble", "properties": {"readable": True},
                   "metadata": {"format": 99}}]}]},
        ['accessory 2 (key "bad-1")', "service 1", "characteristic 2", "format", "99"]),
    "min above max": (
        {"key": "bad-2", "name": "Odd", "category": "LIGHTBULB", "services": [{"type": "Lightbulb", "characteristics": [
            "On", {"type": "Brightness", "metadata": {"min_value": 80, "max_value": 20}}]}]},
        ['accessory 2 (key "bad-2")', "service 1", "characteristic 2", "minimum 80", "maximum 20"]),
    "a required characteristic missing": (
        {"key": "bad-3", "name": "Odd", "category": "LIGHTBULB",
         "services": [{"type": "Lightbulb", "characteristics": ["Brightness"]}]},
        ['accessory 2 (key "bad-3")', "service 1", "a Lightbulb service requires On, which is missing"]),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_registration_is_refused_naming_the_item_and_registers_nothing(homed_db, client, case):
    bad, fragments = MALFORMED[case]
    provider_id = "bad-" + str(list(MALFORMED).index(case))
    provider = Provider(provider_id, [GOOD, bad], socket_path=homed_db.socket_path).start()
    try:
        assert not provider.wait_registered(timeout=5)  # refused for good: run() ended
        error = provider.error
        assert isinstance(error, HomedError) and error.code == pb.INVALID_ARGUMENT, error
        for fragment in fragments:
            assert fragment in error.message, (fragment, error.message)
    finally:
        provider.stop()
    assert listed(client, provider_id) == {}  # not even the good accessory before it
    info = provider_info(client, provider_id)
    assert info is None or list(info.accessory_ids) == []


def test_ten_thousand_accessories_in_one_call_are_refused_and_register_nothing(homed_db, client):
    request = pb.RegisterAccessoriesRequest()
    request.accessories.append(accessory_message(GOOD))
    for n in range(9999):
        request.accessories.add(key=f"many-{n}", name=f"Lamp {n}", category=pb.CATEGORY_LIGHTBULB).services.add(
            type="Lightbulb").characteristics.add(type="On")
    with Client.connect(homed_db.socket_path, client_name="many", call_timeout=CALL_TIMEOUT) as provider:
        stream = provider._open(pb.full_method_name("OpenProvider"),
                                pb.OpenProviderRequest(provider_id="many").SerializeToString(), None)
        assert stream.items.get(timeout=5)[0] == "message"  # opened
        with pytest.raises(HomedError) as refused:
            provider.call("RegisterAccessories", request, timeout=10)
    assert refused.value.code == pb.INVALID_ARGUMENT
    assert "10000 accessories" in refused.value.message and "1000 per call" in refused.value.message
    assert listed(client, "many") == {}


def test_more_than_a_thousand_accessories_are_registered_in_parts_bridges_first(homed_db, client):
    bridge = {"key": "bridge", "name": "Bridge", "category": "BRIDGE",
              "services": [{"type": "Switch", "characteristics": [{"type": "On", "value": False}]}]}
    many = [{"key": f"switch-{n}", "name": f"Switch {n}", "category": "SWITCH", "bridge_key": "bridge",
             "services": [{"type": "Switch", "characteristics": [{"type": "On", "value": n % 2 == 1}]}]}
            for n in range(1200)]
    responses = []
    provider = Provider("pymany", many + [bridge], socket_path=homed_db.socket_path,  # the bridge listed last
                        on_registered=responses.append).start()
    try:
        assert provider.wait_registered(timeout=20), provider.error
        assert [len(r.accessories) for r in responses] == [1000, 201]
        assert responses[0].accessories[0].provider_key == "bridge"
        accessories = listed(client, "pymany")
        assert len(accessories) == 1201
        bridge_id = provider.accessory_id("bridge")
        assert all(a.bridge_id == bridge_id for (_, key), a in accessories.items() if key != "bridge")
        assert read_value(client, provider.id_of(("switch-1199", "Switch", "On"))) is True
        assert len(provider.refs) == 1201 * 7  # AccessoryInformation's six, and On
    finally:
        provider.stop()


def test_a_registration_whose_response_exceeds_the_frame_size_is_asked_again_in_parts(homed_db, client):
    lamps = [dict(LAMP, key=f"lamp-{n}", name=f"Lamp {n}") for n in range(100)]  # ~1.3 kB each in the response
    responses = []
    provider = Provider("pysmall", lamps, socket_path=homed_db.socket_path, max_frame_size=65536,
                        on_registered=responses.append).start()
    try:
        assert provider.wait_registered(timeout=10), provider.error
        assert len(responses) > 1 and sum(len(r.accessories) for r in responses) == 100
        assert all(r.ByteSize() < 65536 for r in responses)
        assert len(listed(client, "pysmall")) == 100
        assert all(provider.id_of((f"lamp-{n}", "Lightbulb", "Brightness")) for n in range(100))
    finally:
        provider.stop()


# -- the API in one process -----------------------------------------------------

def test_report_nowait_sends_at_once_and_never_waits_for_the_socket(homed_db, client):
    sensor = {"key": "nowait-sensor", "name": "Nowait Sensor", "category": "SENSOR",
              "services": [{"type": "TemperatureSensor", "characteristics": [
                  {"type": "CurrentTemperature", "value": 18.0}]}]}
    provider = Provider("nowait", [sensor], socket_path=homed_db.socket_path).start()
    try:
        assert provider.wait_registered(timeout=5)
        ref = Ref("nowait-sensor", "TemperatureSensor", "CurrentTemperature")
        cid = provider.id_of(ref)
        pending = provider.report_nowait({ref: 23.5})
        assert pending is not None
        seq = pending.result()
        assert seq > 0 and pending.done() and pending.result() == seq  # the answer is kept
        assert read_value(client, cid) == 23.5
        # What is checked before sending raises at once, as report() does.
        with pytest.raises(HomedError) as unknown:
            provider.report_nowait({("nowait-sensor", "TemperatureSensor", "Nope"): 1})
        assert unknown.value.code == pb.NOT_FOUND
        # Another thread writing on the connection: nothing sent, None, no wait.
        connection = provider._session.client
        with connection._send_lock:
            started = time.monotonic()
            assert provider.report_nowait({ref: 30.0}) is None
            assert time.monotonic() - started < CALL_TIMEOUT
        assert not connection._core.calls or all(c.method != "home.v1.HomeService/ReportValues"
                                                 for c in connection._core.calls.values())
        assert provider.report({ref: 24.0}) > seq and read_value(client, cid) == 24.0  # 30.0 never went
        # Not connected: UNAVAILABLE before anything is sent.
        provider.stop()
        with pytest.raises(HomedError) as gone:
            provider.report_nowait({ref: 25.0})
        assert gone.value.code == pb.UNAVAILABLE
    finally:
        provider.stop()


def test_in_process_provider_reads_reports_reachability_updates_and_removals(homed_db, client):
    device = {"CurrentTemperature": 19.5}
    writes = []
    registrations = []
    sensor = {"key": "py-sensor", "name": "Python Sensor", "category": "CATEGORY_SENSOR",
              "services": [{"type": "TemperatureSensor", "characteristics": [{"type": "CurrentTemperature"}]}]}

    def on_write(values, atomic):
        writes.append((values, atomic))
        return {ref: PermissionError(f"{ref} is read-only on the device") for ref in values
                if ref.characteristic == "Brightness"}

    provider = Provider("pysensor", [sensor], socket_path=homed_db.socket_path, on_write=on_write,
                        on_read=lambda refs: {r: device[r.characteristic] for r in refs if r.characteristic in device},
                        on_registered=registrations.append).start()
    try:
        assert provider.wait_registered(timeout=5)
        ref = Ref("py-sensor", "TemperatureSensor", "CurrentTemperature")
        cid = provider.id_of(ref)
        assert provider.ref_of(cid) == ref and provider.accessory_id("py-sensor") == registrations[0].accessories[0].id
        assert provider.id_of(("py-sensor", "AccessoryInformation", "Name")) is not None
        # Given no value, the daemon asked the provider for it.
        deadline = time.monotonic() + 5
        while read_value(client, cid) != 19.5:
            assert time.monotonic() < deadline, "the daemon did not read the value the registration left out"
            time.sleep(0.02)
        device["CurrentTemperature"] = 21.0
        assert read_value(client, cid, fresh=True, timeout=5) == 21.0
        assert provider.report({ref: 22.5}) > 0
        assert read_value(client, cid) == 22.5
        # A device's reading is a fact: outside the catalog's -273.1 … 1000 °C it is kept.
        assert provider.report({ref: 5000.0}) > 0
        assert read_value(client, cid) == 5000.0
        with pytest.raises(HomedError) as refused:  # what the format cannot hold is refused
            provider.report({ref: "hot"})
        assert refused.value.code == pb.INVALID_ARGUMENT
        with pytest.raises(HomedError) as unknown:
            provider.report({("py-sensor", "TemperatureSensor", "Nope"): 1})
        assert unknown.value.code == pb.NOT_FOUND

        accessory_id = provider.accessory_id("py-sensor")
        provider.set_reachable("py-sensor", False)
        assert not listed(client, "pysensor")["pysensor", "py-sensor"].reachable
        provider.set_reachable("py-sensor", True)

        # A lamp added while connected; a write that the device refuses for one item.
        provider.update([{"key": "py-lamp", "name": "Python Lamp", "category": "LIGHTBULB", "services": [
            {"type": "Lightbulb", "key": "main", "characteristics": [{"type": "On", "value": False},
                                                                     {"type": "Brightness", "value": 10}]}]}])
        on, brightness = Ref("py-lamp", "main", "On"), Ref("py-lamp", "main", "Brightness")
        assert provider.id_of(on) and provider.id_of(brightness)
        results = client.write({provider.id_of(on): pb.Value(int_value=1),
                                provider.id_of(brightness): pb.Value(int_value=20)}, timeout=5).results
        assert [r.code for r in results] == [pb.OK, pb.PERMISSION_DENIED]
        assert "read-only on the device" in results[1].message
        assert writes[-1] == ({on: True, brightness: 20}, False)  # as Python values of their formats
        assert read_value(client, provider.id_of(on)) is True and read_value(client, provider.id_of(brightness)) == 10
        result = client.write({provider.id_of(on): pb.Value(bool_value=False)}, atomic=True, timeout=5).results[0]
        assert result.code == pb.OK and writes[-1] == ({on: False}, True)
        identify = Ref("py-lamp", "AccessoryInformation", "Identify")  # write-only, the daemon's service
        assert client.write({provider.id_of(identify): pb.Value(bool_value=True)}, timeout=5).results[0].code == pb.OK
        assert writes[-1] == ({identify: True}, False)

        provider.remove(["py-lamp"])
        assert set(listed(client, "pysensor")) == {("pysensor", "py-sensor")}
        assert provider.id_of(on) is None and provider.accessory_id("py-sensor") == accessory_id
    finally:
        provider.stop()
    assert not provider.connected
    deadline = time.monotonic() + 2
    while listed(client, "pysensor")["pysensor", "py-sensor"].reachable:
        assert time.monotonic() < deadline, "stop() did not leave the accessory unreachable"
        time.sleep(0.02)


def test_a_second_connection_cannot_take_a_provider_id_that_is_served(homed_db, processes):
    start_provider(homed_db, processes, provider_id="taken", spec=[LAMP])
    second = Provider("taken", [LAMP], socket_path=homed_db.socket_path, takeover_wait=0.5)
    started = time.monotonic()
    second.start()
    try:
        # It returns as soon as the provider gives up (its error set); the bound is only against a hang.
        assert not second.wait_registered(timeout=60)
        assert second.error is not None, "it never gave up"
        assert second.error.code == pb.ALREADY_EXISTS and "taken" in second.error.message
        assert time.monotonic() - started >= 0.5  # it tried again for takeover_wait first
    finally:
        second.stop()


def test_a_new_instance_takes_over_from_a_hung_one_once_it_misses_a_ping(homed_db, processes, client):
    hung, registered = start_provider(homed_db, processes, provider_id="takeover", spec=[LAMP])
    os.kill(hung.pid, signal.SIGSTOP)  # hung: its connection stays open and holds the id
    # A takeover_wait far longer than a ping's deadline: what frees the id is the
    # hung one's missed ping (it never closes its connection), as the audit says.
    successor = Provider("takeover", [LAMP], socket_path=homed_db.socket_path, takeover_wait=60.0)
    successor.start()
    try:
        assert successor.wait_registered(timeout=60), successor.error
        audit = client.call("ReadHistory", pb.ReadHistoryRequest(
            filter=pb.SubscriptionFilter(kinds=[pb.EVENT_AUDIT])))
        gone = [e.audit.detail for e in audit.events if e.audit.action == "provider-disconnected"]
        assert any('provider "takeover"' in d and "did not answer a liveness ping" in d for d in gone), gone
        assert successor.accessory_id("lamp-1") == registered["accessories"]["lamp-1"]
        assert successor.id_of(("lamp-1", "Lightbulb", "On")) == registered["ids"][ON]
        info = provider_info(client, "takeover")
        assert info.connected and info.client_name == "provider takeover"
    finally:
        successor.stop()
        hung.cleanup()
