"""homed-homekit-provider: HAP-IP accessories (HomeKit over Wi-Fi/Ethernet) as
homed accessories, on aiohomekit (see README.md).

    homed-homekit-provider [run] [--socket PATH] [--state-dir DIR]
    homed-homekit-provider pair HOST:PORT [CODE | --code-file FILE]   (no CODE: read from stdin)
    homed-homekit-provider unpair DEVICE_ID
    homed-homekit-provider list
    homed-homekit-provider discover [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys


from homed.provider import run_until_signalled
from homed_hap import pairing
from homed_hap.store import Store, default_state_dir

log = logging.getLogger("homed-homekit")


def _read_code(args) -> str:
    """The setup code: the argument, a file, or one line of stdin (so that a
    script or `homectl` can pass it without it showing in the process list)."""
    if args.code_file:
        with open(args.code_file, encoding="utf-8") as f:
            return f.read().strip()
    if args.code and args.code != "-":
        return args.code.strip()
    if sys.stdin.isatty():
        sys.stderr.write("setup code (XXX-XX-XXX): ")
        sys.stderr.flush()
    return sys.stdin.readline().strip()


def cmd_pair(args) -> int:
    try:
        host, port = pairing.parse_address(args.address)
    except ValueError as error:
        log.error("%s", error)
        return 64
    try:
        code = _read_code(args)
    except OSError as error:
        log.error("setup code file %s: %s", args.code_file, error.strerror or error)
        return 66
    store = Store(args.state_dir)
    try:
        record = asyncio.run(pairing.pair(host, port, code, store, timeout=args.timeout))
    except pairing.PairingFailed as error:
        log.error("%s", error)
        return 1
    print(json.dumps({"paired": record.device_id, "address": f"{host}:{port}", "accessories": len(record.database),
                      "file": store.path(record.device_id)}))
    return 0


def cmd_unpair(args) -> int:
    store = Store(args.state_dir)
    record = store.load(args.device_id)
    if record is None:
        log.error("no pairing with %s in %s", args.device_id, store.directory)
        return 1
    warning = asyncio.run(pairing.unpair(record, store))
    if warning:
        log.warning("%s", warning)
    print(json.dumps({"unpaired": record.device_id}))
    return 0


def cmd_list(args) -> int:
    for record in Store(args.state_dir).load_all():
        print(json.dumps({"device": record.device_id, "address": record.address,
                          "accessories": len(record.database)}))
    return 0


def cmd_discover(args) -> int:
    try:
        found = asyncio.run(pairing.discover(args.seconds))
    except OSError as error:
        log.error("mDNS is not available here: %s", error)
        return 1
    for d in sorted(found, key=lambda d: d.name):
        print(json.dumps({"name": d.name, "device": d.id, "address": f"{d.address}:{d.port}",
                          "category": int(d.category), "c#": d.config_num,
                          "paired": not (int(d.status_flags) & 1)}))
    return 0


def cmd_run(args) -> int:
    from homed_hap.service import HomeKitProvider, Settings
    settings = Settings(args.state_dir, args.socket, args.provider_id, args.write_timeout, args.read_timeout,
                        mdns=not args.no_mdns)
    provider = HomeKitProvider(settings)
    loop = asyncio.new_event_loop()

    def run():
        loop.run_until_complete(provider.run())
        if provider.refused_for_good is not None:
            raise provider.refused_for_good

    def stop():
        loop.call_soon_threadsafe(provider.stopping.set)

    return run_until_signalled(run, stop, args.provider_id, log)


def main(argv=None) -> int:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--state-dir", default=default_state_dir(),
                        help="where pairings are kept (default: $STATE_DIRECTORY, else the usual places)")
    common.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser = argparse.ArgumentParser(description="Brings HAP-IP (HomeKit) accessories into homed.",
                                     parents=[common])
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", parents=[common], help="serve the paired accessories (the default)")
    for p in (parser, run):
        p.add_argument("--socket", help="homed's socket (default: $HOMED_SOCKET, else the usual places)")
        p.add_argument("--provider-id", default="homekit")
        p.add_argument("--write-timeout", type=float, default=4.5, metavar="SECONDS",
                       help="how long a write waits for the accessory's answer (default 4.5, under homed's 5)")
        p.add_argument("--read-timeout", type=float, default=4.5, metavar="SECONDS")
        p.add_argument("--no-mdns", action="store_true",
                       help="no zeroconf: connect by the address paired with only")
    pair = sub.add_parser("pair", parents=[common], help="pair with an accessory by address and setup code")
    pair.add_argument("address", metavar="HOST:PORT")
    pair.add_argument("code", nargs="?", help="the setup code XXX-XX-XXX (none or -: read from stdin)")
    pair.add_argument("--code-file", metavar="FILE", help="read the setup code from a file")
    pair.add_argument("--timeout", type=float, default=30.0)
    unpair = sub.add_parser("unpair", parents=[common], help="remove a pairing (on the accessory and here)")
    unpair.add_argument("device_id")
    sub.add_parser("list", parents=[common], help="the paired devices")
    discover = sub.add_parser("discover", parents=[common], help="HAP-IP accessories seen by mDNS")
    discover.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper()),
                        format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("aiohomekit").setLevel(max(logging.INFO, logging.getLogger().level))
    command = args.command or "run"
    return {"run": cmd_run, "pair": cmd_pair, "unpair": cmd_unpair, "list": cmd_list,
            "discover": cmd_discover}[command](args)
