"""homed.home against a real homed: a replica fed GetHome and a real
subscription stays equal to what a fresh GetHome says through writes, layout
changes, a provider adding and removing accessories and a daemon restart; its
paths and its refusals are homectl's, checked against the real homectl."""

import json
import os
import time

import pytest

import homed
from homed import pb
from homed.following import follow, follow_async
from homed.home import Home, PathError
from homed_testkit import HomedProcess, homectl, require_binary

WAIT = 10.0


def layout(client, **op):
    return client.call("ChangeLayout", pb.LayoutRequest(**op))


def comparable(response):
    """A GetHome's homes as a replica must hold them."""
    return [h.SerializeToString(deterministic=True) for h in response.homes]


def replica_homes(home):
    return [h.SerializeToString(deterministic=True) for h in home.ordered_homes()]


class Follower:
    """A replica fed by a real subscription on its own connection: through
    homed.following.follow, or (``auto_load=False``) the core alone, loaded when
    the test says."""

    def __init__(self, socket_path, home=None, auto_load=True):
        self.auto_load = auto_load
        self.client = homed.Client.connect(socket_path, client_name="pytest-home", call_timeout=WAIT)
        self.home = home if home is not None else Home()
        self.changes = []
        if not self.home.loaded:
            self.home.load(self.client.get_home())
        # Heartbeats carry the daemon's seq on a quiet stream: the replica then
        # knows it is up to date even when the last seq was no event it selects.
        request = pb.SubscribeRequest(heartbeat_ms=100)
        if auto_load:
            self.following = follow(self.client, self.home, request, timeout=0.2)
            self.stream = None
        else:
            self.stream = self.client.subscribe(self.home.resume(request))

    def step(self, timeout):
        if self.auto_load:
            self.changes.append(next(self.following))
            return
        message = self.stream.get(timeout)
        if message is None:
            raise AssertionError("the subscription ended")
        self.changes.append(self.home.apply(message))

    def until(self, condition, what, timeout=WAIT):
        deadline = time.monotonic() + timeout
        while not condition():
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"the replica never had {what}"
            try:
                self.step(min(remaining, 0.5))
            except TimeoutError:
                pass

    def settled_with(self, client, what):
        """Follows until the replica equals a GetHome taken now (events that
        the GetHome holds may still be on their way to the subscription)."""
        expected = client.get_home()
        self.until(lambda: self.home.seq >= expected.seq and not self.home.needs_load, what)
        assert replica_homes(self.home) == comparable(expected), what

    def close(self):
        if self.auto_load:
            self.following.close()
        else:
            self.stream.cancel()
        self.client.close()


@pytest.fixture
def follower(daemon):
    f = Follower(daemon.socket_path)
    yield f
    f.close()


@pytest.fixture
def client(daemon):
    with homed.Client.connect(daemon.socket_path, client_name="pytest-writer", call_timeout=WAIT) as c:
        yield c


def lamp_ids(home):
    aid = home.resolve_accessory("Living Room/Lamp")
    return aid, home.resolve_characteristic("Living Room/Lamp/On"), \
        home.resolve_characteristic("Living Room/Lamp/Brightness")


def test_values_written_by_another_connection_reach_the_replica_and_it_equals_a_fresh_get_home(follower, client):
    home = follower.home
    _, on, brightness = lamp_ids(home)
    before = home.value(brightness).int_value
    target = 17 if before != 17 else 18
    result = client.write({brightness: pb.Value(int_value=target), on: pb.Value(bool_value=False)})
    seq = max(r.seq for r in result.results)
    follower.until(lambda: home.seq >= seq, f"the write at seq {seq}")
    assert home.value(brightness) == pb.Value(int_value=target)
    assert home.value(on) == pb.Value(bool_value=False)
    assert any(brightness in c.values for c in follower.changes)
    loaded = home.loaded_seq
    follower.settled_with(client, "the written values")
    assert home.loaded_seq == loaded  # values need no GetHome


def test_layout_changes_are_applied_and_the_replica_loads_what_the_events_do_not_carry(follower, client):
    home = follower.home
    home_id = home.resolve_home(None)
    aid, on, _ = lamp_ids(home)
    study = layout(client, add_room=pb.AddRoom(home_id=home_id, name="Study")).created_id
    layout(client, assign_accessory=pb.AssignAccessory(accessory_id=aid, room_id=study))
    last = layout(client, rename=pb.RenameObject(id=aid, name="Reading Lamp"))
    follower.until(lambda: home.seq >= last.seq, "the rename")
    assert home.path_of(on) == "Demo Home/Study/Reading Lamp/Lightbulb/On"
    assert home.resolve_characteristic("Study/Reading Lamp/On") == on
    with pytest.raises(PathError) as gone:
        home.resolve_accessory("Living Room/Lamp")
    assert gone.value.code == pb.NOT_FOUND
    follower.settled_with(client, "the room, the move and the rename")

    # A removed room sends its accessories to the default room (a move each).
    last = layout(client, remove=pb.RemoveObject(id=study))
    follower.until(lambda: home.seq >= last.seq, "the removal")
    assert study not in home.rooms
    assert home.room_of(aid).id == home.homes[home_id].default_room_id
    follower.settled_with(client, "the removed room")
    layout(client, rename=pb.RenameObject(id=aid, name="Lamp"))
    layout(client, assign_accessory=pb.AssignAccessory(
        accessory_id=aid, room_id=home.resolve_room("Living Room", home_id)))
    follower.settled_with(client, "the lamp back in its place")


def test_paths_and_refusals_are_homectls(daemon, follower):
    home = follower.home
    every = sorted(c.id for c in home.characteristics.values() if c.properties.readable)
    shown = homectl(daemon, "get", *map(str, every), "-o", "json")
    assert shown.returncode == 0, shown.stderr
    paths = {item["id"]: item["path"] for item in json.loads(shown.stdout)}
    assert len(paths) == len(every) > 20
    for cid in every:
        assert home.path_of(cid) == paths[cid]
        # The path homectl prints names it again, unless siblings share a name.
        assert home.resolve_characteristic(paths[cid]) == cid
    for wrong in ("Kitchen", "Nope/Lamp/On", "Kitchen/Lamp/On", "Living Room/Lamp/Nope", "Lamp/Nope",
                  "Living Room/Lamp/Lightbulb/Nope", "Living Room/Lamp/Nope/On", "a/b/c/d/e/f", "Living Room//On",
                  "987654", "Living Room/Lamp"):
        refused = homectl(daemon, "get", wrong, "-o", "json")
        try:
            home.resolve_characteristic(wrong)
        except PathError as error:
            if wrong == "Living Room/Lamp":
                continue  # homectl's get reads every readable characteristic of an accessory
            assert refused.returncode != 0 and refused.stderr.strip() == f"homectl: {error.message}", wrong
        else:
            pytest.fail(f"{wrong!r} resolved to a characteristic, homectl said {refused.stderr}")


@pytest.mark.parametrize("argv, resolve", [
    (["rooms", "remove", "Nope"], lambda home: home.resolve_room("Nope")),
    (["rooms", "remove", "Demo Home/Nope"], lambda home: home.resolve_room("Demo Home/Nope")),
    (["rooms", "remove", "Living Room/Lamp"], lambda home: home.resolve_room("Living Room/Lamp")),
    (["zones", "remove", "Nope"], lambda home: home.resolve_named("Nope", "zone")),
    (["scenes", "remove", "Nope"], lambda home: home.resolve_named("Nope", "action set")),
    (["rename", "Living Room/Nope", "X"], lambda home: home.resolve_renamable("Living Room/Nope")),
    (["rename", "987654", "X"], lambda home: home.resolve_renamable("987654")),
])
def test_refusals_of_rooms_zones_scenes_and_renames_are_homectls(daemon, follower, argv, resolve):
    with pytest.raises(PathError) as error:
        resolve(follower.home)
    refused = homectl(daemon, *argv)
    assert refused.returncode != 0 and refused.stderr.strip() == f"homectl: {error.value.message}"


def test_what_homectl_renames_the_replica_names_alike(follower):
    home = follower.home
    aid = home.resolve_accessory("Living Room/Lamp")
    assert home.resolve_renamable("Lamp") == aid == home.resolve_renamable("Demo Home/Living Room/Lamp")
    assert home.resolve_renamable("Kitchen") == home.resolve_room("Kitchen")
    assert home.resolve_service("Living Room/Lamp") == home.resolve_service("Living Room/Lamp/Lightbulb")


def test_a_provider_adding_an_accessory_and_reporting_at_once_loses_no_value(daemon, client):
    """The layout event comes first, the value event after; a load taken before
    the report is older than the value the stream already brought."""
    follower = Follower(daemon.socket_path, auto_load=False)
    home = follower.home
    accessory = {"key": "desk", "name": "Desk Fan", "category": "fan", "services": [
        {"type": "Fan", "characteristics": [{"type": "On", "value": False}]}]}
    provider = homed.Provider("pytest-home", [accessory], socket_path=daemon.socket_path)
    provider.start()
    try:
        assert provider.wait_registered(WAIT)
        before_report = client.get_home()
        on = provider.id_of(homed.Ref("desk", "Fan", "On"))
        seq = provider.report({homed.Ref("desk", "Fan", "On"): True})
        follower.until(lambda: home.seq >= seq, "the report")
        assert home.needs_load and on not in home.characteristics
        assert home.load(before_report)
        assert home.value(on) == pb.Value(bool_value=True), "a GetHome older than the report took the value back"
        assert home.path_of(on) == "Demo Home/Default Room/Desk Fan/Fan/On"
        newer = client.get_home()
        assert home.load(newer) and not home.load(before_report)  # crossed answers: the older is refused
        follower.close()
        follower = Follower(daemon.socket_path, home=home)
        follower.settled_with(client, "the new accessory")
        provider.remove(["desk"])
        follower.until(lambda: on not in home.characteristics and not home.needs_load, "the removal")
        follower.settled_with(client, "the accessory removed")
    finally:
        provider.stop()
        follower.close()


def test_a_daemon_restart_on_a_fresh_home_is_a_resync_and_the_replica_becomes_the_new_home(tmp_path):
    directory = str(tmp_path)
    if len(os.path.join(directory, "homed.sock")) > 100:
        pytest.skip("the temporary directory is too long for a socket path")
    daemon = HomedProcess(require_binary(), directory, in_memory=True, extra_args=["--demo", "--no-simulator"])
    daemon.start()
    try:
        first = Follower(daemon.socket_path)
        old_journal = first.home.journal_id
        on = first.home.resolve_characteristic("Living Room/Lamp/On")
        first.close()
        daemon.restart()
        with daemon.client("pytest-writer") as writer:
            layout(writer, rename=pb.RenameObject(id=first.home.resolve_home(None), name="New Home"))
            # The replica resumes from where it stood: the new daemon's journal cannot.
            again = Follower(daemon.socket_path, home=first.home)
            try:
                again.until(lambda: any(c.resync for c in again.changes), "the resync")
                assert again.home.journal_id != old_journal
                again.settled_with(writer, "the new daemon's home")
                assert again.home.path_of(on).startswith("New Home/")
            finally:
                again.close()
    finally:
        daemon.kill()


def test_follow_async_resumes_across_a_killed_daemon_and_misses_no_value(tmp_path):
    """A daemon on a database keeps its journal across a restart: the replica
    resumes (no resync, no second load needed for values) and holds the value
    written while it was reconnecting."""
    import asyncio
    directory = str(tmp_path)
    if len(os.path.join(directory, "homed.sock")) > 100:
        pytest.skip("the temporary directory is too long for a socket path")
    daemon = HomedProcess(require_binary(), directory, extra_args=["--demo", "--no-simulator"]).start()

    async def scenario():
        home = Home()
        seen = []

        async def run():
            async for element, changes in follow_async(home, path=daemon.socket_path, client_name="pytest-home"):
                seen.append((element.connection, changes))

        task = asyncio.ensure_future(run())

        async def until(condition, what):
            deadline = asyncio.get_running_loop().time() + WAIT
            while not condition():
                assert not task.done(), task.exception() if task.done() else None
                assert asyncio.get_running_loop().time() < deadline, f"the replica never had {what}"
                await asyncio.sleep(0.02)

        try:
            await until(lambda: home.loaded, "a first load")
            brightness = home.resolve_characteristic("Living Room/Lamp/Brightness")
            with daemon.client("pytest-writer") as writer:
                seq = writer.write({brightness: pb.Value(int_value=31)}).results[0].seq
            await until(lambda: home.seq >= seq, "the first write")
            journal = home.journal_id
            daemon.kill()
            daemon.start()
            with daemon.client("pytest-writer") as writer:
                result = writer.write({brightness: pb.Value(int_value=62)}).results[0]
                assert result.code == pb.OK
                await until(lambda: home.value(brightness) == pb.Value(int_value=62), "the write after the restart")
                assert home.journal_id == journal and not any(c.resync for _, c in seen)
                assert max(connection for connection, _ in seen) >= 2
                expected = writer.get_home()
                await until(lambda: home.seq >= expected.seq, "the daemon's seq")
                assert replica_homes(home) == comparable(expected)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    try:
        asyncio.run(asyncio.wait_for(scenario(), 60))
    finally:
        daemon.kill()
