"""The real homectl (HOMECTL_BIN) on the remote socket (homed-nats-remote,
carrying homed's protocol over a real nats-server to the bridge at the home)
held against the same homectl on homed's own socket: the same stdout and exit
code and the same words on stderr, for reads, writes and their refusals,
listings and watches; `homectl --nats URL …` starts the remote socket or finds
it; NATS away is UNAVAILABLE naming the server, and the socket carries calls
again by itself once the server is back; a watch on the remote socket across a
nats-server kill -9 misses nothing and repeats nothing."""

import glob
import json
import os
import re
import signal
import subprocess

import pytest

from homed import Client, HomedError, pb
from homed_testkit import ProviderProcess, homectl_binary, kill_pid
from homed_testkit.providers import wait_for

from .nats_home import BRIGHTNESS, TEMP, Devices, found, make_home
from .remote_site import JS_PREFIX, accounts_server, start_remote, start_site_bridge, user_file


@pytest.fixture
def server(workdir):
    node = accounts_server(workdir)
    try:
        yield node.start()
    finally:
        node.kill()


@pytest.fixture
def env(workdir):
    """TZ fixed (watch's text shows local times); the runtime directory the test's own."""
    runtime = os.path.join(workdir, "run")
    os.makedirs(runtime, mode=0o700)
    return dict(os.environ, TZ="UTC", XDG_RUNTIME_DIR=runtime)


class Site:
    """A homed with the test's devices, the bridge, and remote sockets as alice
    (a user), victor (a viewer) and olga (an admin)."""

    def __init__(self, homed, server, processes, workdir):
        self.homed, self.url = homed, server.url
        with homed.client() as client:
            self.home_id = make_home(client)
        self.devices = Devices(homed.socket_path).start()
        self.bridge = start_site_bridge(homed, server, processes, workdir)
        self.remote, self.alice = start_remote(server.url, processes, workdir, "alice", "alice")
        _, self.victor = start_remote(server.url, processes, workdir, "victor", "victor")
        _, self.olga = start_remote(server.url, processes, workdir, "olga", "olga")


def run(socket_path, env, *args):
    return subprocess.run([homectl_binary(), "--socket", socket_path, *args], capture_output=True, text=True,
                          timeout=30, env=env)


def words(stderr):
    """What homectl said, without the socket's path (each names its own)."""
    return re.sub(r"/\S+\.sock\b", "SOCKET", stderr)


def same(a, b, what):
    assert (b.returncode, b.stdout) == (a.returncode, a.stdout), (what, a.stderr, b.stderr)
    assert words(b.stderr) == words(a.stderr), what


def test_homectl_on_the_remote_socket_prints_what_it_prints_on_homeds(homed, server, processes, workdir, env):
    site = Site(homed, server, processes, workdir)
    here, there = homed.socket_path, site.alice
    try:
        site.devices.report(BRIGHTNESS, 61)
        wait_for(lambda: "61%" in run(there, env, "get", "Kitchen/Lamp/Brightness").stdout or None, 15, "61 there")
        # Reads and listings: the same, in every form.
        for args in (["accessories"], ["accessories", "--json"], ["homes"], ["rooms"], ["show", "Kitchen/Lamp"],
                     ["show", "Kitchen/Lamp", "--json"], ["get", "Kitchen/Lamp/Brightness"], ["get", "Kitchen/Lamp"],
                     ["get", "Lamp/On", "Garage/Sensor"], ["-o", "json", "get", "Kitchen/Lamp"],
                     ["--json", "get", "Kitchen/Lamp"], ["-o", "yaml", "get", "Garage/Sensor"],
                     ["get", "--fresh", "Kitchen/Lamp"], ["types", "Brightness"],
                     # Names that resolve to nothing (5), a path with an empty part (3).
                     ["get", "Kitchen/Nope/Brightness"], ["get", "999"], ["get", "Kitchen//On"],
                     ["get", "Kitchen", "-o", "json"]):
            same(run(here, env, *args), run(there, env, *args), args)
        # Writes: the same line but for the seq each took effect at; unchanged alike.
        a = run(here, env, "set", "Kitchen/Lamp/Brightness", "55")
        b = run(there, env, "set", "Kitchen/Lamp/Brightness", "56")
        assert (a.returncode, b.returncode) == (0, 0), b.stderr
        assert re.sub(r"55% \(seq \d+\)", "", a.stdout) == re.sub(r"56% \(seq \d+\)", "", b.stdout), b.stdout
        same(run(here, env, "set", "Kitchen/Lamp/Brightness", "56"),
             run(there, env, "set", "Kitchen/Lamp/Brightness", "56"), "unchanged")
        # Refusals: an invalid value (3), a name not there (5), a condition that does not hold (9).
        for args in (["Kitchen/Lamp/Brightness", "555"], ["Kitchen/Lamp/Brightness", "abc"],
                     ["Kitchen/Lamp/On", "maybe"], ["Kitchen/Lamp/Nope", "1"], ["999", "1"],
                     ["Kitchen/Lamp/Brightness", "59", "--if", "40"]):
            for form in ([], ["-o", "json"]):
                a, b = run(here, env, "set", *args, *form), run(there, env, "set", *args, *form)
                same(a, b, args)
                assert a.returncode in (pb.INVALID_ARGUMENT, pb.NOT_FOUND, pb.FAILED_PRECONDITION), a.stderr
        # Roles are the NATS caller's ([roles]): a viewer may read, not write (7), nothing written.
        same(run(here, env, "get", "Kitchen/Lamp"), run(site.victor, env, "get", "Kitchen/Lamp"), "a viewer reads")
        b = run(site.victor, env, "set", "Kitchen/Lamp/Brightness", "20")
        assert (b.returncode, b.stdout) == (pb.PERMISSION_DENIED, ""), b.stderr
        assert "WriteCharacteristics needs the user role; the NATS caller REMOTE/victor has the viewer role" \
            in b.stderr
        assert "56%" in run(here, env, "get", "Kitchen/Lamp/Brightness").stdout
        # A layout change needs an admin: alice is refused, olga's is made.
        b = run(there, env, "rooms", "add", "Attic")
        assert b.returncode == pb.PERMISSION_DENIED and "ChangeLayout needs the admin role" in b.stderr, b.stderr
        assert run(site.olga, env, "rooms", "add", "Attic").returncode == 0
        wait_for(lambda: "Attic" in run(there, env, "rooms").stdout or None, 15, "the room there")
        same(run(here, env, "rooms"), run(there, env, "rooms"), "rooms")
        # The status names the caller's role as NATS maps it.
        with Client.connect(site.victor, client_name="status") as client:
            status = client.call("GetStatus", pb.GetStatusRequest())
            assert status.caller_role == pb.ROLE_VIEWER and status.connection_id == client.connection_id
        assert "Traceback" not in site.bridge.log()
    finally:
        site.devices.stop()


class Out:
    """A watch whose stdout goes to a file."""

    def __init__(self, argv, path, env):
        self.path = path
        with open(path, "w") as out, open(path + ".err", "w") as err:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)

    def lines(self):
        with open(self.path) as f:
            return f.read().splitlines()

    def cleanup(self):
        kill_pid(self.proc)


def watching(socket_path, homed, pid):
    """homed holds a subscription of the process `pid`."""
    with homed.client() as client:
        stats = client.call("GetStats", pb.GetStatsRequest())
    return any(c.pid == pid and len(c.subscriptions) > 0 for c in stats.connections)


def test_watch_on_the_remote_socket_prints_what_it_prints_on_homeds(homed, server, processes, workdir, env):
    site = Site(homed, server, processes, workdir)
    try:
        wait_for(lambda: run(site.alice, env, "get", "Kitchen/Lamp/Brightness").returncode == 0 or None, 15, "there")
        watches = {"text": ["-o", "text", "watch", "--snapshot", "--accessory", "Lamp", "-C", "4"],
                   "json": ["watch", "--snapshot", "--room", "Garage", "--characteristic", "Kitchen/Lamp/Brightness",
                            "-C", "5", "--json"],
                   "layout": ["watch", "--kind", "layout", "-C", "1", "-o", "text"]}
        pairs = {}
        for name, args in watches.items():
            a = Out([homectl_binary(), "--socket", homed.socket_path, *args], os.path.join(workdir, f"h-{name}"), env)
            b = Out([homectl_binary(), "--socket", site.alice, *args], os.path.join(workdir, f"r-{name}"), env)
            processes += [a, b]
            pairs[name] = (a, b)
        for name in ("text", "json"):
            for w in pairs[name]:
                wait_for(lambda: any("the state above" in l or "snapshot-end" in l for l in w.lines()) or None, 20,
                         f"the snapshot's end ({name})")
        wait_for(lambda: watching(homed.socket_path, homed, pairs["layout"][0].proc.pid) or None, 30, "subscribed")
        wait_for(lambda: len(pairs["layout"][1].lines()) == 0 and os.path.exists(pairs["layout"][1].path) or None,
                 5, "the remote layout watch")
        # The remote watch is live once its SUBSCRIBED came: homectl says nothing then, so
        # a change made before the remote's consumer exists would still reach it (it
        # follows the stream from its point), and the lines are compared whole.
        site.devices.report(BRIGHTNESS, 42)
        with homed.client() as client:
            client.call("ChangeLayout", pb.LayoutRequest(add_room=pb.AddRoom(home_id=site.home_id, name="Attic")))
        for value in (43, 44, 45):
            site.devices.report(BRIGHTNESS, value)
        site.devices.report(TEMP, 20.5)
        for name, (a, b) in pairs.items():
            assert a.proc.wait(20) == 0 and b.proc.wait(20) == 0, name
            x, y = a.lines(), b.lines()
            # A snapshot stands at homed's seq on the socket, at the stream's last record remotely.
            if name == "json":
                x, y = ([json.dumps({k: v for k, v in json.loads(l).items()
                                     if not (k == "seq" and json.loads(l)["kind"].startswith("snapshot"))})
                         for l in lines] for lines in (x, y))
            else:
                x, y = ([re.sub(r"at seq \d+;", "at seq N;", l) for l in lines] for lines in (x, y))
            assert x == y, name
        assert "Traceback" not in site.bridge.log()
    finally:
        site.devices.stop()


def test_homectl_nats_starts_the_remote_socket_or_finds_it(homed, server, processes, workdir, env):
    site = Site(homed, server, processes, workdir)
    pids = []
    try:
        def nats(*args):
            argv = [homectl_binary(), "--nats", server.url, "--nats-user-file", user_file(workdir, "alice"),
                    "--nats-js-prefix", JS_PREFIX, *args]
            return subprocess.run(argv, capture_output=True, text=True, timeout=30, env=env)

        b = nats("get", "Kitchen/Lamp/Brightness")
        started = glob.glob(os.path.join(env["XDG_RUNTIME_DIR"], "homed", "nats-home-*.sock.pid"))
        assert len(started) == 1, os.listdir(env["XDG_RUNTIME_DIR"])
        pid = int(open(started[0]).read())
        pids.append(pid)
        same(run(homed.socket_path, env, "get", "Kitchen/Lamp/Brightness"), b, "get")
        assert stat_mode(started[0][:-len(".pid")]) == 0o600
        # Found, not started again; any command; --home and -o before the command.
        for args in (["accessories"], ["--json", "show", "Kitchen/Lamp"], ["-o", "json", "get", "Lamp/On"]):
            same(run(homed.socket_path, env, *args), nats(*args), args)
        assert glob.glob(os.path.join(env["XDG_RUNTIME_DIR"], "homed", "nats-home-*.sock.pid")) == started
        assert int(open(started[0]).read()) == pid
        # Usage errors stay homectl's.
        refused = nats("--socket", "/x.sock", "get", "1")
        assert refused.returncode == 64 and "--socket and --nats name two ways" in refused.stderr
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        site.devices.stop()


def stat_mode(path):
    return os.stat(path).st_mode & 0o777


def test_nats_away_is_unavailable_naming_the_server_and_the_socket_recovers(homed, server, processes, workdir, env):
    site = Site(homed, server, processes, workdir)
    try:
        wait_for(lambda: run(site.alice, env, "get", "Kitchen/Lamp/Brightness").returncode == 0 or None, 15, "there")
        with Client.connect(site.alice, client_name="held") as held:
            server.kill()
            b = run(site.alice, env, "get", "Kitchen/Lamp/Brightness")
            assert b.returncode == pb.UNAVAILABLE, b.stderr
            assert f"cannot reach the NATS server {server.url}" in b.stderr, b.stderr
            with pytest.raises(HomedError) as raised:
                held.call("ReadCharacteristics", pb.ReadCharacteristicsRequest(characteristic_ids=[1]))
            assert raised.value.code == pb.UNAVAILABLE and server.url in raised.value.message
            assert site.remote.proc.poll() is None, "the remote socket ended"
            server.start()
            wait_for(lambda: run(site.alice, env, "get", "Kitchen/Lamp/Brightness").returncode == 0 or None, 20,
                     "the remote socket carrying calls again")
            # The connection held across it carries calls again too.
            wait_for(lambda: _reads(held), 20, "the held connection's calls")
    finally:
        site.devices.stop()


def _reads(client):
    try:
        client.call("GetStatus", pb.GetStatusRequest())
        return True
    except HomedError:
        return None


def burst(devices, count, start=0):
    for i in range(start, start + count):
        devices.report(TEMP if i % 2 else BRIGHTNESS, (10.0 + i / 10) if i % 2 else i % 101)


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


def test_a_watch_on_the_remote_socket_across_a_server_kill_and_a_homed_kill_misses_nothing(stored_homed, server,
                                                                                         processes, workdir, env):
    homed = stored_homed
    site = Site(homed, server, processes, workdir)
    try:
        wait_for(lambda: run(site.alice, env, "get", "Kitchen/Lamp/Brightness").returncode == 0 or None, 15, "there")
        watch = ProviderProcess([homectl_binary(), "--socket", site.alice, "watch", "--kind", "value", "-o", "json"],
                                os.path.join(workdir, "remote-watch.log"), env=env)
        processes.append(watch)
        watch.start()
        # Live once its subscription is (homectl prints nothing for that): reported until one comes.
        tries = iter(range(1, 1000))

        def live():
            site.devices.report(TEMP, 1000.0 + next(tries))
            return any(l.get("value", 0) > 1000 for l in watch.history) or None
        wait_for(live, 20, "the first event", watch)
        burst(site.devices, 100)
        server.kill()
        burst(site.devices, 100, start=100)  # homed commits while the server is dead
        server.start()
        burst(site.devices, 100, start=200)
        # homed killed: on its database the journal goes on (one journal, no resync).
        site.devices.stop()
        homed.proc.send_signal(signal.SIGKILL)
        homed.proc.wait(5)
        homed.start()
        site.devices = Devices(homed.socket_path).start()
        burst(site.devices, 100, start=300)
        check_nothing_missed_nor_twice(homed, watch, server.url)
    finally:
        site.devices.stop()


def check_nothing_missed_nor_twice(homed, watch, url=None):
    """The watch printed every value event homed stored from its first on, once, in
    order, in one journal, with no resync. (`url`: the server, to say whether the
    stream holds what the watch missed.)"""
    with homed.client() as client:
        last = client.call("ReadHistory", pb.ReadHistoryRequest(
            limit=1, newest_first=True, filter=pb.SubscriptionFilter(kinds=[pb.EVENT_VALUE_CHANGED]))).events[0].seq
    wait_for(lambda: any(l.get("seq") == last for l in watch.history) or None, 60, f"event {last}", watch)
    lines = [l for l in watch.history if l.get("kind") == "value"]
    seqs = [l["seq"] for l in lines]
    assert len(seqs) == len(set(seqs)), "an event came twice"
    expected, journal = history_seqs(homed, seqs[0] - 1, seqs[-1])
    missed = sorted(set(expected) - set(seqs))
    if missed and url:
        from homed_nats.layout import Names

        from .nats_home import journal_events, read_stream
        held = {seq for _, seq, _ in journal_events(read_stream(url, Names("home"), user="bridge",
                                                                password="bridge-secret"))}
        assert not missed, f"missed {missed[:10]}; the stream holds {sorted(held & set(missed))[:10]} of them"
    assert seqs == expected, f"missed {missed[:10]}"
    assert {l["journal"] for l in lines} == {journal}
    assert not [l for l in watch.history if l.get("kind") == "resync"]
    assert watch.proc.poll() is None, "the watch ended"


def consumers(url):
    """How many consumers the journal's stream has (a subscription on the remote socket makes one)."""
    import asyncio

    import nats

    from homed_nats.layout import Names

    async def count():
        nc = await nats.connect(url, user="bridge", password="bridge-secret")
        try:
            return (await nc.jetstream().stream_info(Names("home").stream)).state.consumer_count
        finally:
            await nc.close()
    return asyncio.run(count())


def test_a_new_journal_is_a_resync_then_a_snapshot_on_both_sockets(workdir, server, processes, env):
    """homed without its stored history (--history-retention off) starts a new
    journal on every start: both watches print a resync line, the snapshot of what
    they watch, its end, and go on in the new journal."""
    from homed_testkit import HomedProcess, require_binary
    from homed_testkit.providers import wait_log
    homed = HomedProcess(require_binary(), workdir, extra_args=["--history-retention", "off"]).start()
    try:
        site = Site(homed, server, processes, workdir)
        wait_for(lambda: run(site.alice, env, "get", "Kitchen/Lamp/Brightness").returncode == 0 or None, 15, "there")
        args = ["watch", "--accessory", "Lamp", "--kind", "value", "-C", "2", "-o", "json"]
        readers = consumers(server.url)
        local = ProviderProcess([homectl_binary(), "--socket", homed.socket_path, *args],
                                os.path.join(workdir, "homectl-watch.log"), env=env).start()
        far = ProviderProcess([homectl_binary(), "--socket", site.alice, *args],
                              os.path.join(workdir, "remote-watch.log"), env=env).start()
        processes += [local, far]
        # A watch without --snapshot prints nothing before a change: both must be
        # following before it (homectl's subscription in homed, the remote's consumer).
        wait_for(lambda: watching(homed.socket_path, homed, local.proc.pid) or None, 30, "subscribed", local)
        wait_for(lambda: consumers(server.url) > readers or None, 30, "the remote's consumer", far)
        site.devices.report(BRIGHTNESS, 42)
        for process in (local, far):
            wait_for(lambda: any(l.get("value") == 42 for l in process.history) or None, 15, "42", process)
        site.devices.stop()
        homed.proc.send_signal(signal.SIGKILL)
        homed.proc.wait(5)
        homed.start()
        site.devices = Devices(homed.socket_path).start()
        wait_log(site.bridge, "homed resync", timeout=30)
        # Subscribed again (or done already: the new journal's first value event can be its second).
        wait_for(lambda: local.proc.poll() is not None or watching(homed.socket_path, homed, local.proc.pid) or None,
                 30, "subscribed again", local)
        site.devices.report(BRIGHTNESS, 43)
        for process in (local, far):
            assert process.proc.wait(20) == 0, process.log()
        a, b = ([l for l in process.history if l.get("event") != "exit"] for process in (local, far))
        shape = lambda lines: [(l["kind"], l.get("characteristic_id")) for l in lines]  # noqa: E731
        assert shape(a) == shape(b)
        kinds = [k for k, _ in shape(a)]
        assert kinds[0] == "value" and kinds[1] == "resync" and kinds[-2:] == ["snapshot-end", "value"], kinds
        assert set(kinds[2:-2]) == {"snapshot"}
        assert a[0]["journal"] != a[-1]["journal"] and b[0]["journal"] == a[0]["journal"]
        assert {l["journal"] for l in a[1:]} == {l["journal"] for l in b[1:]} == {a[-1]["journal"]}
        assert "Traceback" not in site.bridge.log()
        site.devices.stop()
    finally:
        homed.kill()


class Cut:
    """A network cut between the bridge and the remote socket on one side and
    nats-server on the other: the server in a network namespace of its own behind
    a veth pair, the link set down and up again (`ip netns`, as root); without
    that right, the server process is stopped (SIGSTOP) and continued: its
    connections hang as over a cut link."""

    def __init__(self, workdir):
        from .nats_server import NatsServer
        from .remote_site import ACCOUNTS
        self.ns = f"homed-cut-{os.getpid()}"
        self.veth = f"hc{os.getpid() % 100000}"
        # A /30 of its own per process, so that test runs side by side do not share addresses.
        n = os.getpid() % 16384
        self.near, self.far = (f"10.211.{n // 64}.{(n % 64) * 4 + host}" for host in (1, 2))
        self.netns = os.geteuid() == 0 and self._try_netns()
        host = self.far if self.netns else "127.0.0.1"
        self.server = NatsServer(workdir, "cut", host=host, config=ACCOUNTS.replace("127.0.0.1:{port}",
                                                                                   f"{host}:{{port}}"),
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
        if self.server.proc is not None and not self.netns:
            self.server.proc.send_signal(signal.SIGCONT)
        self.server.kill()
        self._run("ip", "link", "del", self.veth)
        self._run("ip", "netns", "del", self.ns)


def test_a_watch_on_the_remote_socket_across_a_network_cut_misses_nothing(stored_homed, processes, workdir, env):
    from homed_testkit.providers import wait_log
    homed = stored_homed
    cut = Cut(workdir)
    try:
        print("network cut by", "a network namespace (veth down/up)" if cut.netns else "SIGSTOP/SIGCONT")
        cut.server.start()
        site = Site(homed, cut.server, processes, workdir)
        try:
            wait_for(lambda: run(site.alice, env, "get", "Kitchen/Lamp/Brightness").returncode == 0 or None, 15,
                     "there")
            watch = ProviderProcess([homectl_binary(), "--socket", site.alice, "watch", "--kind", "value", "-o",
                                     "json"], os.path.join(workdir, "remote-watch.log"), env=env)
            processes.append(watch)
            watch.start()
            tries = iter(range(1, 1000))

            def live():
                site.devices.report(TEMP, 1000.0 + next(tries))
                return any(l.get("value", 0) > 1000 for l in watch.history) or None
            wait_for(live, 20, "the first event", watch)
            burst(site.devices, 100)
            cut.cut()
            for i in range(100, 200):  # homed goes on committing meanwhile
                burst(site.devices, 1, start=i)
            # The cut lasts until the remote socket has felt it (its pings unanswered:
            # ~15 s); the bridge, whose writes fill the cut connection, may feel it later.
            wait_log(site.remote, "lost the NATS server", timeout=40)
            cut.mend()
            burst(site.devices, 100, start=200)
            check_nothing_missed_nor_twice(homed, watch, cut.server.url)
            assert "Traceback" not in site.bridge.log()
        finally:
            site.devices.stop()
    finally:
        cut.close()


def test_watch_since_a_time_prints_what_it_prints_on_homeds(stored_homed, server, processes, workdir, env):
    """`watch --since 1h`: the kept events since then (homed finds the first by its
    history; the remote socket then replays them from the stream), then live."""
    homed = stored_homed
    site = Site(homed, server, processes, workdir)
    try:
        for value in (31, 32, 33):
            site.devices.report(BRIGHTNESS, value)
        wait_for(lambda: "33%" in run(site.alice, env, "get", "Kitchen/Lamp/Brightness").stdout or None, 15, "33")
        with homed.client() as client:
            events = client.call("ReadHistory", pb.ReadHistoryRequest(
                filter=pb.SubscriptionFilter(kinds=[pb.EVENT_VALUE_CHANGED]), limit=1000)).events
        count = len([e for e in events if e.value.accessory_id])
        args = ["watch", "--since", "1h", "--kind", "value", "-C", str(count), "-o", "json"]
        a, b = run(homed.socket_path, env, *args), run(site.alice, env, *args)
        assert (a.returncode, b.returncode) == (0, 0), (a.stderr, b.stderr)
        assert a.stdout == b.stdout
        assert [json.loads(l).get("value") for l in b.stdout.splitlines()][-3:] == [31, 32, 33]
    finally:
        site.devices.stop()
