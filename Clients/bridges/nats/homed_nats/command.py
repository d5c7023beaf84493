"""homed-nats: homed's journal on NATS JetStream (see README.md).

    homed-nats [--config FILE] [--server nats://127.0.0.1:4222]… [--site NAME]
                  [--user-file FILE | --creds FILE] [--replicas N] [--socket PATH]
"""

from __future__ import annotations

import argparse
import logging
import sys


from homed.provider import run_until_signalled
from homed_nats.bridge import Bridge
from homed_nats.config import SettingsError, load

log = logging.getLogger("homed-nats")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Publishes homed's journal to a NATS JetStream stream, its current "
                                                 "state to a KV bucket, and serves remote writes.")
    parser.add_argument("--config", metavar="FILE", help="an INI file with [nats] and [roles] sections (README.md)")
    parser.add_argument("--server", action="append", metavar="URL",
                        help="a NATS server (repeat for a cluster; default nats://127.0.0.1:4222)")
    parser.add_argument("--site", help="this homed's name on NATS, a subject token (default home)")
    parser.add_argument("--user-file", metavar="FILE",
                        help="a file with username=… and password=… lines (never on the command line)")
    parser.add_argument("--creds", metavar="FILE", help="a NATS .creds file (user JWT and nkey seed)")
    parser.add_argument("--replicas", type=int, help="replicas of the stream and the bucket (default 1)")
    parser.add_argument("--socket", help="homed's socket (default: $HOMED_SOCKET, else the usual places)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("nats").setLevel(logging.CRITICAL)  # its reconnection noise: the bridge says what matters
    flags = {"servers": args.server, "site": args.site, "user_file": args.user_file, "credentials": args.creds,
             "replicas": args.replicas, "socket": args.socket}
    try:
        settings = load(args.config, flags)
    except SettingsError as error:
        log.error("%s", error)
        return 2
    bridge = Bridge(settings)
    return run_until_signalled(bridge.run, bridge.stop, "homed-nats", log)
