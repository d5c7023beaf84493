"""homed-nats-remote (homed_nats/cli.py) held against the real homectl on the
same homed: `get`, `set` and `watch` print the same JSON and exit with the same
codes and words; and a remote watch loses nothing and repeats nothing across a
nats-server kill -9, a homed kill -9 (its journal goes on) and a network cut."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import nats
import pytest

import homed as homed_errors
from homed import pb
from homed_testkit import ProviderProcess, homectl_binary
from homed_testkit import homectl as run_homectl
from homed_testkit.providers import wait_for, wait_log

from homed_nats import layout as L
from homed_nats.remote import remote_read
from .nats_home import BRIGHTNESS, TEMP, Devices, found, make_home, read_bucket, run, start_bridge
from .nats_server import NatsServer
from .test_nats_writes import accounts_server, files  # noqa: F401 - the fixture
from homed_testkit import installed_program

NAMES = L.Names("home")
REMOTE = installed_program("homed-nats-remote")


def homectl(homed, *args):
    return run_homectl(homed, "--socket", homed.socket_path, *args)


def remote(url, *args, user_file=None):
    """homed-nats-remote with -o json (its default is homectl's: text; -o after the command wins)."""
    argv = [sys.executable, REMOTE, "--server", url, "-o", "json"]
    if user_file:
        argv += ["--user-file", user_file]
    return subprocess.run(argv + list(args), capture_output=True, text=True, timeout=30)


def user_file(workdir, user):
    path = os.path.join(workdir, f"{user}.user")
    with open(path, "w") as f:
        f.write(f"username={user}\npassword={user}-secret\n")
    return path


def message(stderr):
    """The error after the program's name (homectl: …, homed-nats-remote: …)."""
    return stderr.strip().split(": ", 1)[-1]


async def read_as(url, user, ids):
    nc = await nats.connect(url, user=user, password=f"{user}-secret", connect_timeout=2, max_reconnect_attempts=1)
    try:
        return await remote_read(nc, NAMES, 1, ids)
    finally:
        await nc.close()


class Site:
    """A homed with the test's devices, the bridge on a server with accounts
    (HOMED: the bridge, whose stream and bucket readers share; REMOTE: alice a
    user, victor a viewer, by request/reply)."""

    def __init__(self, homed, server, processes, workdir):
        self.url = server.url
        with homed.client() as client:
            make_home(client)
        self.devices = Devices(homed.socket_path).start()
        self.inside, config = files(workdir)
        self.bridge = start_bridge(homed, self.url, processes, "--config", config, "--user-file", self.inside)
        self.alice, self.victor = user_file(workdir, "alice"), user_file(workdir, "victor")
        wait_log(self.bridge, "taking a snapshot")

    def bucket_holds(self, value):
        wait_for(lambda: json.loads(remote(self.url, "get", "Kitchen/Lamp/Brightness", user_file=self.inside).stdout
                                    or "[{}]")[0].get("value") == value or None, 15, f"{value} in the bucket")


def test_get_answers_from_the_bucket_or_fresh_as_homectl(homed, accounts_server, processes, workdir):
    site = Site(homed, accounts_server, processes, workdir)
    url, inside, alice = site.url, site.inside, site.alice
    try:
        site.devices.report(BRIGHTNESS, 61)
        site.bucket_holds(61)
        for paths in (["Kitchen/Lamp/Brightness"], ["Kitchen/Lamp"], ["Lamp/On", "Garage/Sensor"]):
            local = homectl(homed, "get", *paths, "-o", "json")
            far = remote(url, "get", *paths, user_file=inside)
            fresh = remote(url, "get", "--fresh", *paths, user_file=alice)
            local_fresh = homectl(homed, "get", "--fresh", *paths, "-o", "json")
            assert far.returncode == local.returncode == 0, far.stderr
            assert fresh.returncode == local_fresh.returncode, (fresh.stderr, local_fresh.stderr)
            from_bucket = json.loads(far.stdout)
            assert all("seq" in item and "journal" in item for item in from_bucket)
            assert [{k: v for k, v in i.items() if k not in ("seq", "journal")} for i in from_bucket] == \
                json.loads(local.stdout)
            assert json.loads(fresh.stdout) == json.loads(local_fresh.stdout)
        # The Python client: remote_read answers as the socket's read, to the byte.
        with homed.client() as client:
            ids = [c.id for a in found(client).values() for s in a.services for c in s.characteristics]
            assert run(read_as(url, "victor", ids)) == client.read(ids)
        with pytest.raises(homed_errors.InvalidArgument):
            run(read_as(url, "victor", [99999]))
        entry = json.loads(remote(url, "get", "Kitchen/Lamp/Brightness", user_file=inside).stdout)[0]
        with homed.client() as client:
            journal = client.call("ReadHistory", pb.ReadHistoryRequest(limit=1)).journal_id
        assert entry["seq"] > 0 and entry["journal"] == journal  # the value's change, not a snapshot's
        # Names that resolve to nothing: homectl's words and exit codes.
        for path in ("Kitchen/Nope/Brightness", "Kitchen/Lamp/Nope", "999", "Kitchen", "Attic/Lamp/On",
                     "Kitchen//On", "Nope", "Test Home/Kitchen/Lamp/Lightbulb/On/x"):
            local, far = homectl(homed, "get", path, "-o", "json"), remote(url, "get", path, user_file=inside)
            assert far.returncode == local.returncode != 0, (path, far.stderr, local.stderr)
            assert message(far.stderr) == message(local.stderr), path
            assert far.stdout == "", path
        # A second home, with a Kitchen too: paths that start with a home, names in two homes.
        with homed.client() as client:
            cabin = client.call("ChangeLayout", pb.LayoutRequest(add_home=pb.AddHome(name="Cabin"))).created_id
            client.call("ChangeLayout", pb.LayoutRequest(add_room=pb.AddRoom(home_id=cabin, name="Kitchen")))
        wait_for(lambda: remote(url, "get", "Cabin/Kitchen/Lamp", user_file=inside).returncode == pb.NOT_FOUND or None,
                 15, "the second home in the bucket's layout")
        for path in ("Cabin/Kitchen/Lamp", "Cabin/Kitchen", "Kitchen/Lamp/Brightness", "Test Home/Kitchen/Lamp/On",
                     "cabin/kitchen/lamp/on", "Lamp", "Garage/Sensor/Nope/CurrentTemperature",
                     "Kitchen/Lamp/Lightbulb/Nope", "Test Home/Attic"):
            local, far = homectl(homed, "get", path, "-o", "json"), remote(url, "get", path, user_file=inside)
            assert far.returncode == local.returncode, (path, far.stderr, local.stderr)
            assert message(far.stderr) == message(local.stderr), path
        # An unreachable accessory: its last value, marked, and exit 75.
        site.devices.provider.set_reachable("lamp", False)
        wait_for(lambda: remote(url, "get", "Kitchen/Lamp/Brightness", user_file=inside).returncode == 75 or None,
                 15, "exit 75")
        local = homectl(homed, "get", "Kitchen/Lamp/Brightness", "-o", "json")
        far = remote(url, "get", "Kitchen/Lamp/Brightness", user_file=inside)
        assert local.returncode == far.returncode == 75
        assert [{k: v for k, v in i.items() if k not in ("seq", "journal")} for i in json.loads(far.stdout)] == \
            json.loads(local.stdout)
        assert "Traceback" not in site.bridge.log()
    finally:
        site.devices.stop()


def test_set_and_its_refusals_are_homectls(homed, accounts_server, processes, workdir):
    site = Site(homed, accounts_server, processes, workdir)
    url, alice = site.url, site.alice
    try:
        # The same echo (but for its own seq), the same refusals.
        local = homectl(homed, "set", "Kitchen/Lamp/Brightness", "55", "-o", "json")
        far = remote(url, "set", "Kitchen/Lamp/Brightness", "56", user_file=alice)
        assert (local.returncode, far.returncode) == (0, 0), far.stderr
        a, b = json.loads(local.stdout), json.loads(far.stdout)
        assert b["seq"] > a["seq"] and (a["value"], b["value"]) == (55, 56)
        assert {k: v for k, v in a.items() if k not in ("seq", "value")} == \
            {k: v for k, v in b.items() if k not in ("seq", "value")}
        for args in (["Kitchen/Lamp/Brightness", "555"], ["Kitchen/Lamp/Brightness", "abc"],
                     ["Kitchen/Lamp/On", "maybe"], ["Kitchen/Lamp/Nope", "1"], ["999", "1"],
                     ["Kitchen/Lamp/Brightness", "57", "--if", "40"]):
            local, far = homectl(homed, "set", *args), remote(url, "set", *args, user_file=alice)
            assert far.returncode == local.returncode != 0, (args, far.stderr, local.stderr)
            assert message(far.stderr) == message(local.stderr), args
        assert remote(url, "set", "Kitchen/Lamp/Brightness", "57", "--if", "56", user_file=alice).returncode == 0
        viewer = remote(url, "set", "Kitchen/Lamp/Brightness", "58", user_file=site.victor)
        assert viewer.returncode == pb.PERMISSION_DENIED
        assert "needs the user role; the NATS caller REMOTE/victor has the viewer role" in viewer.stderr
        with homed.client() as client:
            lamp = found(client)["lamp"]
            brightness = next(c.id for s in lamp.services for c in s.characteristics if c.type_name == "Brightness")
            assert client.read([brightness]).reads[0].value.int_value == 57
        assert "Traceback" not in site.bridge.log()
    finally:
        site.devices.stop()


def watch_lines(process):
    return [line for line in process.history if line.get("event") != "exit"]


def strip(line, *keys):
    return {k: v for k, v in line.items() if k not in ("_t",) + keys}


def test_watch_prints_homectls_lines(homed, server, processes, workdir):
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    bridge = start_bridge(homed, server.url, processes)
    try:
        wait_log(bridge, "taking a snapshot")
        devices.report(BRIGHTNESS, 41)
        wait_for(lambda: any(list(e["value"].values()) in ([41], ["41"])  # protobuf's JSON: int64 as text
                             for e in read_bucket(server.url, NAMES)[1].values()) or None, 15, "41 in the bucket")
        # One pair per filter: an accessory; a union of a room and a characteristic (homed's
        # filters add up); layout events only. Each pair: homectl and the remote command.
        watches = {"accessory": ["--snapshot", "--accessory", "Lamp", "-C", "4"],
                   "union": ["--snapshot", "--room", "Garage", "--characteristic", "Kitchen/Lamp/Brightness", "-C",
                             "5"],
                   "layout": ["--kind", "layout", "-C", "1"]}
        pairs = {}
        readers = consumers(server.url)
        for name, args in watches.items():
            local = ProviderProcess([homectl_binary(), "--socket", homed.socket_path, "watch", *args, "-o",
                                     "json"], os.path.join(workdir, f"homectl-{name}.log"))
            # The same words after the command, -o json included (homectl --nats would pass them on).
            far = ProviderProcess([sys.executable, REMOTE, "--server", server.url, "watch", *args, "-o", "json"],
                                  os.path.join(workdir, f"remote-{name}.log"))
            pairs[name] = (local, far)
            for process in (local, far):
                processes.append(process)
                process.start()
        for name, (local, far) in pairs.items():
            for process in (local, far):
                if "--snapshot" in watches[name]:
                    wait_for(lambda: any(l.get("kind") == "snapshot-end" for l in process.history) or None, 15,
                             "the snapshot's end", process)
        # The watches without a snapshot print nothing before a change: each must be
        # following first (homectl's subscription in homed; every remote watch's consumer).
        wait_for(lambda: watching(homed, pairs["layout"][0].proc.pid) or None, 30, "homectl's subscription")
        wait_for(lambda: consumers(server.url) >= readers + len(pairs) or None, 30, "the remote watches' consumers")
        devices.report(BRIGHTNESS, 42)
        devices.report(TEMP, 20.5)
        with homed.client() as client:
            client.call("ChangeLayout", pb.LayoutRequest(add_room=pb.AddRoom(home_id=1, name="Attic")))
        devices.report(BRIGHTNESS, 43)
        devices.report(BRIGHTNESS, 44)
        devices.report(BRIGHTNESS, 45)
        for name, (local, far) in pairs.items():
            for process in (local, far):
                assert process.proc.wait(20) == 0, process.log()
            a, b = watch_lines(local), watch_lines(far)
            # The snapshot: the same lines but for the seq each stands at (homectl's own
            # subscription's; the remote one's the bucket's cursor).
            assert [strip(l, "seq") for l in a if l["kind"].startswith("snapshot")] == \
                [strip(l, "seq") for l in b if l["kind"].startswith("snapshot")], name
            events = [strip(l) for l in a if not l["kind"].startswith("snapshot")]
            assert events == [strip(l) for l in b if not l["kind"].startswith("snapshot")], name
            pairs[name] = events
        assert [e["value"] for e in pairs["accessory"]] == [42, 43, 44, 45]
        assert [e["value"] for e in pairs["union"]] == [42, 20.5, 43, 44, 45]
        assert [(e["kind"], e["object"], e["name"]) for e in pairs["layout"]] == [("layout", "room", "Attic")]
        # Bad options: the same exit codes.
        assert remote(server.url, "watch", "--kind", "nonsense").returncode == 64
        missing = remote(server.url, "watch", "--accessory", "Nope")
        local_missing = homectl(homed, "watch", "--accessory", "Nope", "-o", "json")
        assert missing.returncode == local_missing.returncode == pb.NOT_FOUND
        assert message(missing.stderr) == message(local_missing.stderr)
        assert remote(server.url, "watch", "-W", "1").returncode == 4
    finally:
        devices.stop()


def watching(homed, pid):
    """homed holds a subscription of the process ``pid``."""
    with homed.client() as client:
        stats = client.call("GetStats", pb.GetStatsRequest())
    return any(c.pid == pid and len(c.subscriptions) > 0 for c in stats.connections)


def consumers(url):
    """How many consumers the journal's stream has (a remote watch makes one)."""
    async def count():
        nc = await nats.connect(url)
        try:
            return (await nc.jetstream().stream_info(NAMES.stream)).state.consumer_count
        finally:
            await nc.close()
    return asyncio.run(count())


def test_a_new_journal_is_a_resync_then_a_snapshot_as_homectl_prints_it(workdir, server, processes):
    """homed without its stored history (--history-retention off) starts a new
    journal on every start: both watches print a resync line, the snapshot of what
    they watch, its end, and go on in the new journal."""
    from homed_testkit import HomedProcess, require_binary
    homed = HomedProcess(require_binary(), workdir, extra_args=["--history-retention", "off"]).start()
    try:
        with homed.client() as client:
            make_home(client)
        devices = Devices(homed.socket_path).start()
        bridge = start_bridge(homed, server.url, processes)
        wait_log(bridge, "taking a snapshot")
        wait_for(lambda: read_bucket(server.url, NAMES)[1] or None, 15, "the bucket")
        args = ["watch", "--accessory", "Lamp", "--kind", "value", "-C", "2", "-o", "json"]
        readers = consumers(server.url)
        local = ProviderProcess([homectl_binary(), "--socket", homed.socket_path, *args],
                                os.path.join(workdir, "homectl-watch.log")).start()
        far = ProviderProcess([sys.executable, REMOTE, "--server", server.url, *args],
                              os.path.join(workdir, "remote-watch.log")).start()
        processes += [local, far]
        # A watch without --snapshot prints nothing before a change: both must be
        # following before it (homectl's subscription in homed, the remote's consumer).
        wait_for(lambda: watching(homed, local.proc.pid) or None, 30, "homectl's subscription", local)
        wait_for(lambda: consumers(server.url) > readers or None, 30, "the remote's consumer", far)
        devices.report(BRIGHTNESS, 42)
        for process in (local, far):
            wait_for(lambda: any(l.get("value") == 42 for l in process.history) or None, 15, "42", process)
        devices.stop()
        homed.proc.send_signal(signal.SIGKILL)
        homed.proc.wait(5)
        homed.start()
        devices = Devices(homed.socket_path).start()
        wait_log(bridge, "homed resync")
        wait_for(lambda: watching(homed, local.proc.pid) or None, 30, "homectl's subscription again", local)
        devices.report(BRIGHTNESS, 43)
        for process in (local, far):
            assert process.proc.wait(20) == 0, process.log()
        a, b = watch_lines(local), watch_lines(far)
        shape = lambda lines: [(l["kind"], l.get("characteristic_id")) for l in lines]  # noqa: E731
        assert shape(a) == shape(b)
        kinds = [k for k, _ in shape(a)]
        assert kinds[0] == "value" and kinds[1] == "resync" and kinds[-2:] == ["snapshot-end", "value"], kinds
        assert set(kinds[2:-2]) == {"snapshot"}
        assert a[0]["journal"] != a[-1]["journal"] and b[0]["journal"] == a[0]["journal"]
        assert {l["journal"] for l in a[1:]} == {l["journal"] for l in b[1:]} == {a[-1]["journal"]}
        assert strip(a[-1]) == strip(b[-1])  # the new journal's first value event (40 again from the
        # provider's registration, or 43), the same line in both
        assert "Traceback" not in bridge.log()
        devices.stop()
    finally:
        homed.kill()


def burst(devices, count, start=0, pause=0.0):
    for i in range(start, start + count):
        devices.report(TEMP if i % 2 else BRIGHTNESS, (10.0 + i / 10) if i % 2 else i % 101)
        if pause:
            time.sleep(pause)


def history_seqs(homed, after, until):
    """homed's stored value events after `after` up to `until`: what a watch must have printed."""
    seqs, cursor = [], after
    with homed.client() as client:
        while True:
            page = client.call("ReadHistory", pb.ReadHistoryRequest(
                after_seq=cursor, before_seq=until + 1, limit=10000,
                filter=pb.SubscriptionFilter(kinds=[pb.EVENT_VALUE_CHANGED])))
            seqs += [e.seq for e in page.events]
            if not page.next_seq:
                return seqs, page.journal_id
            cursor = page.next_seq


def follow(url, workdir, name="remote-watch"):
    watch = ProviderProcess([sys.executable, REMOTE, "--server", url, "watch", "--kind", "value"],
                            os.path.join(workdir, f"{name}.log"))
    return watch.start()


def last_value_seq(homed):
    with homed.client() as client:
        return client.call("ReadHistory", pb.ReadHistoryRequest(
            limit=1, newest_first=True, filter=pb.SubscriptionFilter(kinds=[pb.EVENT_VALUE_CHANGED]))).events[0].seq


def check_nothing_missed_nor_twice(homed, watch):
    last = last_value_seq(homed)
    wait_for(lambda: any(l.get("seq") == last for l in watch.history) or None, 40,
             f"event {last} at the remote watch", watch)
    lines = [l for l in watch_lines(watch) if l.get("kind") == "value"]
    seqs = [l["seq"] for l in lines]
    assert len(seqs) == len(set(seqs)), "an event came twice"
    assert seqs == sorted(seqs)
    assert len({l["journal"] for l in lines}) == 1, "homed's journal went on: one journal"
    expected, journal = history_seqs(homed, seqs[0] - 1, seqs[-1])
    assert journal == lines[0]["journal"]
    assert seqs == expected, f"missed {sorted(set(expected) - set(seqs))[:10]}"
    assert not [l for l in watch_lines(watch) if l.get("kind") == "resync"]


def test_a_remote_watch_across_a_server_kill_and_a_homed_kill_misses_nothing(stored_homed, server, processes,
                                                                            workdir):
    homed = stored_homed
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    bridge = start_bridge(homed, server.url, processes)
    try:
        wait_log(bridge, "taking a snapshot")
        readers = consumers(server.url)
        watch = follow(server.url, workdir)
        processes.append(watch)
        wait_for(lambda: remote(server.url, "get", "Kitchen/Lamp/Brightness").returncode == 0 or None, 15,
                 "the bucket")
        wait_for(lambda: consumers(server.url) > readers or None, 30, "the remote watch's consumer", watch)
        burst(devices, 100)
        server.kill()
        burst(devices, 100, start=100)  # homed commits while the server is dead
        server.start()
        burst(devices, 100, start=200)
        devices.stop()
        homed.proc.send_signal(signal.SIGKILL)
        homed.proc.wait(5)
        homed.start()
        devices = Devices(homed.socket_path).start()
        burst(devices, 100, start=300)
        check_nothing_missed_nor_twice(homed, watch)
        assert "Traceback" not in bridge.log()
    finally:
        devices.stop()


class Cut:
    """A network cut between the bridge (and the watch) and nats-server: the server
    in a network namespace of its own behind a veth pair, the link set down and
    up again (`ip netns`, as root); without that right, the server process is
    stopped (SIGSTOP) and continued: its connections hang as over a cut link."""

    def __init__(self, workdir):
        self.ns = f"homed-cut-{os.getpid()}"
        self.veth = f"hc{os.getpid() % 100000}"
        # A /30 of its own per process, so that test runs side by side do not share addresses.
        n = os.getpid() % 16384
        self.near, self.far = (f"10.211.{n // 64}.{(n % 64) * 4 + host}" for host in (1, 2))
        self.netns = os.geteuid() == 0 and self._try_netns()
        self.server = NatsServer(workdir, "cut", host=self.far if self.netns else "127.0.0.1",
                                 prefix=["ip", "netns", "exec", self.ns] if self.netns else [])

    def _run(self, *argv):
        return subprocess.run(argv, capture_output=True, text=True, timeout=10)

    def _try_netns(self):
        steps = [["ip", "netns", "add", self.ns],
                 ["ip", "link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns", self.ns],
                 ["ip", "addr", "add", f"{self.near}/30", "dev", self.veth], ["ip", "link", "set", self.veth, "up"],
                 ["ip", "netns", "exec", self.ns, "ip", "addr", "add", f"{self.far}/30", "dev", "eth0"],
                 ["ip", "netns", "exec", self.ns, "ip", "link", "set", "eth0", "up"],
                 ["ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up"]]
        for step in steps:
            if self._run(*step).returncode != 0:
                self.close()
                return False
        return True

    def cut(self):
        if self.netns:
            assert self._run("ip", "link", "set", self.veth, "down").returncode == 0
        else:
            self.server.proc.send_signal(signal.SIGSTOP)

    def mend(self):
        if self.netns:
            assert self._run("ip", "link", "set", self.veth, "up").returncode == 0
        else:
            self.server.proc.send_signal(signal.SIGCONT)

    def close(self):
        self.server.kill()
        self._run("ip", "link", "del", self.veth)
        self._run("ip", "netns", "del", self.ns)


def test_a_remote_watch_across_a_network_cut_misses_nothing(homed, processes, workdir):
    cut = Cut(workdir)
    try:
        print("network cut by", "a network namespace (veth down/up)" if cut.netns else "SIGSTOP/SIGCONT")
        cut.server.start()
        with homed.client() as client:
            make_home(client)
        devices = Devices(homed.socket_path).start()
        bridge = start_bridge(homed, cut.server.url, processes)
        try:
            wait_log(bridge, "taking a snapshot")
            readers = consumers(cut.server.url)
            watch = follow(cut.server.url, workdir)
            processes.append(watch)
            wait_for(lambda: remote(cut.server.url, "get", "Kitchen/Lamp/Brightness").returncode == 0 or None, 15,
                     "the bucket")
            wait_for(lambda: consumers(cut.server.url) > readers or None, 30, "the remote watch's consumer", watch)
            burst(devices, 100)
            cut.cut()
            burst(devices, 100, start=100, pause=0.05)  # homed goes on committing meanwhile
            # The cut lasts until the bridge has felt it (its pings unanswered: ~10 s).
            wait_log(bridge, "lost the NATS server", timeout=40)
            cut.mend()
            burst(devices, 100, start=200)
            check_nothing_missed_nor_twice(homed, watch)
            assert "Traceback" not in bridge.log()
        finally:
            devices.stop()
    finally:
        cut.close()
