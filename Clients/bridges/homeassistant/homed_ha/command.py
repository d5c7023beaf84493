"""homed-mqtt: homed's home in Home Assistant, by MQTT discovery (see README.md).

    homed-mqtt [--config FILE] [--broker mqtt://127.0.0.1:1883] [--credentials FILE]
                  [--discovery-prefix homeassistant] [--discovery entity|device] [--base-topic homed] [--node-id homed]
                  [--exclude-provider NAME]… [--include-room NAME]… [--exclude-room NAME]…
                  [--include-accessory NAME|ID]… [--exclude-accessory NAME|ID]… [--socket PATH]
"""

from __future__ import annotations

import argparse
import logging
import sys


from homed.provider import run_until_signalled
from homed_ha.config import SettingsError, load
from homed_ha.service import Bridge

log = logging.getLogger("homed-mqtt")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Publishes homed's accessories to Home Assistant by MQTT discovery.")
    parser.add_argument("--config", metavar="FILE", help="an INI file with [mqtt] and [export] sections (README.md)")
    parser.add_argument("--broker", help="mqtt://HOST:PORT or mqtts://HOST:PORT (default mqtt://127.0.0.1:1883)")
    parser.add_argument("--credentials", metavar="FILE",
                        help="a file with username=… and password=… lines (never on the command line)")
    parser.add_argument("--discovery-prefix", help="Home Assistant's discovery prefix (default homeassistant)")
    parser.add_argument("--discovery", choices=["entity", "device"],
                        help="one config per entity (default: Home Assistant 2024.4 and later read it) or one per "
                             "device (device-based discovery, Home Assistant 2024.11 and later)")
    parser.add_argument("--base-topic", help="the topics of states and commands (default homed)")
    parser.add_argument("--node-id", help="the node id in discovery topics and unique ids (default homed)")
    parser.add_argument("--socket", help="homed's socket (default: $HOMED_SOCKET, else the usual places)")
    parser.add_argument("--exclude-provider", action="append", metavar="NAME",
                        help="leave this provider's accessories out (repeat; replaces the default "
                             "zigbee2mqtt and mqtt; --exclude-provider '' exports every provider)")
    parser.add_argument("--include-room", action="append", metavar="NAME", help="export only these rooms (repeat)")
    parser.add_argument("--exclude-room", action="append", metavar="NAME", help="leave this room out (repeat)")
    parser.add_argument("--include-accessory", action="append", metavar="NAME|ID",
                        help="export only these accessories (repeat)")
    parser.add_argument("--exclude-accessory", action="append", metavar="NAME|ID",
                        help="leave this accessory out (repeat)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), format="%(levelname)s %(name)s: %(message)s")
    flags = {"broker": args.broker, "credentials": args.credentials, "discovery_prefix": args.discovery_prefix,
             "discovery": args.discovery,
             "base_topic": args.base_topic, "node_id": args.node_id, "socket": args.socket,
             "exclude_providers": [p for p in args.exclude_provider if p] if args.exclude_provider else None,
             "include_rooms": args.include_room, "exclude_rooms": args.exclude_room,
             "include_accessories": args.include_accessory, "exclude_accessories": args.exclude_accessory}
    try:
        settings = load(args.config, flags)
    except SettingsError as error:
        log.error("%s", error)
        return 2
    bridge = Bridge(settings)
    return run_until_signalled(bridge.run, bridge.stop, "homed-mqtt", log)
