"""homed-homekit: homed's accessories in Apple's Home app (see README.md).

    homed-homekit [run] [--config FILE] [--state-dir DIR] [--socket PATH] [--address IP] [--port N]
    homed-homekit pairing [--state-dir DIR]      # setup code, X-HM:// URI and QR code
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys


from homed_homekit.exposure import Exposure
from homed_homekit.ids import HOMEKIT_MAX_PER_BRIDGE
from homed_homekit.setupcode import qr_text, setup_uri
from homed_homekit.state import StateDir, default_state_dir

log = logging.getLogger("homed-homekit")
CATEGORY_BRIDGE = 2


def load_config(path):
    if not path:
        return {}
    import tomllib
    with open(path, "rb") as f:
        config = tomllib.load(f)
    unknown = set(config) - {"name", "address", "port", "expose"}
    if unknown:
        raise ValueError(f"unknown keys {', '.join(sorted(unknown))} (it takes name, address, port, [expose])")
    return config


def pairing(args) -> int:
    state = StateDir(args.state_dir)
    config = load_config(args.config)
    bridges = sorted({0} | {int(k) for k in (state.load("setup.json") or {})})
    for index in bridges:
        setup = state.bridge_setup(index)
        uri = setup_uri(CATEGORY_BRIDGE, setup["pincode"], setup["setup_id"])
        paired = state.paired_controllers(index)
        name = config.get("name", "homed Bridge") if index == 0 else f"{config.get('name', 'homed Bridge')} {index + 1}"
        print(f"{name} (bridge {index})")
        print(f"  setup code: {setup['pincode']}")
        print(f"  setup URI:  {uri}")
        print("  paired:     " + ("never started" if paired is None else
                                 f"{paired} controller(s)" if paired else "no (ready to pair)"))
        if not args.no_qr and sys.stdout.isatty() or args.qr:
            text = qr_text(uri)
            print(text if text else "  (install pyqrcode, HAP-python's [QRCode] extra, for the QR code)")
    return 0


def run(args) -> int:
    from homed.provider import run_until_signalled
    from homed_homekit.service import HomekitBridgeService, Settings
    try:
        config = load_config(args.config)
        exposure = Exposure.from_config(config)
    except OSError as error:
        log.error("configuration %s: %s", args.config, error.strerror or error)
        return 2
    except ValueError as error:  # tomllib.TOMLDecodeError is a ValueError
        log.error("configuration %s: %s", args.config, error)
        return 2
    settings = Settings(state_dir=args.state_dir, socket=args.socket, name=args.name or config.get("name", "homed Bridge"),
                        address=args.address or config.get("address"), port=args.port or config.get("port", 51827),
                        advertise=not args.no_advertise, exposure=exposure, max_per_bridge=args.max_per_bridge,
                        start_unfilled_after=args.start_unfilled_after)
    service = HomekitBridgeService(settings)
    loop = asyncio.new_event_loop()

    def stop():
        loop.call_soon_threadsafe(service.stop)

    def serve():
        try:
            loop.run_until_complete(service.run())
        finally:
            # zeroconf's last announcements may still be under way: end them
            # before the loop closes rather than leave them destroyed pending.
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending))
            loop.close()

    return run_until_signalled(serve, stop, "homekit-bridge", log)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="homed's accessories in Apple's Home app (a HomeKit bridge).")
    parser.add_argument("command", nargs="?", default="run", choices=["run", "pairing"],
                        help="run: serve the bridge (default); pairing: print the setup code, URI and QR code")
    parser.add_argument("--config", metavar="FILE", help="TOML: name, address, port and the [expose] filter")
    parser.add_argument("--state-dir", default=default_state_dir(),
                        help="pairings, setup code, aid/iid (default: $STATE_DIRECTORY, else "
                             "$XDG_STATE_HOME/homed/homekit, /var/lib/homed/homekit as root)")
    parser.add_argument("--socket", help="homed's socket (default: $HOMED_SOCKET, else the usual places)")
    parser.add_argument("--name", help="the bridge's name in the Home app (default: homed Bridge)")
    parser.add_argument("--address", help="the IP address to listen on and advertise (default: this host's)")
    parser.add_argument("--port", type=int, help="bridge N listens on PORT + N (default 51827)")
    parser.add_argument("--no-advertise", action="store_true",
                        help="do not announce the bridge by mDNS (tests; controllers that know the address)")
    parser.add_argument("--max-per-bridge", type=int, default=HOMEKIT_MAX_PER_BRIDGE, help=argparse.SUPPRESS)
    parser.add_argument("--start-unfilled-after", type=float, default=10.0, help=argparse.SUPPRESS)
    parser.add_argument("--qr", action="store_true", help="pairing: print the QR code even when not on a terminal")
    parser.add_argument("--no-qr", action="store_true", help="pairing: no QR code")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), format="%(levelname)s %(name)s: %(message)s")
    if args.log_level != "debug":
        logging.getLogger("pyhap").setLevel(logging.WARNING)
    return pairing(args) if args.command == "pairing" else run(args)
