"""homed.aio against a real homed: the demo daemon of conftest.daemon for calls
and subscriptions; daemons of their own (homed_testkit.HomedProcess, killed by
pid) for the resuming subscription across restarts and for a provider.

No pytest plugin: each test runs its coroutine with asyncio.run, and every wait
is bounded (`run` gives a whole test 30 s; single waits have their own)."""

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import tempfile

import pytest

import homed
import homed.aio
from homed import pb
from homed.provider import Ref
from homed_testkit import HomedProcess, require_binary

WAIT = 10.0  # the longest any one await may take


def run(coroutine, timeout: float = 30.0):
    """Runs a test's coroutine in a fresh event loop, bounded in time."""
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def lamp(client):
    """(accessory, {type_name: Characteristic} of its Lightbulb service)."""
    home = await client.get_home()
    for h in home.homes:
        for accessory in h.accessories:
            if accessory.name == "Lamp":
                for service in accessory.services:
                    if service.type_name == "Lightbulb":
                        return accessory, {c.type_name: c for c in service.characteristics}
    pytest.fail("the demo home has no accessory named Lamp with a Lightbulb service")


async def next_of(iterator, timeout: float = WAIT):
    return await asyncio.wait_for(iterator.__anext__(), timeout)


def connect(daemon, name="pytest-aio"):
    return homed.aio.connect(daemon.socket_path, client_name=name, call_timeout=WAIT)


def demo_args(binary):
    """--demo, without the simulator (a still home) when this homed has the flag."""
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
    return ["--demo", "--no-simulator"] if "--no-simulator" in help_text.stdout + help_text.stderr else ["--demo"]


@pytest.fixture
def restartable():
    """A demo homed on a database in a fresh directory, which the test may kill
    and start again on the same socket (killed by pid at teardown)."""
    binary = require_binary()
    directory = tempfile.mkdtemp(prefix="homed-aio-", dir="/tmp")
    daemon = HomedProcess(binary, directory, extra_args=demo_args(binary))
    extra = []
    try:
        daemon.start()
        yield daemon, extra
    finally:
        daemon.kill()
        for other in extra:
            other.kill()
        shutil.rmtree(directory, ignore_errors=True)


def kill_and_wait(daemon) -> None:
    """SIGKILL by pid, for real, and reap it."""
    os.kill(daemon.proc.pid, signal.SIGKILL)
    daemon.proc.wait(5)


# -- calls ----------------------------------------------------------------------

def test_hello_get_home_and_status(daemon):
    async def body():
        async with connect(daemon) as client:
            assert client.hello_reply.protocol_version == 1 and client.hello_reply.journal_id
            assert client.connection_id > 0
            accessory, chars = await lamp(client)
            assert {"On", "Brightness"} <= set(chars) and chars["On"].accessory_id == accessory.id
            assert await client.get_home(page_size=1) == await client.call("GetHome", pb.GetHomeRequest())
            status = await client.get_status()
            assert status.connection_id == client.connection_id
            assert await client.ping() < 5
        assert client.closed
    run(body())


def test_read_write_round_trip_and_an_item_error(daemon):
    async def body():
        async with connect(daemon) as client:
            _, chars = await lamp(client)
            brightness = chars["Brightness"]
            before = (await client.read([brightness.id])).reads[0].value.int_value
            target = 37 if before != 37 else 63
            result = (await client.write({brightness.id: pb.Value(int_value=target)})).results[0]
            assert result.code == pb.OK and result.seq > 0, result.message
            assert (await client.read([brightness.id])).reads[0].value.int_value == target
            # 150 is above the maximum: that item fails, the call does not.
            item = (await client.write({brightness.id: pb.Value(int_value=150)})).results[0]
            assert item.code == pb.INVALID_ARGUMENT and "150" in item.message
            # An id that names nothing: the read's item says NOT_FOUND.
            missing = (await client.read([999999])).reads[0]
            assert missing.code == pb.NOT_FOUND
            assert (await client.read([brightness.id])).reads[0].value.int_value == target
    run(body())


def test_errors_are_typed(daemon):
    async def body():
        async with connect(daemon) as client:
            with pytest.raises(homed.InvalidArgument) as bad:
                await client.call("ChangeLayout", pb.LayoutRequest())  # names no operation
            assert bad.value.code == pb.INVALID_ARGUMENT and bad.value.code_name == "INVALID_ARGUMENT"
            assert isinstance(bad.value, homed.HomedError) and bad.value.message
            with pytest.raises(homed.Unimplemented) as unknown:
                await client.call("home.v1.HomeService/NoSuchMethod", b"")
            assert "NoSuchMethod" in unknown.value.message
            with pytest.raises(homed.NotFound):
                await client.call("GetHome", {"homeId": 987654})
            with pytest.raises(homed.DeadlineExceeded):  # a deadline that has passed already
                await client.get_status(timeout=0)
            assert (await client.get_status()).connection_id == client.connection_id  # still usable
    run(body())


def test_calls_from_many_tasks_share_one_connection(daemon):
    async def body():
        async with connect(daemon) as client:
            _, chars = await lamp(client)
            ids = [c.id for c in chars.values()]
            responses = await asyncio.gather(*(client.read(ids) for _ in range(50)))
            assert all([r.characteristic_id for r in response.reads] == ids for response in responses)
    run(body())


def test_a_subscription_sees_another_connections_write_and_ends_on_cancel(daemon):
    async def body():
        async with connect(daemon) as client, connect(daemon, "pytest-aio-writer") as writer:
            _, chars = await lamp(client)
            on = chars["On"]
            request = pb.SubscribeRequest()
            request.filter.characteristic_ids.append(on.id)
            async with client.subscribe(request) as stream:
                first = await next_of(stream)
                assert first.marker.kind == pb.MARKER_SUBSCRIBED
                current = (await writer.read([on.id])).reads[0].value.bool_value
                write = (await writer.write({on.id: pb.Value(bool_value=not current)})).results[0]
                assert write.code == pb.OK, write.message
                found = None
                while found is None:
                    message = await next_of(stream)
                    found = next((e for e in message.events if e.seq == write.seq), None)
                assert found.value.characteristic_id == on.id and found.value.value.bool_value == (not current)
                assert found.origin.name == "pytest-aio-writer"
                assert found.origin.connection_id == writer.connection_id
                stream.cancel()
                remaining = []
                async for message in stream:  # ends (CANCELLED, a normal end after cancel())
                    remaining.append(message)
                assert stream.done
    run(body())


# -- nothing listening -------------------------------------------------------------

def test_no_daemon_is_a_human_error_naming_the_path_its_source_and_how_to_start_homed(monkeypatch):
    directory = tempfile.mkdtemp(prefix="homed-none-", dir="/tmp")
    try:
        missing = os.path.join(directory, "missing.sock")
        refused = os.path.join(directory, "refused.sock")  # a socket file that nobody serves
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(refused)
        s.close()

        async def failure(path=None):
            with pytest.raises(homed.DaemonNotRunning) as raised:
                await homed.aio.connect(path, timeout=5)
            return raised.value

        for path in (missing, refused):
            error = run(failure(path))
            assert isinstance(error, homed.Unavailable) and isinstance(error, ConnectionError)
            assert error.code == pb.UNAVAILABLE and error.path == path
            assert path in error.message and "the `path` argument" in error.message
            assert "`homed`" in error.message and "homed --demo" in error.message and "HOMED_SOCKET" in error.message
        monkeypatch.setenv("HOMED_SOCKET", missing)
        assert "from $HOMED_SOCKET" in run(failure()).message
        monkeypatch.delenv("HOMED_SOCKET")
        monkeypatch.setenv("XDG_RUNTIME_DIR", directory)
        assert "the default for this user" in run(failure()).message
        # The synchronous client says the same.
        with pytest.raises(homed.DaemonNotRunning) as sync_error:
            homed.Client.connect(missing)
        assert missing in str(sync_error.value) and "homed --demo" in str(sync_error.value)

        async def resuming_first_failure():
            with pytest.raises(homed.DaemonNotRunning):
                await next_of(homed.aio.resuming_subscription(None, missing))
        run(resuming_first_failure())
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# -- resuming subscriptions ----------------------------------------------------------

class Collected:
    """What a resuming subscription yielded: its elements, and views of them."""

    def __init__(self):
        self.elements = []

    def values(self, connection=None):
        return [e_.value.value.int_value for el in self.elements if connection in (None, el.connection)
                for e_ in el.message.events if e_.kind == pb.EVENT_VALUE_CHANGED]

    def markers(self, kind):
        return [el for el in self.elements if el.message.marker.kind == kind]

    def snapshot_values(self, connection):
        return [c.value.int_value for el in self.elements if el.connection == connection
                for c in el.message.snapshot]

    async def until(self, subscription, done, timeout: float = 15.0):
        """Takes elements until ``done(self)`` holds."""
        async def take():
            while not done(self):
                self.elements.append(await subscription.__anext__())
        await asyncio.wait_for(take(), timeout)


async def brightness_id(client):
    _, chars = await lamp(client)
    return chars["Brightness"].id


def test_a_resuming_subscription_resumes_a_dropped_connection_with_exactly_what_it_missed(restartable):
    daemon, _ = restartable

    async def body():
        async with connect(daemon, "pytest-aio-writer") as writer:
            cid = await brightness_id(writer)
            request = pb.SubscribeRequest(filter=pb.SubscriptionFilter(characteristic_ids=[cid]))
            got = Collected()
            async with homed.aio.resuming_subscription(request, daemon.socket_path, "pytest-aio-resuming") as changes:
                await got.until(changes, lambda g: g.markers(pb.MARKER_SUBSCRIBED))
                for value in (11, 12):
                    assert (await writer.write({cid: pb.Value(int_value=value)})).results[0].code == pb.OK
                await got.until(changes, lambda g: 12 in g.values())
                # The socket drops (the daemon lives on); values change meanwhile.
                changes.client._writer.transport.abort()
                for value in (13, 14):
                    await writer.write({cid: pb.Value(int_value=value)})
                await got.until(changes, lambda g: 14 in g.values())
                last = (await writer.write({cid: pb.Value(int_value=15)})).seq
                await got.until(changes, lambda g: 15 in g.values())
        assert got.values() == [11, 12, 13, 14, 15], "each once, in order"
        seqs = [e.seq for el in got.elements for e in el.message.events]
        assert seqs == sorted(set(seqs)) and seqs[-1] == last
        assert not got.markers(pb.MARKER_RESYNC), "the journal held what was missed"
        assert got.elements[-1].connection == 2
    run(body())


def test_a_resuming_subscription_survives_a_daemon_restart(restartable):
    """Killed with SIGKILL and started again on its database, homed continues its
    journal (it keeps history): the subscription resumes with what was written
    while it was away, as events, and no resync."""
    daemon, _ = restartable

    async def body():
        async with connect(daemon, "pytest-aio-writer") as writer:
            cid = await brightness_id(writer)
        request = pb.SubscribeRequest(filter=pb.SubscriptionFilter(characteristic_ids=[cid]))
        got = Collected()
        async with homed.aio.resuming_subscription(request, daemon.socket_path, "pytest-aio-resuming") as changes:
            await got.until(changes, lambda g: g.markers(pb.MARKER_SUBSCRIBED))
            async with connect(daemon, "pytest-aio-writer") as writer:
                for value in (21, 22):
                    await writer.write({cid: pb.Value(int_value=value)})
            await got.until(changes, lambda g: 22 in g.values())
            kill_and_wait(daemon)  # SIGKILL: the acknowledged values and events are saved all the same
            await asyncio.get_running_loop().run_in_executor(None, daemon.start)  # same socket, same database
            async with connect(daemon, "pytest-aio-writer") as writer:
                for value in (23, 24, 25):  # the first while the subscription may be away
                    await writer.write({cid: pb.Value(int_value=value)})
                await got.until(changes, lambda g: 25 in g.values())
        assert got.values(1) == [21, 22]
        assert not got.markers(pb.MARKER_RESYNC), "the journal went on across the restart"
        assert got.values(2) == [23, 24, 25]
        # One journal throughout: the numbers go on, none repeated.
        seqs = [e.seq for el in got.elements for e in el.message.events]
        assert seqs == sorted(set(seqs))
        assert len({el.message.journal_id for el in got.elements if el.message.events}) == 1
    run(body(), timeout=45)


def test_a_resuming_subscription_surfaces_the_resync_when_the_journal_changed(restartable):
    daemon, extra = restartable

    async def make_request(client):  # resolved again on every connection: ids may change
        return pb.SubscribeRequest(filter=pb.SubscriptionFilter(characteristic_ids=[await brightness_id(client)]))

    async def body():
        got = Collected()
        async with homed.aio.resuming_subscription(make_request, daemon.socket_path, "pytest-aio-resync") as changes:
            await got.until(changes, lambda g: g.markers(pb.MARKER_SUBSCRIBED))
            async with connect(daemon, "pytest-aio-writer") as writer:
                await writer.write({await brightness_id(writer): pb.Value(int_value=31)})
            await got.until(changes, lambda g: 31 in g.values())
            journal = got.elements[-1].message.journal_id
            kill_and_wait(daemon)
            # Another daemon, with a fresh database, on the same socket.
            fresh = HomedProcess(daemon.binary, daemon.directory, in_memory=True, extra_args=demo_args(daemon.binary))
            extra.append(fresh)
            await asyncio.get_running_loop().run_in_executor(None, fresh.start)
            await got.until(changes, lambda g: g.markers(pb.MARKER_SNAPSHOT_END))
        resync = got.markers(pb.MARKER_RESYNC)[0]
        assert resync.connection == 2 and resync.message.journal_id != journal
        assert "journal changed" in resync.message.marker.reason and journal in resync.message.marker.reason
        assert got.snapshot_values(2) and 31 not in got.snapshot_values(2)  # the fresh home's value
    run(body(), timeout=45)


def test_a_resuming_subscription_raises_errors_other_than_unavailable(daemon):
    async def body():
        request = pb.SubscribeRequest(queue_limit=100000)  # above the 16 384 allowed
        with pytest.raises(homed.InvalidArgument):
            async with homed.aio.resuming_subscription(request, daemon.socket_path) as changes:
                while True:
                    await next_of(changes)
    run(body())


# -- a provider ------------------------------------------------------------------------

LAMP = {"key": "lamp-1", "name": "Aio Lamp", "category": "LIGHTBULB",
        "services": [{"type": "Lightbulb", "characteristics": [{"type": "On", "value": False},
                                                               {"type": "Brightness", "value": 10}]}]}


def test_a_provider_serves_writes_answers_pings_while_a_handler_runs_and_reports(homed_db):
    on = Ref("lamp-1", "Lightbulb", "On")
    brightness = Ref("lamp-1", "Lightbulb", "Brightness")
    writes = []

    async def on_write(values, atomic):
        writes.append((values, atomic))
        if brightness in values:
            await asyncio.sleep(1.5)  # a slow device: longer than a liveness ping may wait (600 ms)
        return None

    async def on_read(refs):
        return {ref: 10 for ref in refs if ref == brightness}

    async def body():
        async with homed.aio.Provider("aio-lamps", [LAMP], on_read=on_read, on_write=on_write,
                                      socket_path=homed_db.socket_path) as provider:
            assert await provider.wait_registered(timeout=WAIT), provider.error
            assert provider.connected and provider.accessory_id("lamp-1")
            async with connect(homed_db, "pytest-aio-writer") as writer:
                result = (await writer.write({provider.id_of(on): pb.Value(bool_value=True)})).results[0]
                assert result.code == pb.OK and result.seq > 0, result.message  # acknowledged once the provider confirmed
                assert writes == [({on: True}, False)]
                assert (await writer.read([provider.id_of(on)])).reads[0].value.bool_value is True

                slow = (await writer.write({provider.id_of(brightness): pb.Value(int_value=40)})).results[0]
                assert slow.code == pb.OK, slow.message
                assert provider.stats["pings"] >= 2 and provider.stats.get("sessions") == 1  # never dropped

                seq = await provider.report({on: False})
                assert seq > 0 and (await writer.read([provider.id_of(on)])).reads[0].value.bool_value is False
                with pytest.raises(homed.NotFound):
                    await provider.report({("lamp-1", "Lightbulb", "Nope"): 1})
                await provider.set_reachable("lamp-1", False)
                listed = await writer.call("ListAccessories", pb.ListAccessoriesRequest())
                assert [a.reachable for a in listed.accessories if a.provider_key == "lamp-1"] == [False]
        assert not provider.connected
    run(body())


def test_a_provider_registers_again_after_the_daemon_restarts(homed_db):
    async def body():
        provider = homed.aio.Provider("aio-again", [LAMP], socket_path=homed_db.socket_path)
        await provider.start()
        try:
            assert await provider.wait_registered(timeout=WAIT), provider.error
            accessory_id = provider.accessory_id("lamp-1")
            kill_and_wait(homed_db)
            await asyncio.get_running_loop().run_in_executor(None, homed_db.start)
            assert await provider.wait_registered(timeout=WAIT, count=2), provider.error
            assert provider.accessory_id("lamp-1") == accessory_id  # kept by key across the restart
            assert provider.known_keys == ["lamp-1"]
        finally:
            await provider.stop()
    run(body())
