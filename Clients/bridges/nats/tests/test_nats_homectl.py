"""The real `homectl --nats URL … watch | get | set` (HOMECTL_BIN), which runs
`homed-nats-remote` in its place (found on PATH: a directory holding it is put
there for the test), held against the same homectl over homed's socket on the
same homed: the same stdout — text, JSON and YAML — and the same exit codes,
errors included; and a remote `homectl --nats … watch` across a nats-server
kill -9 misses nothing and repeats nothing."""

import json
import os
import re
import subprocess

import pytest

from homed import pb
from homed_testkit import ProviderProcess, kill_pid
from homed_testkit.providers import wait_for

from .nats_home import BRIGHTNESS, TEMP, Devices, found, make_home, start_bridge
from .test_nats_cli import REMOTE, Site, burst, check_nothing_missed_nor_twice, consumers, homectl_binary, watching
from .test_nats_writes import accounts_server  # noqa: F401 - the fixture


@pytest.fixture
def env(workdir):
    """PATH with a directory holding `homed-nats-remote` (this tree's, by a link, as
    installed beside homectl); TZ fixed, as watch's text shows local times."""
    directory = os.path.join(workdir, "bin")
    os.makedirs(directory)
    os.symlink(REMOTE, os.path.join(directory, "homed-nats-remote"))
    return dict(os.environ, PATH=directory + os.pathsep + os.environ.get("PATH", ""), TZ="UTC")


def homectl_nats(env, url, *args, user_file=None):
    argv = [homectl_binary(), "--nats", url]
    if user_file:
        argv += ["--nats-user-file", user_file]
    return subprocess.run(argv + list(args), capture_output=True, text=True, timeout=30, env=env)


def local(homed, env, *args):
    return subprocess.run([homectl_binary(), "--socket", homed.socket_path, *args], capture_output=True, text=True,
                          timeout=30, env=env)


def same(a, b, what):
    """The same exit code and stdout, and the same message after the program's name."""
    assert (b.returncode, b.stdout) == (a.returncode, a.stdout), (what, a.stderr, b.stderr)
    assert words(b.stderr) == words(a.stderr), what


def words(stderr):
    """What a command said on stderr, each line without the program's name."""
    return re.sub(r"(?m)^(homectl|homed-nats-remote): ", "", stderr)


def without_bucket_fields(result):
    """The JSON or YAML of a get from the bucket without what it adds (seq, journal)."""
    text = result.stdout
    if text.startswith("["):
        return [{k: v for k, v in item.items() if k not in ("seq", "journal")} for item in json.loads(text)]
    return [line for line in text.splitlines() if not re.match(r"^  (seq|journal): ", line)]


def test_get_and_set_through_homectl_nats_print_what_homectl_prints(homed, accounts_server, processes, workdir, env):
    site = Site(homed, accounts_server, processes, workdir)
    url, inside, alice = site.url, site.inside, site.alice
    try:
        site.devices.report(BRIGHTNESS, 61)
        site.bucket_holds(61)
        # get, from the bucket: the same text; the same JSON and YAML but for seq and journal.
        for paths in (["Kitchen/Lamp/Brightness"], ["Kitchen/Lamp"], ["Lamp/On", "Garage/Sensor"]):
            a, b = local(homed, env, "get", *paths), homectl_nats(env, url, "get", *paths, user_file=inside)
            same(a, b, paths)
            assert "Kitchen/Lamp/Lightbulb/Brightness" in a.stdout or "Garage" in a.stdout
            for form in (["-o", "json"], ["--json"], ["-o", "yaml"]):
                a = local(homed, env, *form, "get", *paths)
                b = homectl_nats(env, url, *form, "get", *paths, user_file=inside)
                assert (a.returncode, b.returncode) == (0, 0), b.stderr
                assert without_bucket_fields(b) == without_bucket_fields(a), (paths, form)
            # --fresh asks homed: everything the same.
            a = local(homed, env, "get", "--fresh", *paths)
            same(a, homectl_nats(env, url, "get", "--fresh", *paths, user_file=alice), paths)
        # Names that resolve to nothing (5), a path with an empty part (3), in text and JSON.
        for path in ("Kitchen/Nope/Brightness", "999", "Kitchen//On", "Kitchen"):
            for form in ([], ["-o", "json"]):
                a = local(homed, env, "get", path, *form)
                b = homectl_nats(env, url, "get", path, *form, user_file=inside)
                same(a, b, path)
                assert a.returncode in (pb.NOT_FOUND, pb.INVALID_ARGUMENT), a.stderr
        # set: the same line but for the seq each write took effect at.
        a = local(homed, env, "set", "Kitchen/Lamp/Brightness", "55")
        b = homectl_nats(env, url, "set", "Kitchen/Lamp/Brightness", "56", user_file=alice)
        assert (a.returncode, b.returncode) == (0, 0), b.stderr
        seq = re.fullmatch(r"Test Home/Kitchen/Lamp/Lightbulb/Brightness = 56% \(seq (\d+)\)\n", b.stdout)
        assert seq and a.stdout == f"Test Home/Kitchen/Lamp/Lightbulb/Brightness = 55% (seq {int(seq[1]) - 1})\n", \
            (a.stdout, b.stdout)
        # Written again, the same value: unchanged, in both.
        a = local(homed, env, "set", "Kitchen/Lamp/Brightness", "56")
        same(a, homectl_nats(env, url, "set", "Kitchen/Lamp/Brightness", "56", user_file=alice), "unchanged")
        assert a.stdout.endswith("= 56% (unchanged)\n")
        for form in (["-o", "json"], ["-o", "yaml"]):
            a = local(homed, env, *form, "set", "Kitchen/Lamp/Brightness", "57")
            b = homectl_nats(env, url, *form, "set", "Kitchen/Lamp/Brightness", "58", user_file=alice)
            assert (a.returncode, b.returncode) == (0, 0), b.stderr
            assert re.sub(r"\b57\b", "58", re.sub(r"(seq\W+)\d+", r"\1N", a.stdout)) == \
                re.sub(r"(seq\W+)\d+", r"\1N", b.stdout), form
        # Refusals: an invalid value (3), a name that is not there (5), a conditional
        # write whose condition does not hold (9): nothing on stdout, the same words.
        for args in (["Kitchen/Lamp/Brightness", "555"], ["Kitchen/Lamp/Brightness", "abc"],
                     ["Kitchen/Lamp/On", "maybe"], ["Kitchen/Lamp/Nope", "1"], ["999", "1"],
                     ["Kitchen/Lamp/Brightness", "59", "--if", "40"]):
            for form in ([], ["-o", "json"]):
                a = local(homed, env, "set", *args, *form)
                same(a, homectl_nats(env, url, "set", *args, *form, user_file=alice), args)
                assert a.returncode != 0
        codes = {tuple(args): local(homed, env, "set", *args).returncode for args in
                 (["Kitchen/Lamp/Brightness", "555"], ["Kitchen/Lamp/Nope", "1"],
                  ["Kitchen/Lamp/Brightness", "59", "--if", "40"])}
        assert sorted(codes.values()) == [pb.INVALID_ARGUMENT, pb.NOT_FOUND, pb.FAILED_PRECONDITION]
        assert local(homed, env, "set", "Kitchen/Lamp/Brightness", "59", "--if", "58").returncode == 0
        b = homectl_nats(env, url, "set", "Kitchen/Lamp/Brightness", "60", "--if", "59", user_file=alice)
        assert b.returncode == 0 and "= 60% (seq " in b.stdout, b.stderr
        # A viewer's write is refused (7, as over the socket for a viewer), nothing written.
        b = homectl_nats(env, url, "set", "Kitchen/Lamp/Brightness", "61", user_file=site.victor)
        assert (b.returncode, b.stdout) == (pb.PERMISSION_DENIED, "")
        assert "needs the user role; the NATS caller REMOTE/victor has the viewer role" in b.stderr
        with homed.client() as client:
            lamp = found(client)["lamp"]
            brightness = next(c.id for s in lamp.services for c in s.characteristics if c.type_name == "Brightness")
            assert client.read([brightness]).reads[0].value.int_value == 60
        # --home: paths looked up in that home (homectl's get has no --home over the socket:
        # held against the path that starts with the home's name). Another home with a
        # Kitchen, without a lamp: not found there.
        with homed.client() as client:
            cabin = client.call("ChangeLayout", pb.LayoutRequest(add_home=pb.AddHome(name="Cabin"))).created_id
            client.call("ChangeLayout", pb.LayoutRequest(add_room=pb.AddRoom(home_id=cabin, name="Kitchen")))
        wait_for(lambda: homectl_nats(env, url, "get", "Cabin/Kitchen/Lamp", user_file=inside).returncode
                 == pb.NOT_FOUND or None, 15, "the second home in the bucket's layout")
        for home in ("Test Home", "Cabin"):
            a = local(homed, env, "get", f"{home}/Kitchen/Lamp/Brightness")
            same(a, homectl_nats(env, url, "--home", home, "get", "Kitchen/Lamp/Brightness", user_file=inside), home)
            same(a, homectl_nats(env, url, "get", "--home", home, "Kitchen/Lamp/Brightness", user_file=inside), home)
        assert homectl_nats(env, url, "--home", "Test Home", "get", "Lamp/On", user_file=inside).returncode == 0
        b = homectl_nats(env, url, "--home", "Cabin", "set", "Kitchen/Lamp/Brightness", "62", user_file=alice)
        assert b.returncode == pb.NOT_FOUND, b.stderr
        a = local(homed, env, "set", "Test Home/Kitchen/Lamp/Brightness", "63")
        b = homectl_nats(env, url, "--home", "Test Home", "set", "Kitchen/Lamp/Brightness", "64", user_file=alice)
        assert re.sub(r"63% \(seq \d+", "", a.stdout) == re.sub(r"64% \(seq \d+", "", b.stdout), b.stderr
        # Options homectl refuses: the same exit code (64).
        for args in (["-o", "yaml", "watch"], ["watch", "--kind", "nonsense"], ["-o", "table", "get", "Lamp/On"]):
            a, b = local(homed, env, *args), homectl_nats(env, url, *args, user_file=inside)
            assert a.returncode == b.returncode == 64, (args, b.stderr)
            assert b.stdout == ""
        assert "Traceback" not in site.bridge.log()
    finally:
        site.devices.stop()


class TextWatch:
    """A watch whose stdout (text for people, or JSON lines) goes to a file."""

    def __init__(self, argv, path, env):
        self.path = path
        with open(path, "w") as out, open(path + ".err", "w") as err:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)

    def lines(self):
        with open(self.path) as f:
            return f.read().splitlines()

    def cleanup(self):
        kill_pid(self.proc)


def test_watch_through_homectl_nats_prints_what_homectl_prints(homed, server, processes, workdir, env):
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    bridge = start_bridge(homed, server.url, processes)
    try:
        wait_for(lambda: homectl_nats(env, server.url, "get", "Kitchen/Lamp/Brightness").returncode == 0 or None,
                 15, "the bucket")
        watches = {"text": ["-o", "text", "watch", "--snapshot", "--accessory", "Lamp", "-C", "4"],
                   "json": ["watch", "--snapshot", "--room", "Garage", "--characteristic", "Kitchen/Lamp/Brightness",
                            "-C", "5", "--json"],
                   "layout": ["watch", "--kind", "layout", "-C", "1", "-o", "text"]}
        pairs = {}
        readers = consumers(server.url)
        for name, args in watches.items():
            a = TextWatch([homectl_binary(), "--socket", homed.socket_path, *args],
                          os.path.join(workdir, f"local-{name}.out"), env)
            b = TextWatch([homectl_binary(), "--nats", server.url, *args], os.path.join(workdir, f"nats-{name}.out"),
                          env)
            processes += [a, b]
            pairs[name] = (a, b)
        for name in ("text", "json"):
            for w in pairs[name]:
                wait_for(lambda: any("the state above" in l or "snapshot-end" in l for l in w.lines()) or None, 20,
                         f"the snapshot's end ({name})")
        # The layout watches print nothing before a change: both must be following first
        # (homectl's subscription in homed; the consumer of every homectl --nats watch).
        wait_for(lambda: watching(homed, pairs["layout"][0].proc.pid) or None, 30, "homectl's subscription")
        wait_for(lambda: consumers(server.url) >= readers + len(pairs) or None, 30, "the remote watches' consumers")
        devices.report(BRIGHTNESS, 42)
        with homed.client() as client:
            client.call("ChangeLayout", pb.LayoutRequest(add_room=pb.AddRoom(home_id=1, name="Attic")))
        for value in (43, 44, 45):
            devices.report(BRIGHTNESS, value)
        devices.report(TEMP, 20.5)
        for name, (a, b) in pairs.items():
            assert a.proc.wait(20) == 0 and b.proc.wait(20) == 0, name
            x, y = a.lines(), b.lines()
            if name == "json":
                # The snapshot lines stand at the seq of homectl's own subscription, the
                # remote's at the bucket's cursor; the rest is the same.
                x, y = ([json.dumps({k: v for k, v in json.loads(l).items()
                                     if not (k == "seq" and json.loads(l)["kind"].startswith("snapshot"))})
                         for l in lines] for lines in (x, y))
            else:
                x, y = ([re.sub(r"at seq \d+;", "at seq N;", l) for l in lines] for lines in (x, y))
            assert x == y, name
            pairs[name] = x
        text = pairs["text"]
        assert "now           Kitchen/Lamp/Brightness = 40%" in text
        assert "-- the state above is at seq N; changes follow --" in text
        changes = [l.split("  ", 1)[1] for l in text if re.match(r"\d\d:\d\d:\d\d\.\d{3}  ", l)]
        assert [re.sub(r"  \(by provider [^)]*\)$", "", l) for l in changes] == \
            [f"Kitchen/Lamp/Brightness = {v}%" for v in (42, 43, 44, 45)], changes
        assert re.fullmatch(r'\d\d:\d\d:\d\d\.\d{3}  room "Attic" \(id \d+\) added(  \(by .*\))?',
                            pairs["layout"][0]), pairs["layout"]
        assert [json.loads(l).get("value") for l in pairs["json"] if json.loads(l)["kind"] == "value"] == \
            [42, 43, 44, 45, 20.5]
        assert "Traceback" not in bridge.log()
    finally:
        devices.stop()


def test_a_homectl_nats_watch_across_a_server_kill_misses_nothing(stored_homed, server, processes, workdir, env):
    homed = stored_homed
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    bridge = start_bridge(homed, server.url, processes)
    try:
        wait_for(lambda: homectl_nats(env, server.url, "get", "Kitchen/Lamp/Brightness").returncode == 0 or None,
                 15, "the bucket")
        readers = consumers(server.url)
        watch = ProviderProcess([homectl_binary(), "--nats", server.url, "watch", "--kind", "value", "-o", "json"],
                                os.path.join(workdir, "homectl-nats-watch.log"), env=env)
        processes.append(watch)
        watch.start()
        wait_for(lambda: consumers(server.url) > readers or None, 30, "the watch's consumer", watch)
        burst(devices, 100)
        server.kill()
        burst(devices, 100, start=100)  # homed commits while the server is dead
        server.start()
        burst(devices, 100, start=200)
        check_nothing_missed_nor_twice(homed, watch)
        assert watch.proc.poll() is None, "the watch ended"
        assert "Traceback" not in bridge.log()
    finally:
        devices.stop()
