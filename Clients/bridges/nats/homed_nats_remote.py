#!/usr/bin/env python3
"""homed from another machine, through NATS (homed_nats/remote.py): watch a
site's changes, or write a value.

    homed_nats_remote.py [--server URL]… [--site NAME] [--user-file FILE | --creds FILE] \\
        watch [--home ID] [--room ID] [--accessory ID] [--kind value|reachability|layout|…] [--no-snapshot]
    homed_nats_remote.py … set HOME_ID CHARACTERISTIC_ID VALUE     (VALUE: JSON, e.g. 40, true, 21.5, "text")

`watch` prints one JSON object per line: the snapshot's values ({"snapshot": …}),
then every change ({"seq", "journal", "kind", "accessory", "characteristic",
"value"}), a {"resync": reason} when homed's journal changed; it follows the
stream across NATS server restarts. `set` prints the write's results and exits 0
when every item was applied, 1 when one was refused, 2 when the call failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import homed  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

import nats  # noqa: E402

import homed  # noqa: E402,F811
from homed import pb  # noqa: E402
from homed.broker import read_credentials  # noqa: E402

from homed_nats.layout import KIND_TOKENS, Names  # noqa: E402
from homed_nats.remote import RemoteReader, remote_write  # noqa: E402


def plain(value):
    kind = value.WhichOneof("kind")
    return None if kind is None else getattr(value, kind) if kind != "data_value" else value.data_value.hex()


def out(obj):
    print(json.dumps(obj, separators=(",", ":")), flush=True)


async def watch(nc, names, args):
    reader = RemoteReader(nc, names, home=args.home, room=args.room, accessory=args.accessory, kind=args.kind)
    first = True
    async for item in reader:
        if item.kind == "snapshot":
            if first and not args.snapshot:
                first = False
                continue
            first = False
            out({"snapshot": {str(cid): e["value"] for cid, e in sorted(item.values.items())
                              if args.accessory is None or e["accessory"] == args.accessory}})
        elif item.kind == "resync":
            out({"resync": item.reason})
        else:
            event = item.event
            line = {"seq": event.seq, "journal": item.journal, "kind": KIND_TOKENS.get(event.kind, "other")}
            if event.WhichOneof("body") == "value":
                line.update(accessory=event.value.accessory_id, characteristic=event.value.characteristic_id,
                            value=plain(event.value.value))
            elif event.WhichOneof("body") == "reachability":
                line.update(accessory=event.reachability.accessory_id, reachable=event.reachability.reachable)
            out(line)


def value_of(text):
    data = json.loads(text)
    if isinstance(data, bool):
        return pb.Value(bool_value=data)
    if isinstance(data, int):
        return pb.Value(int_value=data)
    if isinstance(data, float):
        return pb.Value(float_value=data)
    if isinstance(data, str):
        return pb.Value(string_value=data)
    raise ValueError(f"{text}: a JSON number, boolean or string")


async def main_async(args) -> int:
    options = {"servers": args.server or ["nats://127.0.0.1:4222"], "max_reconnect_attempts": -1,
               "reconnect_time_wait": 0.5, "connect_timeout": 2}
    if args.user_file:
        options["user"], options["password"] = read_credentials(args.user_file)
    if args.creds:
        options["user_credentials"] = args.creds
    nc = await nats.connect(**options)
    names = Names(args.site)
    try:
        if args.command == "watch":
            await watch(nc, names, args)
            return 0
        try:
            response = await remote_write(nc, names, args.home_id, {args.characteristic: value_of(args.value)})
        except homed.HomedError as error:
            print(f"homed-nats: {error.code_name}: {error.message}", file=sys.stderr)
            return 2
        for result in response.results:
            out({"characteristic": result.characteristic_id, "code": homed.error_for(result.code, "").code_name if result.code else "OK",
                 "message": result.message, "seq": result.seq})
        return 0 if all(r.code == pb.OK for r in response.results) else 1
    finally:
        await nc.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", action="append", metavar="URL")
    parser.add_argument("--site", default="home")
    parser.add_argument("--user-file", metavar="FILE", help="username=… and password=… lines")
    parser.add_argument("--creds", metavar="FILE", help="a NATS .creds file")
    commands = parser.add_subparsers(dest="command", required=True)
    w = commands.add_parser("watch")
    for name in ("home", "room", "accessory"):
        w.add_argument(f"--{name}", type=int)
    w.add_argument("--kind", choices=sorted(set(KIND_TOKENS.values())))
    w.add_argument("--no-snapshot", dest="snapshot", action="store_false")
    s = commands.add_parser("set")
    s.add_argument("home_id", type=int)
    s.add_argument("characteristic", type=int)
    s.add_argument("value")
    args = parser.parse_args(argv)
    try:
        return asyncio.run(main_async(args))
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
