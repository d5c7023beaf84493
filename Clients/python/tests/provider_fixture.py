#!/usr/bin/env python3
"""A provider process for the tests, on homed.provider.

    provider_fixture.py --socket S --id ID --spec SPEC.json --state STATE.json
                        [--no-values] [--stall-writes] [--read-delay SECONDS]

SPEC.json: a list of accessories (dicts, as homed.Provider takes them).
STATE.json: the "devices": a list of [accessory key, service, characteristic,
value]. Reads answer from it (read from the file at each read, so a test changes a
device by rewriting it), writes update it, and its values go into the registration
unless --no-values.

stdout: one JSON object per line: {"event": "registered", "count", "accessories":
{key: id}, "ids": {"key|service|characteristic": id}}, {"event": "read", "refs"},
{"event": "write", "values", "atomic"}, {"event": "stats", ...} whenever the
provider's counters change, {"event": "done", "op", "result" | "error"} for each
command, and {"event": "error", "code", "message"} before exiting 2 when the
daemon refuses the provider for good.

stdin: JSON commands, one a line: {"op": "report", "values": [[k, s, c, v], …]},
{"op": "reachable", "key": k, "reachable": bool}, {"op": "update",
"accessories": […]}, {"op": "remove", "keys": […]}.
"""

import argparse
import json
import os
import sys
import threading
import time


from homed import HomedError
from homed.provider import Provider, Ref

_out_lock = threading.Lock()


def emit(event: str, **fields):
    fields["event"] = event
    line = json.dumps(fields, default=lambda v: v.hex() if isinstance(v, bytes) else str(v))
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def load_state(path):
    with open(path) as f:
        return {Ref(k, s, c): v for k, s, c, v in json.load(f)}


def save_state(path, state):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump([[r.accessory_key, r.service, r.characteristic, v] for r, v in state.items()], f)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--id", required=True)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--no-values", action="store_true")
    parser.add_argument("--stall-writes", action="store_true")
    parser.add_argument("--read-delay", type=float, default=0.0)
    args = parser.parse_args()

    with open(args.spec) as f:
        spec = json.load(f)
    state_lock = threading.Lock()
    state = load_state(args.state)
    if not args.no_values:
        for accessory in spec:
            for index, service in enumerate(accessory.get("services", [])):
                name = service.get("key") or service["type"]
                for characteristic in service.get("characteristics", []):
                    ref = Ref(accessory["key"], name, characteristic["type"])
                    if ref in state:
                        characteristic["value"] = state[ref]

    def on_read(refs):
        emit("read", refs=[list(r) for r in refs])
        if args.read_delay:
            time.sleep(args.read_delay)
        with state_lock:
            now = load_state(args.state)
        return {ref: now[ref] for ref in refs if ref in now}

    def on_write(values, atomic):
        emit("write", values=[list(r) + [v] for r, v in values.items()], atomic=atomic)
        if args.stall_writes:
            threading.Event().wait()  # a device that never answers
        with state_lock:
            now = load_state(args.state)
            now.update(values)
            save_state(args.state, now)
        return None

    def on_registered(response):
        emit("registered", count=provider.registrations + 1,
             accessories={a.provider_key: a.id for a in response.accessories},
             ids={"|".join(r): provider.id_of(r) for r in provider.refs})

    provider = Provider(args.id, spec, on_read=on_read, on_write=on_write, socket_path=args.socket,
                        client_name=f"fixture {args.id}", on_registered=on_registered)

    def watch_stats():
        last = None
        while True:
            stats = provider.stats
            if stats != last:
                emit("stats", **stats)
                last = stats
            time.sleep(0.02)

    def commands():
        for line in sys.stdin:
            command = json.loads(line)
            op = command["op"]
            try:
                if op == "report":
                    result = provider.report([(Ref(k, s, c), v) for k, s, c, v in command["values"]])
                elif op == "reachable":
                    result = provider.set_reachable(command["key"], command["reachable"])
                elif op == "update":
                    response = provider.update(command["accessories"])
                    result = None if response is None else response.seq
                elif op == "remove":
                    response = provider.remove(command["keys"])
                    result = None if response is None else response.seq
                else:
                    raise ValueError(f"unknown op {op!r}")
                emit("done", op=op, result=result)
            except HomedError as error:
                emit("done", op=op, error={"code": error.code_name, "message": error.message})

    threading.Thread(target=watch_stats, daemon=True).start()
    threading.Thread(target=commands, daemon=True).start()
    try:
        provider.run()
    except HomedError as error:
        emit("error", code=error.code_name, message=error.message)
        sys.exit(2)


if __name__ == "__main__":
    main()
