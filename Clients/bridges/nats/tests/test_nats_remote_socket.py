"""The remote socket's Subscribe held against homed's: the same snapshot pages
and the same events for filters of every kind (homes, rooms, zones,
accessories, services, types, kinds, and a subscription narrowed by
ModifySubscription); and its bad input: a NATS server never reached is
UNAVAILABLE naming it (homectl --nats exits 14), a frame that is no Frame
ends the connection with INVALID_ARGUMENT, an unknown filter id is NOT_FOUND
as on homed's socket."""

import glob
import os
import signal
import socket
import struct
import subprocess

import pytest

from homed import Client, HomedError, pb
from homed_testkit import homectl_binary
from homed_testkit.providers import wait_for

from .nats_home import BRIGHTNESS, TEMP, Devices, found, make_home
from .remote_site import accounts_server, start_remote, start_site_bridge


@pytest.fixture
def server(workdir):
    node = accounts_server(workdir)
    try:
        yield node.start()
    finally:
        node.kill()


def values_of(stream, count):
    """The next `count` value events of a stream, as (characteristic, value kind, value)."""
    seen = []
    while len(seen) < count:
        message = stream.get(15)
        assert message is not None, "the stream ended"
        for event in message.events:
            if event.WhichOneof("body") == "value":
                value = event.value.value
                kind = value.WhichOneof("kind")
                seen.append((event.value.characteristic_id, kind, getattr(value, kind) if kind else None))
            else:
                seen.append((event.WhichOneof("body"), event.kind, None))
    return seen


def snapshot_of(stream):
    assert stream.get(10).marker.kind == pb.MARKER_SUBSCRIBED
    chars = []
    while True:
        message = stream.get(10)
        chars += message.snapshot
        if message.marker.kind == pb.MARKER_SNAPSHOT_END:
            return chars


def test_filters_select_what_homeds_select(homed, server, processes, workdir):
    with homed.client() as client:
        home_id = make_home(client)
    devices = Devices(homed.socket_path).start()
    start_site_bridge(homed, server, processes, workdir)
    _, path = start_remote(server.url, processes, workdir)
    try:
        with homed.client() as client:
            home = client.call("GetHome", pb.GetHomeRequest()).homes[0]
            kitchen = next(r.id for r in home.rooms if r.name == "Kitchen")
            zone = client.call("ChangeLayout", pb.LayoutRequest(add_zone=pb.AddZone(home_id=home_id,
                                                                                   name="Downstairs"))).created_id
            client.call("ChangeLayout", pb.LayoutRequest(add_room_to_zone=pb.ZoneRoom(zone_id=zone, room_id=kitchen)))
            lamp, sensor = found(client)["lamp"], found(client)["sensor"]
        lightbulb = next(s.id for s in lamp.services if s.type_name == "Lightbulb")
        wait_for(lambda: _zone_there(path, zone) or None, 15, "the zone in the remote layout")
        filters = {
            "home": pb.SubscriptionFilter(home_ids=[home_id]),
            "room": pb.SubscriptionFilter(room_ids=[kitchen]),
            "zone": pb.SubscriptionFilter(zone_ids=[zone]),
            "accessory": pb.SubscriptionFilter(accessory_ids=[sensor.id]),
            "service": pb.SubscriptionFilter(service_ids=[lightbulb]),
            "service type": pb.SubscriptionFilter(service_types=["TemperatureSensor"]),
            "characteristic type": pb.SubscriptionFilter(characteristic_types=["brightness"]),
            "home and kinds": pb.SubscriptionFilter(home_ids=[home_id], kinds=[pb.EVENT_VALUE_CHANGED]),
            "everything": pb.SubscriptionFilter(),
        }
        with Client.connect(path, client_name="far") as far, homed.client() as near:
            pairs = {}
            for name, f in filters.items():
                request = pb.SubscribeRequest(snapshot=True, filter=f)
                got, want = far.subscribe(request), near.subscribe(request)
                assert snapshot_of(got) == snapshot_of(want), name
                pairs[name] = (got, want)
            # Narrowed while open: the lamp's brightness no longer, on both.
            brightness = next(c.id for s in lamp.services for c in s.characteristics if c.type_name == "Brightness")
            for client, stream in ((far, pairs["home"][0]), (near, pairs["home"][1])):
                client.call("ModifySubscription", pb.ModifySubscriptionRequest(
                    call_id=stream.call_id, remove=pb.SubscriptionFilter(characteristic_ids=[brightness])))
            devices.report(BRIGHTNESS, 71)
            devices.report(TEMP, 21.5)
            with homed.client() as client:
                client.call("ChangeLayout", pb.LayoutRequest(add_room=pb.AddRoom(home_id=home_id, name="Attic")))
            devices.report(TEMP, 22.5)
            # One more event that every filter but the brightness ones selects, then compare.
            for name, (got, want) in pairs.items():
                expected = values_of(want, _count(name))
                assert values_of(got, len(expected)) == expected, name
    finally:
        devices.stop()


def _count(name):
    """How many events each filter's stream gets from the changes above (homed's)."""
    return {"home": 3, "room": 1, "zone": 1, "accessory": 2, "service": 1, "service type": 2,
            "characteristic type": 1, "home and kinds": 3, "everything": 4}[name]


def _zone_there(path, zone):
    with Client.connect(path, client_name="probe") as client:
        return any(z.id == zone for h in client.call("GetHome", pb.GetHomeRequest()).homes for z in h.zones) and \
            _layout_has_zone(client, zone)


def _layout_has_zone(client, zone):
    try:
        stream = client.subscribe(pb.SubscribeRequest(filter=pb.SubscriptionFilter(zone_ids=[zone])))
        ok = stream.get(5).marker.kind == pb.MARKER_SUBSCRIBED
        stream.cancel()
        return ok
    except HomedError:
        return False


def test_an_unknown_filter_id_is_not_found_as_on_homeds_socket(homed, server, processes, workdir):
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    start_site_bridge(homed, server, processes, workdir)
    _, path = start_remote(server.url, processes, workdir)
    try:
        errors = []
        for where in (homed.socket_path, path):
            with Client.connect(where, client_name="bad filter") as client:
                stream = client.subscribe(pb.SubscribeRequest(filter=pb.SubscriptionFilter(room_ids=[987654])))
                with pytest.raises(HomedError) as raised:
                    stream.get(10)
                errors.append((raised.value.code, raised.value.message))
        assert errors[0] == errors[1] == (pb.NOT_FOUND, "subscription filter names room 987654, which does not exist")
    finally:
        devices.stop()


def test_garbage_ends_the_connection_and_the_socket_goes_on(server, processes, workdir, homed):
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    start_site_bridge(homed, server, processes, workdir)
    remote, path = start_remote(server.url, processes, workdir)
    try:
        with Client.connect(path, client_name="first"):
            pass
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        raw.settimeout(10)
        raw.connect(path)
        hello = pb.Frame(call_id=0, hello=pb.Hello(protocol_version=1, client_name="raw"))
        body = hello.SerializeToString()
        raw.sendall(struct.pack(">I", len(body)) + body + struct.pack(">I", 3) + b"\xff\xff\xff")
        data = b""
        while True:
            chunk = raw.recv(65536)
            if not chunk:
                break
            data += chunk
        raw.close()
        frames = []
        while data:
            (length,) = struct.unpack(">I", data[:4])
            frames.append(pb.Frame.FromString(data[4:4 + length]))
            data = data[4 + length:]
        assert frames[0].WhichOneof("kind") == "hello_reply"
        assert frames[-1].call_id == 0 and frames[-1].status.code == pb.INVALID_ARGUMENT, frames[-1]
        assert "no home.v1.Frame" in frames[-1].status.message
        with Client.connect(path, client_name="after") as client:
            assert client.call("GetStatus", pb.GetStatusRequest()).connection_id == client.connection_id
        assert remote.proc.poll() is None
    finally:
        devices.stop()


def test_a_nats_server_never_reached_is_unavailable_naming_it(workdir):
    runtime = os.path.join(workdir, "run")
    os.makedirs(runtime, mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
    done = subprocess.run([homectl_binary(), "--nats", "nats://127.0.0.1:1", "get", "Kitchen/Lamp/On"],
                          capture_output=True, text=True, timeout=30, env=env)
    pids = glob.glob(os.path.join(runtime, "homed", "nats-home-*.sock.pid"))
    try:
        assert done.returncode == pb.UNAVAILABLE, done.stderr
        assert "cannot reach the NATS server nats://127.0.0.1:1" in done.stderr, done.stderr
        assert done.stdout == ""
        assert len(pids) == 1, os.listdir(os.path.join(runtime, "homed"))
    finally:
        for pid_file in pids:
            try:
                os.kill(int(open(pid_file).read()), signal.SIGTERM)
            except (ProcessLookupError, ValueError):
                pass


def test_gethome_in_pages_is_homeds_page_for_page(homed, server, processes, workdir):
    """homed's page tokens belong to a connection: the bridge pages each caller on a
    connection of its own, so two remote callers paging at once each get their pages."""
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    start_site_bridge(homed, server, processes, workdir)
    _, path = start_remote(server.url, processes, workdir)

    def pages(client):
        out, token = [], ""
        while True:
            page = client.call("GetHome", pb.GetHomeRequest(page_size=1, page_token=token))
            page.ClearField("seq")
            out.append(page)
            token = page.next_page_token
            if not token:
                return out

    try:
        with homed.client() as near, Client.connect(path, client_name="a") as a, \
                Client.connect(path, client_name="b") as b:
            want = [p.homes for p in pages(near)]
            assert len(want) >= 2
            first_a = a.call("GetHome", pb.GetHomeRequest(page_size=1))
            first_b = b.call("GetHome", pb.GetHomeRequest(page_size=1))
            second_a = a.call("GetHome", pb.GetHomeRequest(page_size=1, page_token=first_a.next_page_token))
            second_b = b.call("GetHome", pb.GetHomeRequest(page_size=1, page_token=first_b.next_page_token))
            assert [first_a.homes, second_a.homes] == [first_b.homes, second_b.homes] == want[:2]
            assert [p.homes for p in pages(a)] == want
            with pytest.raises(HomedError) as raised:
                a.call("GetHome", pb.GetHomeRequest(page_size=1, page_token="nonsense"))
            assert raised.value.code == pb.INVALID_ARGUMENT and "nonsense" in raised.value.message
    finally:
        devices.stop()


def test_a_live_socket_is_never_taken_and_an_idle_one_ends_by_itself(server, processes, workdir, homed):
    import sys

    from .remote_site import REMOTE
    with homed.client() as client:
        make_home(client)
    start_site_bridge(homed, server, processes, workdir)
    first, path = start_remote(server.url, processes, workdir, extra=["--exit-when-idle", "1"])
    second = subprocess.run([sys.executable, REMOTE, "--server", server.url, "--listen-socket", path],
                            capture_output=True, text=True, timeout=30)
    assert second.returncode == 2 and f"another program is listening on {path}" in second.stderr, second.stderr
    bad = subprocess.run([sys.executable, REMOTE, "--server", server.url, "--exit-when-idle", "0"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 64 and "--exit-when-idle 0: a number of seconds above 0" in bad.stderr, bad.stderr
    assert first.proc.wait(15) == 0
    assert not os.path.exists(path) and not os.path.exists(path + ".pid")
