"""homed-esphome: ESPHome devices (native API) as homed accessories (see README.md).

    homed-esphome --config FILE [--credentials FILE] [--socket PATH] [--state-dir DIR]
    homed-esphome discover [--seconds 5]      (mDNS: devices to put in the configuration)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys

from homed.provider import run_until_signalled

log = logging.getLogger("homed-esphome")


def cmd_discover(argv) -> int:
    parser = argparse.ArgumentParser(prog="homed-esphome discover",
                                     description="ESPHome devices announced by mDNS, as configuration entries.")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    from homed_esphome.discovery import discover, toml_of
    try:
        found = asyncio.run(discover(args.seconds))
    except OSError as error:
        print(f"homed-esphome: mDNS is not available here: {error}", file=sys.stderr)
        return 1
    for entry in found:
        print(json.dumps(entry))
    for entry in found:
        print("\n" + toml_of(entry), end="", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["discover"]:
        return cmd_discover(argv[1:])
    parser = argparse.ArgumentParser(description="Brings ESPHome devices into homed over their native API "
                                                 "(`homed-esphome discover` lists those mDNS announces).")
    parser.add_argument("--config", required=True, metavar="FILE",
                        help="a TOML file of [[device]] tables: name, host, port (6053), encryption")
    parser.add_argument("--credentials", metavar="FILE",
                        help="NAME = NOISE_PSK lines (mode 0600; never on the command line)")
    parser.add_argument("--socket", help="homed's socket (default: $HOMED_SOCKET, else the usual places)")
    parser.add_argument("--provider-id", default="esphome")
    parser.add_argument("--state-dir", help="where the accessories registered last are kept "
                                            "(default: $STATE_DIRECTORY, else ~/.local/state/homed-esphome)")
    parser.add_argument("--write-timeout", type=float, default=4.5, metavar="SECONDS",
                        help="how long a write waits for the device's state to confirm it (default 4.5, "
                             "under homed's 5)")
    parser.add_argument("--keepalive", type=float, default=5.0, metavar="SECONDS",
                        help="the API's ping interval; a device silent for 4.5 times it is taken as gone")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper()),
                        format="%(levelname)s %(name)s: %(message)s")
    # aioesphomeapi logs each failed connection attempt at warning: the
    # provider says it once, with the retry.
    logging.getLogger("aioesphomeapi").setLevel(max(logging.ERROR, logging.getLogger().level))
    from homed_esphome.service import EspHomeProvider, Settings, read_config, read_credentials
    credentials = None
    if args.credentials:
        try:
            credentials = read_credentials(args.credentials)
        except (OSError, ValueError) as error:
            log.error("credentials file %s: %s", args.credentials, getattr(error, "strerror", None) or error)
            return 2
    try:
        devices = read_config(args.config, credentials)
    except OSError as error:
        log.error("configuration %s: %s", args.config, error.strerror or error)
        return 2
    except ValueError as error:  # tomllib.TOMLDecodeError is one
        log.error("configuration %s: %s", args.config, error)
        return 2
    settings = Settings(devices, args.socket, args.provider_id, args.state_dir, args.write_timeout, args.keepalive)
    provider = EspHomeProvider(settings)
    loop = asyncio.new_event_loop()

    def run():
        loop.run_until_complete(provider.run())
        if provider.refused_for_good is not None:
            raise provider.refused_for_good

    def stop():
        loop.call_soon_threadsafe(provider.stopping.set)

    return run_until_signalled(run, stop, args.provider_id, log)
