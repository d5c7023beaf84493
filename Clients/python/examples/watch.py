#!/usr/bin/env python3
"""Print every characteristic value change as one JSON object per line.

    python3 Clients/python/examples/watch.py                 # everything
    python3 Clients/python/examples/watch.py -c 12 -c 13     # two characteristics
    python3 Clients/python/examples/watch.py --snapshot | jq .

Each line:
    {"seq": 42, "time_ms": 1700000000000, "accessory_id": 2, "accessory": "Lamp",
     "service_id": 10, "characteristic_id": 12, "characteristic": "Brightness",
     "value": 40, "origin": {"kind": "client", "connection_id": 3, "name": "homectl"}}

Stream markers (resync, gap) go to stderr. Exits 0 when stdout is closed.
"""

import argparse
import base64
import json
import os
import sys


from homed import Client, HomedError, pb  # noqa: E402

ORIGINS = {number: name[len("ORIGIN_"):].lower() for name, number in pb.ENUMS["OriginKind"].items()}


def plain(value):
    kind = value.WhichOneof("kind")
    if kind is None:
        return None
    v = getattr(value, kind)
    return base64.b64encode(v).decode() if kind == "data_value" else v


def names(client):
    """{characteristic id: (accessory name, characteristic type name)}."""
    out = {}
    for home in client.call("GetHome", pb.GetHomeRequest()).homes:
        for accessory in home.accessories:
            for service in accessory.services:
                for c in service.characteristics:
                    out[c.id] = (accessory.name, c.type_name)
    return out


def main():
    parser = argparse.ArgumentParser(description="Stream homed value changes as JSON lines.")
    parser.add_argument("--socket", help="daemon socket (default: $HOMED_SOCKET or the per-user default)")
    parser.add_argument("-c", "--characteristic", type=int, action="append", default=[], help="characteristic id")
    parser.add_argument("-a", "--accessory", type=int, action="append", default=[], help="accessory id")
    parser.add_argument("--snapshot", action="store_true", help="print the current values first")
    parser.add_argument("--exclude-own", action="store_true", help="skip changes made by this connection")
    args = parser.parse_args()

    try:
        client = Client.connect(args.socket, client_name="watch.py")
    except (OSError, HomedError) as e:
        print(f"watch.py: cannot connect: {e}", file=sys.stderr)
        return 69
    request = pb.SubscribeRequest(snapshot=args.snapshot, exclude_own=args.exclude_own)
    request.filter.characteristic_ids.extend(args.characteristic)
    request.filter.accessory_ids.extend(args.accessory)
    request.filter.kinds.append(pb.EVENT_VALUE_CHANGED)
    try:
        known = names(client)
        for response in client.subscribe(request):
            for c in response.snapshot:
                accessory, type_name = known.get(c.id, (None, c.type_name))
                emit({"snapshot": True, "accessory_id": c.accessory_id, "accessory": accessory,
                      "service_id": c.service_id, "characteristic_id": c.id, "characteristic": type_name,
                      "value": plain(c.value), "last_updated_ms": c.last_updated_ms})
            for event in response.events:
                if event.WhichOneof("body") != "value":
                    continue
                change = event.value
                accessory, type_name = known.get(change.characteristic_id, (None, None))
                line = {"seq": event.seq, "time_ms": event.time_ms,
                        "accessory_id": change.accessory_id, "accessory": accessory,
                        "service_id": change.service_id,
                        "characteristic_id": change.characteristic_id, "characteristic": type_name,
                        "value": plain(change.value),
                        "origin": {"kind": ORIGINS.get(event.origin.kind, str(event.origin.kind)),
                                   "connection_id": event.origin.connection_id, "name": event.origin.name}}
                if change.merged:
                    line["merged"] = change.merged
                emit(line)
            marker = response.marker
            if marker.kind in (pb.MARKER_RESYNC, pb.MARKER_GAP):
                kind = pb.FILE.enum_types_by_name["MarkerKind"].values_by_number[marker.kind].name
                print(f"watch.py: {kind} seq={marker.seq} gap={marker.gap_from}..{marker.gap_to} {marker.reason}",
                      file=sys.stderr)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 0
    except HomedError as e:
        print(f"watch.py: {e}", file=sys.stderr)
        return 1
    finally:
        client.close()
    return 0


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
