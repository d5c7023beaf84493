"""`homed-nats-remote watch | get | set`: homectl's commands on another machine,
through NATS (the stream, the bucket and the request/reply services of
homed-nats) instead of homed's socket, and what `homectl --nats URL` runs in
its place. Same arguments (paths or ids), same output — text for people by
default (`-o text`), `-o json`, `-o yaml` for get and set, watch's JSON lines
when piped as homectl's — same messages for a name that resolves to nothing and
the same exit codes (the status code of the error; 4 for -W or --timeout, 15 for
--no-resync, 75 for a value of an unreachable accessory, 64 for bad options).

What differs, and why: `get` answers from the bucket (add --fresh to ask homed
through homed-nats), and its JSON adds each value's `seq` (homed's sequence
number of the change; 0 when it came from a snapshot) and `journal`; errors are
prefixed `homed-nats-remote:`; `--home H` also narrows get's and set's paths to
that home (homectl's get and set over the socket have no --home).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Dict, List, Optional

import nats
import nats.errors
import nats.js.errors

import homed
from homed import pb
from homed.broker import read_credentials

from . import graph as G
from . import layout as L
from . import text as T
from .remote import RemoteReader, remote_read, remote_write

PROG = "homed-nats-remote"
KIND_NAMES = {pb.EVENT_VALUE_CHANGED: "value", pb.EVENT_REACHABILITY_CHANGED: "reachability",
              pb.EVENT_LAYOUT_CHANGED: "layout", pb.EVENT_PRIMARY_HOME_CHANGED: "primary-home",
              pb.EVENT_ACTION_SET_EXECUTED: "action-set", pb.EVENT_TRIGGER_FIRED: "trigger"}
# homectl's --kind words → the stream's subject tokens (layout.KIND_TOKENS)
KIND_TOKEN = {"value": "value", "reachability": "reachability", "layout": "layout", "primary-home": "primary",
              "action-set": "scene", "trigger": "trigger"}


USAGE = 64  # sysexits' EX_USAGE, as homectl


class Exit(Exception):
    def __init__(self, code: int, message: str = ""):
        super().__init__(message)
        self.code, self.message = code, message


def out(obj, fmt: str = "json") -> None:
    """A JSON value as homectl prints it: one line of JSON, or YAML with -o yaml."""
    if fmt == "yaml":
        print(T.yaml(obj), flush=True)
    else:
        print(json.dumps(obj, separators=(",", ":"), ensure_ascii=False), flush=True)


def say(line: str) -> None:
    """A line of text for people (control characters made visible, as homectl does)."""
    print(T.terminal_safe(line), flush=True)


def layout_words(change):
    return (enum_word(change, "object", change.object, "OBJECT_"),
            enum_word(change, "action", change.action, "LAYOUT_"))


def enum_word(message, field: str, number: int, prefix: str) -> str:
    """An enum value as homectl writes it: OBJECT_SERVICE_GROUP → service-group."""
    value = message.DESCRIPTOR.fields_by_name[field].enum_type.values_by_number.get(number)
    return value.name[len(prefix):].lower().replace("_", "-") if value else "unknown"


class Home:
    """The layout and the catalog's value names, from the bucket."""

    def __init__(self, kv, names: L.Names, nc=None):
        self.kv, self.names, self.nc = kv, names, nc
        self.bucket_name = names.bucket
        self.graph: Optional[G.Graph] = None
        self.catalog: Dict[str, Dict[int, str]] = {}
        self.seq = 0

    async def load(self, at_least: int = 0, timeout: float = 5.0) -> "Home":
        """The layout key (waiting, within `timeout`, for one at or past homed seq `at_least`);
        from the bridge's layout service when this account cannot read the bucket."""
        if self.kv is None:
            return await self._load_by_request()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            try:
                layout = json.loads((await self.kv.get("layout")).value)
            except nats.js.errors.KeyNotFoundError:
                layout = None
            if layout is not None and (layout.get("seq", 0) >= at_least or loop.time() > deadline):
                break
            if layout is None and loop.time() > deadline:
                raise Exit(pb.UNAVAILABLE, f"bucket {self.bucket_name} holds no layout yet (is homed-nats running?)")
            await asyncio.sleep(0.05)
        try:
            types = json.loads((await self.kv.get("types")).value)
        except (nats.js.errors.KeyNotFoundError, ValueError):
            types = {}
        return self._take(layout, types)

    async def _load_by_request(self) -> "Home":
        try:
            msg = await self.nc.request(self.names.layout_service, b"", timeout=5)
        except (nats.errors.NoRespondersError, nats.errors.TimeoutError):
            raise Exit(pb.UNAVAILABLE, f"cannot read bucket {self.bucket_name} and no homed-nats answers on "
                                       f"{self.names.layout_service}") from None
        code = int((msg.headers or {}).get(L.HDR_STATUS, "-1"))
        if code != pb.OK:
            status = pb.CallStatus.FromString(msg.data) if code > 0 else pb.CallStatus(code=pb.INTERNAL)
            raise Exit(status.code, status.message)
        answer = json.loads(msg.data)
        if "layout" not in answer:
            raise Exit(pb.UNAVAILABLE, f"homed-nats holds no layout yet (bucket {self.bucket_name})")
        return self._take(answer["layout"], answer.get("types", {}))

    def scoped(self, home: Optional[str]) -> "Home":
        """With --home: the graph of that home alone, so that paths are looked up in it
        (and ids of other homes name nothing)."""
        if home is not None:
            home_id = self.graph.resolve_home(home)
            self.graph = G.Graph([self.graph.homes[home_id]])
        return self

    def _take(self, layout: dict, types: dict) -> "Home":
        from google.protobuf import json_format
        self.seq = layout.get("seq", 0)
        self.graph = G.Graph([json_format.ParseDict(h, pb.Home()) for h in layout.get("homes", [])])
        self.catalog = {uuid: {int(n): name for n, name in names.items()} for uuid, names in types.items()}
        return self

    # -- homectl's JSON fields ------------------------------------------------------------

    def accessory_fields(self, aid: int) -> dict:
        g = self.graph
        accessory = g.accessories.get(aid)
        room = g.rooms.get(g.accessory_room(accessory)) if accessory else None
        return {"home_id": g.home_of_accessory(accessory) if accessory else 0, "room_id": room.id if room else 0,
                "room": room.name if room else "", "accessory_id": aid, "accessory": accessory.name if accessory else ""}

    def characteristic_fields(self, cid: int, sid: int) -> dict:
        service = self.graph.services.get(sid)
        char = self.graph.characteristics.get(cid)
        return {"service_id": sid, "service": (service.name or service.type_name) if service else "",
                "characteristic_id": cid, "characteristic": char.type_name if char else "",
                "type": char.type if char else ""}

    def value_name(self, cid: int, value):
        return G.value_name(self.graph.characteristics.get(cid), value, self.catalog)


def event_line(home: Home, event, journal: str) -> dict:
    line = {"seq": event.seq, "journal": journal, "kind": KIND_NAMES.get(event.kind, "unknown"),
            "time": G.iso_time(event.time_ms)}
    body = event.WhichOneof("body")
    if body == "value":
        v = event.value
        line.update(home.accessory_fields(v.accessory_id))
        line.update(home.characteristic_fields(v.characteristic_id, v.service_id))
        line.update(value=G.value_json(v.value), value_name=home.value_name(v.characteristic_id, v.value),
                    merged=v.merged)
    elif body == "reachability":
        line.update(home.accessory_fields(event.reachability.accessory_id))
        line["reachable"] = event.reachability.reachable
    elif body == "layout":
        c = event.layout
        line.update(home_id=c.home_id, action=enum_word(c, "action", c.action, "LAYOUT_"),
                    object=enum_word(c, "object", c.object, "OBJECT_"), object_id=c.object_id, name=c.name,
                    parent_id=c.parent_id)
    elif body == "primary_home_id":
        line["home_id"] = event.primary_home_id
    elif body == "action_set_id":
        found = next((a for h in home.graph.homes.values() for a in h.action_sets if a.id == event.action_set_id),
                     None)
        line.update(action_set_id=event.action_set_id, action_set=found.name if found else "")
    elif body == "trigger_id":
        found = next((t for h in home.graph.homes.values() for t in h.triggers if t.id == event.trigger_id), None)
        line.update(trigger_id=event.trigger_id, trigger=found.name if found else "")
    o = event.origin
    line["origin"] = {"kind": enum_word(o, "kind", o.kind, "ORIGIN_"), "connection_id": o.connection_id,
                      "name": o.name, "uid": o.uid if o.HasField("uid") else None,
                      "local": False}  # never this command's own connection: it has none to homed
    return line


def snapshot_line(home: Home, entry: dict, journal: str, seq: int) -> dict:
    value = L.value_from_json(entry["value"])
    line = {"seq": seq, "journal": journal, "kind": "snapshot", "time": G.iso_time(entry.get("updated_ms", 0))}
    line.update(home.accessory_fields(entry["accessory"]))
    line.update(home.characteristic_fields(entry["id"], entry["service"]))
    line.update(value=G.value_json(value), value_name=home.value_name(entry["id"], value))
    return line


# -- watch ------------------------------------------------------------------------------------

class Filter:
    """homectl watch's options as ids, resolved with homectl's rules, selecting as homed's
    subscription filter does (Sources/HomeServer/Subscriptions/SubscriptionScope.swift):
    the places and characteristics named are a union, the kinds narrow it. The stream's
    subjects narrow what is fetched only where one subject says the same (one option, once)."""

    def __init__(self, args, graph: G.Graph):
        self.homes = {graph.resolve_home(t) for t in args.home}
        self.rooms = {graph.resolve_room(t) for t in args.room}
        self.accessories = {graph.resolve_accessory(t) for t in args.accessory}
        self.characteristics = {graph.resolve_characteristic(t) for t in args.characteristic}
        self.kinds = set(args.kinds)
        self.graph = graph

    @property
    def everything(self) -> bool:
        return not (self.homes or self.rooms or self.accessories or self.characteristics)

    def subject_tokens(self) -> dict:
        tokens = {}
        # Not by home: homed gives a watch of any home the scene, trigger and
        # primary-home events of every home, which the stream files under their own.
        named = [(k, v) for k, v in (("room", self.rooms), ("accessory", self.accessories)) if v]
        if len(named) == 1 and len(named[0][1]) == 1 and not (self.characteristics or self.homes):
            tokens[named[0][0]] = next(iter(named[0][1]))
        if len(self.kinds) == 1:
            tokens["kind"] = KIND_TOKEN[next(iter(self.kinds))]
        return tokens

    def _covers_accessory(self, aid: int) -> bool:
        if aid in self.accessories:
            return True
        accessory = self.graph.accessories.get(aid)
        if accessory is None:
            return False
        return self.graph.home_of_accessory(accessory) in self.homes or \
            self.graph.accessory_room(accessory) in self.rooms

    def _covers(self, cid: int, aid: int) -> bool:
        return self.everything or cid in self.characteristics or self._covers_accessory(aid)

    def entry(self, entry: dict) -> bool:
        return self._covers(entry["id"], entry["accessory"])

    def event(self, event) -> bool:
        if self.kinds and KIND_NAMES.get(event.kind) not in self.kinds:
            return False
        body = event.WhichOneof("body")
        if body == "value":
            return self._covers(event.value.characteristic_id, event.value.accessory_id)
        if body == "reachability":
            return self.everything or self._covers_accessory(event.reachability.accessory_id)
        if body == "layout":
            c = event.layout
            return self.everything or c.home_id in self.homes or c.object_id in self.rooms or \
                c.object_id in self.accessories or c.object_id in self.characteristics or \
                (c.object == pb.OBJECT_ACCESSORY and self._covers_accessory(c.object_id))
        return self.everything or bool(self.homes)


async def watch(nc, names: L.Names, args) -> int:
    js = nc.jetstream(timeout=5)
    kv = await bucket(js, names)
    home = await Home(kv, names, nc).load()
    flt = Filter(args, home.graph)
    reader = RemoteReader(nc, names, **flt.subject_tokens())
    printed = 0
    first = True
    pending_resync = False
    async for item in reader:
        if item.kind == "snapshot":
            # The first from the bucket (at its cursor), later ones from the stream
            # after a resync: each is the state at homed's seq item.seq.
            show = (args.snapshot and first) or pending_resync
            first = pending_resync = False
            if show:
                await home.load()
                for cid in sorted(item.values):
                    entry = item.values[cid]
                    if not flt.entry(entry):
                        continue
                    if args.text:
                        say(T.snapshot_line(home.graph, home.catalog, entry["id"],
                                            L.value_from_json(entry["value"])))
                    else:
                        out(snapshot_line(home, entry, item.journal, item.seq))
                if args.text:
                    say(T.snapshot_end(item.seq))
                else:
                    out({"seq": item.seq, "journal": item.journal, "kind": "snapshot-end"})
        elif item.kind == "resync":
            if args.no_resync:
                raise Exit(15, f"resync required ({item.reason}) and --no-resync was given")
            pending_resync = True
            line = {"seq": item.seq, "journal": item.journal, "kind": "resync"}
            if item.reason:
                line["reason"] = item.reason
            if args.text:
                say(T.resync(item.reason))
            else:
                out(line)
        else:
            event = item.event
            if event.kind == pb.EVENT_LAYOUT_CHANGED:
                await home.load(at_least=event.seq)
                flt.graph = home.graph
            if not flt.event(event):
                continue
            if args.text:
                say(T.event_line(home.graph, home.catalog, event, layout_words))
            else:
                out(event_line(home, event, item.journal))
            printed += 1
            if args.count and printed >= args.count:
                return 0
    return 0


# -- get and set --------------------------------------------------------------------------------

async def bucket(js, names: L.Names, required: bool = True):
    """The site's bucket; None (when not `required`) for an account that has no JetStream
    of the bridge's: set and get --fresh then take the layout from the bridge's service."""
    try:
        return await asyncio.wait_for(js.key_value(names.bucket), 3)
    except nats.js.errors.BucketNotFoundError:
        raise Exit(pb.UNAVAILABLE, f"no bucket {names.bucket} on the NATS server: is homed-nats running for site "
                                   f"{names.site}?") from None
    except (nats.errors.Error, asyncio.TimeoutError) as error:
        if required:
            raise Exit(pb.UNAVAILABLE, f"cannot read bucket {names.bucket}: {error or type(error).__name__}") \
                from None
        return None


async def get(nc, names: L.Names, args) -> int:
    js = nc.jetstream(timeout=5)
    kv = await bucket(js, names, required=not args.fresh)
    home = (await Home(kv, names, nc).load()).scoped(args.home)
    g = home.graph
    targets: List[int] = []
    for path in args.paths:
        targets += g.readable_of(path)
    items, rows, failure, unreachable = [], [], None, False
    if args.fresh:
        by_home: Dict[int, List[int]] = {}
        for cid in targets:
            by_home.setdefault(g.home_of_accessory(g.accessories[g.characteristics[cid].accessory_id]), []).append(cid)
        reads = {}
        for home_id, ids in by_home.items():
            response = await remote_read(nc, names, home_id, ids, fresh=True)
            reads.update({r.characteristic_id: r for r in response.reads})
    for cid in targets:
        path = g.path_of(cid) or str(cid)
        char = g.characteristics[cid]
        accessory = g.accessories.get(char.accessory_id)
        seq, journal = 0, ""
        if args.fresh:
            read = reads[cid]
            if read.code != pb.OK:
                error = homed.error_for(read.code, read.message)
                failure = failure or error
                if args.output == "text":
                    print(f"{PROG}: {path}: {read.message}", file=sys.stderr, flush=True)
                items.append({"id": cid, "path": path, "error": {"code": error.code_name, "status": read.code,
                                                                 "message": read.message}})
                continue
            value, updated_ms = read.value, read.last_updated_ms
        else:
            try:
                entry = json.loads((await kv.get(f"c.{cid}")).value)
            except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
                message = f"characteristic {cid} has no value in bucket {names.bucket} (homed had none to send)"
                failure = failure or homed.error_for(pb.NOT_FOUND, message)
                if args.output == "text":
                    print(f"{PROG}: {path}: {message}", file=sys.stderr, flush=True)
                items.append({"id": cid, "path": path, "error": {"code": "NOT_FOUND", "status": pb.NOT_FOUND,
                                                                 "message": message}})
                continue
            value, updated_ms = L.value_from_json(entry["value"]), entry.get("updated_ms", 0)
            seq, journal = entry.get("seq", 0), entry.get("journal", "")
        reachable = accessory.reachable if accessory else True
        if not args.fresh and accessory is not None:
            try:
                reachable = json.loads((await kv.get(f"a.{accessory.id}")).value)["reachable"]
            except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
                pass
        unreachable |= not reachable
        item = {"id": cid, "path": path, "value": G.value_json(value), "value_name": home.value_name(cid, value),
                "reachable": reachable, "updated": G.iso_time(updated_ms) if updated_ms else None}
        if not args.fresh:
            item.update(seq=seq, journal=journal)
        items.append(item)
        shown = T.display(char, value, home.catalog)
        if not reachable:
            shown += f" (unreachable, last updated {T.clock(updated_ms)[:8]})" if updated_ms else \
                " (unreachable, never read)"
        rows.append([path, shown])
    if args.output == "text":
        for line in T.table(rows):
            print(line, flush=True)
    else:
        out(items, args.output)
    if failure is not None:
        return failure.code
    return 75 if unreachable else 0


async def set_value(nc, names: L.Names, args) -> int:
    js = nc.jetstream(timeout=5)
    kv = await bucket(js, names, required=False)
    home = (await Home(kv, names, nc).load()).scoped(args.home)
    g = home.graph
    cid = g.resolve_characteristic(args.path)
    char = g.characteristics[cid]
    value = G.parse_value(args.value, char, home.catalog)
    condition = G.parse_value(args.expected, char, home.catalog) if args.expected is not None else None
    home_id = g.home_of_accessory(g.accessories[char.accessory_id])
    response = await remote_write(nc, names, home_id, {cid: value}, condition=condition)
    result = response.results[0]
    if result.code != pb.OK:
        raise Exit(result.code, result.message)
    path = g.path_of(cid) or args.path
    if args.output == "text":
        shown = T.display(char, value, home.catalog)
        say(f"{path} = {shown} (unchanged)" if result.seq == 0 else f"{path} = {shown} (seq {result.seq})")
    else:
        out({"id": cid, "path": path, "value": G.value_json(value), "seq": result.seq}, args.output)
    return 0


# -- the command ------------------------------------------------------------------------------------

FORMATS = ["text", "json", "yaml"]


class Parser(argparse.ArgumentParser):
    """Bad options exit 64 (homectl's usage code), not argparse's 2."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", action="append", metavar="URL", help="a NATS server (repeat for a cluster)")
    p.add_argument("--site", default="home", help="the homed's site name on NATS (homed-nats --site)")
    p.add_argument("--user-file", metavar="FILE", help="username=… and password=… lines")
    p.add_argument("--creds", metavar="FILE", help="a NATS .creds file")
    # -o, --json and --timeout before the command or after it, as homectl takes them.
    output = dict(choices=FORMATS, metavar="FORMAT", help="text (for people; the default), json or yaml")
    p.add_argument("-o", "--output", default=None, **output)
    p.add_argument("--json", action="store_true", help="the same as -o json")
    commands = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    w = commands.add_parser("watch", help="homectl watch, remotely")
    for name in ("home", "room", "accessory", "characteristic"):
        w.add_argument(f"--{name}", action="append", default=[], metavar="PATH")
    w.add_argument("--kind", action="append", default=[], dest="kind_arguments",
                   help="value, reachability, layout, primary-home, action-set, trigger; repeatable or a list")
    w.add_argument("--snapshot", action="store_true", help="first print the current state (from the bucket)")
    w.add_argument("--no-resync", action="store_true", help="exit 15 instead of accepting a resync")
    w.add_argument("-C", dest="count", type=int, help="exit after this many events")
    w.add_argument("-W", dest="timeout", type=float, help="exit 4 after this many seconds")
    g = commands.add_parser("get", help="homectl get, remotely (from the bucket; --fresh asks homed)")
    g.add_argument("--fresh", action="store_true", help="ask homed (and the accessory) through homed-nats")
    g.add_argument("paths", nargs="+", metavar="PATH")
    s = commands.add_parser("set", help="homectl set, remotely")
    s.add_argument("--if", dest="expected", metavar="CURRENT", help="write only if it holds this value now")
    s.add_argument("path", metavar="PATH")
    s.add_argument("value", metavar="VALUE", help="a negative number too (-5)")
    for sub in (g, s):
        sub.add_argument("--home", metavar="HOME", help="look the paths up in this home (name or id)")
        sub.add_argument("--timeout", dest="deadline", type=float, default=10.0, metavar="SECONDS",
                         help="seconds to wait for an answer before exit 4 (0: wait forever)")
    for sub in (w, g, s):
        sub.add_argument("-o", "--output", default=argparse.SUPPRESS, **output)
        sub.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        # homectl takes it for every command (it changes only -o table and -o wide).
        sub.add_argument("--no-headers", action="store_true", help=argparse.SUPPRESS)
    return p


def parse(argv) -> argparse.Namespace:
    p = parser()
    args = p.parse_args(argv)
    if args.json:
        if args.output not in (None, "text", "json"):
            p.exit(USAGE, f"{PROG}: --json and -o {args.output} ask for two formats; give one\n")
        args.output = "json"
    if args.command == "watch":
        if args.output == "yaml":
            p.exit(USAGE, f"{PROG}: watch prints lines for people or JSON lines (-o json), not -o yaml\n")
        # Lines for people on a terminal or when -o text says so; JSON lines into a pipe.
        args.text = args.output == "text" or (args.output is None and sys.stdout.isatty())
        args.kinds = [k.strip() for a in args.kind_arguments for k in a.split(",") if k.strip()]
        for kind in args.kinds:
            if kind not in KIND_TOKEN:
                p.exit(USAGE, f"{PROG}: unknown event kind '{kind}'; use {', '.join(KIND_TOKEN)}\n")
        if args.count is not None and args.count <= 0:
            p.exit(USAGE, f"{PROG}: -C takes a positive count, not {args.count}\n")
        if args.timeout is not None and not args.timeout > 0:
            p.exit(USAGE, f"{PROG}: -W takes a positive number of seconds, not {args.timeout}\n")
    else:
        args.output = args.output or "text"
        if not (args.deadline >= 0 and args.deadline != float("inf")):
            p.exit(USAGE, f"{PROG}: --timeout takes a number of seconds, 0 or more, not {args.deadline}\n")
    return args


async def main_async(args) -> int:
    options = {"servers": args.server or ["nats://127.0.0.1:4222"], "max_reconnect_attempts": -1,
               "reconnect_time_wait": 0.5, "connect_timeout": 2, "allow_reconnect": True}
    if args.user_file:
        options["user"], options["password"] = read_credentials(args.user_file)
    if args.creds:
        options["user_credentials"] = args.creds
    errors = []

    async def error_cb(error):  # nats-py would log each failed attempt with its traceback
        errors.append(error)
    options["error_cb"] = error_cb
    try:
        # The first connection within a bound (homectl's answer for a daemon not there:
        # 14); once connected, reconnections go on for as long as the command runs.
        nc = await asyncio.wait_for(nats.connect(**options), 5)
    except asyncio.TimeoutError:
        last = errors[-1] if errors else "no answer"
        raise Exit(pb.UNAVAILABLE, f"cannot reach the NATS server {', '.join(options['servers'])}: "
                                   f"{last or type(last).__name__}") from None
    except Exception as error:  # noqa: BLE001 - any way of not reaching it
        raise Exit(pb.UNAVAILABLE, f"cannot reach the NATS server {', '.join(options['servers'])}: "
                                   f"{error or type(error).__name__}") from None
    names = L.Names(args.site)
    try:
        command = {"watch": watch, "get": get, "set": set_value}[args.command]
        if args.command == "watch" and args.timeout:
            try:
                return await asyncio.wait_for(command(nc, names, args), args.timeout)
            except asyncio.TimeoutError:
                return 4
        if args.command != "watch" and args.deadline:
            try:
                return await asyncio.wait_for(command(nc, names, args), args.deadline)
            except asyncio.TimeoutError:
                raise Exit(pb.DEADLINE_EXCEEDED, f"no answer through NATS within {args.deadline:g} s (--timeout)") \
                    from None
        return await command(nc, names, args)
    finally:
        try:
            await asyncio.wait_for(nc.close(), 2)
        except Exception:  # noqa: BLE001
            pass


def main(argv=None) -> int:
    args = parse(argv)
    try:
        return asyncio.run(main_async(args))
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:
        return 0
    except G.PathError as error:
        print(f"{PROG}: {error.message}", file=sys.stderr)
        return error.code
    except homed.HomedError as error:
        print(f"{PROG}: {error.message}", file=sys.stderr)
        return error.code
    except Exit as error:
        if error.message:
            print(f"{PROG}: {error.message}", file=sys.stderr)
        return error.code
