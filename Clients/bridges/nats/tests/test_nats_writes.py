"""Remote writes over request/reply, the caller's role from the NATS account
and user the server vouches for (a service import with share: true), and the
bridge's answers to bad input: refused credentials, a stream or bucket with
other settings, a message homed did not write."""

import asyncio
import json
import os

import nats
import pytest

import homed as homed_errors
from homed import pb
from homed_testkit.providers import wait_for, wait_log

from homed_nats import layout as L
from homed_nats.remote import remote_write
from .nats_home import BRIGHTNESS, TEMP, Devices, ReaderThread, char_id, found, journal_events, make_home, \
    read_stream, run, start_bridge, wait_snapshot
from .nats_server import NatsServer

NAMES = L.Names("home")

ACCOUNTS = """
listen: 127.0.0.1:{port}
jetstream: {store_dir: "{store}"}
accounts: {
  HOMED: {
    jetstream: enabled
    users: [{user: bridge, password: bridge-secret}]
    exports: [{service: "homed.*.write.*"}, {service: "homed.*.read.*"}, {service: "homed.*.layout"}]
  }
  REMOTE: {
    users: [{user: alice, password: alice-secret}, {user: victor, password: victor-secret}]
    imports: [{service: {account: HOMED, subject: "homed.*.write.*"}, share: true},
              {service: {account: HOMED, subject: "homed.*.read.*"}, share: true},
              {service: {account: HOMED, subject: "homed.*.layout"}, share: true}]
  }
}
"""

ROLES = """[nats]
site = home
[roles]
REMOTE/alice = user
REMOTE/* = viewer
"""


def files(workdir, password="bridge-secret"):
    user_file = os.path.join(workdir, "bridge.user")
    with open(user_file, "w") as f:
        f.write(f"username=bridge\npassword={password}\n")
    os.chmod(user_file, 0o600)
    config = os.path.join(workdir, "homed-nats.ini")
    with open(config, "w") as f:
        f.write(ROLES)
    return user_file, config


async def write_as(url, user, password, home_id, values, headers=None, raw=None):
    nc = await nats.connect(url, user=user, password=password, connect_timeout=2, max_reconnect_attempts=1)
    try:
        if raw is not None or headers:
            request = pb.WriteCharacteristicsRequest()
            for cid, value in values.items():
                request.writes.add(characteristic_id=cid, value=value)
            msg = await nc.request(NAMES.write(home_id), raw if raw is not None else request.SerializeToString(),
                                   timeout=10, headers=headers)
            return msg
        return await remote_write(nc, NAMES, home_id, values)
    finally:
        await nc.close()


@pytest.fixture
def accounts_server(workdir):
    node = NatsServer(workdir, "acc", config=ACCOUNTS)
    try:
        yield node.start()
    finally:
        node.kill()


def test_remote_writes_answer_as_the_socket_and_a_viewer_cannot_write(homed, accounts_server, processes, workdir):
    with homed.client() as client:
        home_id = make_home(client)
    devices = Devices(homed.socket_path).start()
    user_file, config = files(workdir)
    bridge = start_bridge(homed, accounts_server.url, processes, "--config", config, "--user-file", user_file)
    try:
        wait_snapshot(bridge)
        with homed.client() as client:
            lamp = found(client)["lamp"]
        brightness = char_id(lamp, "Brightness")
        url = accounts_server.url
        # A user: applied, with the daemon's own reply (per-item results, the event's seq).
        response = run(write_as(url, "alice", "alice-secret", home_id, {brightness: pb.Value(int_value=77)}))
        assert response.results[0].code == pb.OK and response.results[0].seq > 0
        with homed.client() as client:
            assert client.read([brightness]).reads[0].value.int_value == 77
        # Per-item errors come back as the socket gives them.
        response = run(write_as(url, "alice", "alice-secret", home_id, {brightness: pb.Value(int_value=500)}))
        assert response.results[0].code == pb.INVALID_ARGUMENT
        # A viewer: refused whole, nothing written, said in the log.
        with pytest.raises(homed_errors.PermissionDenied) as refused:
            run(write_as(url, "victor", "victor-secret", home_id, {brightness: pb.Value(int_value=10)}))
        assert "REMOTE/victor has the viewer role" in refused.value.message
        # A viewer claiming to be alice: the server puts its own Nats-Request-Info.
        forged = json.dumps({"acc": "REMOTE", "user": "alice"})
        msg = run(write_as(url, "victor", "victor-secret", home_id, {brightness: pb.Value(int_value=11)},
                           headers={"Nats-Request-Info": forged}))
        assert msg.headers[L.HDR_STATUS] == str(pb.PERMISSION_DENIED)
        with homed.client() as client:
            assert client.read([brightness]).reads[0].value.int_value == 77
        wait_log(bridge, "refused: WriteCharacteristics needs the user role; the NATS caller REMOTE/victor")
        # Not this home's characteristic, no such home, a body that does not decode.
        with pytest.raises(homed_errors.NotFound):
            run(write_as(url, "alice", "alice-secret", home_id + 100, {brightness: pb.Value(int_value=1)}))
        with pytest.raises(homed_errors.InvalidArgument) as outside:
            run(write_as(url, "alice", "alice-secret", home_id, {99999: pb.Value(int_value=1)}))
        assert "99999" in outside.value.message
        msg = run(write_as(url, "alice", "alice-secret", home_id, {}, raw=b"\xff\xff\xff"))
        assert msg.headers[L.HDR_STATUS] == str(pb.INVALID_ARGUMENT)
        with homed.client() as client:
            assert client.read([brightness]).reads[0].value.int_value == 77
        assert "Traceback" not in bridge.log()
    finally:
        devices.stop()


def test_refused_credentials_are_said_and_the_bridge_waits(homed, accounts_server, processes, workdir):
    user_file, config = files(workdir, password="wrong")
    bridge = start_bridge(homed, accounts_server.url, processes, "--config", config, "--user-file", user_file)
    log = wait_log(bridge, "refused the credentials")
    assert "wrong" not in log  # the password is never logged
    assert bridge.proc.poll() is None


def test_a_password_in_a_server_url_is_refused(homed, server, processes):
    url = server.url.replace("nats://", "nats://bridge:secret@")
    bridge = start_bridge(homed, url, processes)
    assert bridge.proc.wait(10) == 2
    log = bridge.log()
    assert "server nats://bridge:***@127.0.0.1" in log and "secret" not in log
    assert "credentials come from a file (--user-file or --creds), never from the command line" in log


def test_a_stream_with_other_settings_is_left_alone_and_said(homed, server, processes):
    async def make():
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name=NAMES.stream, subjects=["something.else.>"])
        await nc.close()
    run(make())
    bridge = start_bridge(homed, server.url, processes)
    wait_log(bridge, "stream HOMED_home exists with other settings: subjects is ['something.else.>'], "
                     "not ['homed.home.journal.>']")

    async def fix():
        nc = await nats.connect(server.url)
        await nc.jetstream().delete_stream(NAMES.stream)
        await nc.close()
    run(fix())
    wait_log(bridge, "taking a snapshot", timeout=15)  # looked at again, then created


def test_a_message_homed_did_not_write_is_said_and_skipped(homed, server, processes):
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    bridge = start_bridge(homed, server.url, processes)
    reader = None
    try:
        wait_snapshot(bridge)
        devices.report(TEMP, 30.0)
        # The intruder comes after 30.0 is in the stream: then it is the stream's last
        # message when the bridge looks for its tail (else the race decides).
        wait_for(lambda: any(e.value.value.float_value == 30.0 for _, _, e in journal_events(read_stream(server.url,
                                                                                                          NAMES)))
                 or None, 15, "30.0 in the stream")

        async def intrude():
            nc = await nats.connect(server.url)
            await nc.jetstream().publish("homed.home.journal.ev.1.2.3.value", b"not homed's")
            await nc.close()
        run(intrude())
        devices.report(TEMP, 31.0)  # refused once (expected last sequence), then written after it
        reader = ReaderThread(server.url, NAMES, snapshot=False, start_after=0).start()
        reader.wait(lambda items: any(i.kind == "event" and i.event.value.value.float_value == 31.0 for i in items))
        wait_log(bridge, "was not written by homed-nats")
        records = read_stream(server.url, NAMES)
        assert sum(1 for _, _, h, _ in records if L.tail_of(h) is None) == 1
        assert "Traceback" not in bridge.log()
    finally:
        if reader:
            reader.stop()
        devices.stop()
