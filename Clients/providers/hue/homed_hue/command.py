"""homed-hue: a Philips Hue bridge's devices as homed accessories, on the
bridge's CLIP v2 API (see README.md).

    homed-hue [run] [--key-file FILE] [--cafile FILE] [--socket PATH]
    homed-hue pair HOST[:PORT] [--key-file FILE] [--timeout SECONDS] [--cafile FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging

from homed.provider import run_until_signalled

from . import keyfile

log = logging.getLogger("homed-hue")


def cmd_pair(args) -> int:
    from . import pairing
    try:
        result = asyncio.run(pairing.pair(args.address, args.key_file, args.timeout, args.interval, args.cafile))
    except pairing.PairingFailed as error:
        log.error("%s", error)
        return 1
    print(json.dumps({"paired": result.address, "file": args.key_file,
                      "certificate_sha256": result.certificate_sha256 or None}))
    return 0


def cmd_run(args) -> int:
    from .bridge import tls
    from .service import HueProvider, Settings
    try:
        found = keyfile.load(args.key_file)
    except (ValueError, OSError) as error:
        log.error("%s", error)
        return 2
    if found is None:
        log.error("no pairing in %s: pair with the bridge first (`homed-hue pair HOST`, then press its link button)",
                  args.key_file)
        return 2
    try:
        check = tls(found.certificate_sha256, args.cafile, args.insecure)
    except ValueError as error:
        log.error("%s", error)
        return 2
    if check is False:
        log.warning("--insecure: the bridge's certificate is not checked")
    provider = HueProvider(Settings(found, check, args.socket, args.provider_id, args.write_timeout,
                                    args.probe_interval, args.refused_retry))
    loop = asyncio.new_event_loop()

    def run():
        loop.run_until_complete(provider.run())
        if provider.refused_for_good is not None:
            raise provider.refused_for_good

    def stop():
        loop.call_soon_threadsafe(provider.stopping.set)

    status = run_until_signalled(run, stop, args.provider_id, log)
    revoked = provider.key_revoked
    if revoked is not None:
        # Nothing this program can do brings a key back: the unit must not
        # restart it in a loop (exit 2), and the user is told what to do.
        again = "homed-hue pair " + found.address
        if args.key_file != keyfile.default_key_file():
            again += f" --key-file {args.key_file}"
        log.error("the bridge at %s no longer accepts this application key (HTTP %d: %s): pair again with `%s` "
                  "(and press its link button), then restart homed-hue", found.address, revoked.status,
                  revoked.description, again)
        return 2
    return status


def main(argv=None) -> int:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--key-file", default=keyfile.default_key_file(),
                        help="the pairing (default: $STATE_DIRECTORY/bridge.json, else the usual places)")
    common.add_argument("--cafile", help="check the bridge's certificate against this CA instead of the one pinned")
    common.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser = argparse.ArgumentParser(description="Brings a Philips Hue bridge's devices into homed.",
                                     parents=[common])
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", parents=[common], help="serve the bridge's devices (the default)")
    for p in (parser, run):
        p.add_argument("--socket", help="homed's socket (default: $HOMED_SOCKET, else the usual places)")
        p.add_argument("--provider-id", default="hue")
        p.add_argument("--write-timeout", type=float, default=4.5, metavar="SECONDS",
                       help="how long a write waits for the bridge's confirming event (default 4.5, under homed's 5)")
        p.add_argument("--probe-interval", type=float, default=30.0, metavar="SECONDS",
                       help="how often a silent bridge is asked whether it still answers (default 30)")
        p.add_argument("--refused-retry", type=float, default=10.0, metavar="SECONDS",
                       help="a key the bridge refuses (HTTP 403) is asked once more after this long; refused again, "
                            "the provider exits 2 (default 10; 0: at once)")
        p.add_argument("--insecure", action="store_true",
                       help="do not check the bridge's certificate (for a pairing file without one)")
    pair = sub.add_parser("pair", parents=[common], help="pair with a bridge: press its link button")
    pair.add_argument("address", metavar="HOST[:PORT]")
    pair.add_argument("--timeout", type=float, default=60.0, help="how long to wait for the link button (default 60)")
    pair.add_argument("--interval", type=float, default=1.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), format="%(levelname)s %(name)s: %(message)s")
    return {"run": cmd_run, "pair": cmd_pair}[args.command or "run"](args)
