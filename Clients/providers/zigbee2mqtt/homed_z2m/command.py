"""homed-zigbee2mqtt: Zigbee2MQTT's devices as homed accessories (see README.md).

    homed-zigbee2mqtt [--broker mqtt://127.0.0.1:1883] [--base-topic zigbee2mqtt]
                         [--credentials FILE] [--socket PATH]
"""

from __future__ import annotations

import argparse
import logging
import sys


from homed.provider import run_until_signalled
from homed_z2m.service import Settings, Zigbee2MqttProvider, read_credentials

log = logging.getLogger("homed-zigbee2mqtt")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Brings Zigbee2MQTT's devices into homed.")
    parser.add_argument("--broker", default="mqtt://127.0.0.1:1883", help="mqtt://HOST:PORT or mqtts://HOST:PORT")
    parser.add_argument("--base-topic", default="zigbee2mqtt", help="Zigbee2MQTT's base topic (default: zigbee2mqtt)")
    parser.add_argument("--credentials", metavar="FILE",
                        help="a file with username=… and password=… lines (never on the command line)")
    parser.add_argument("--socket", help="homed's socket (default: $HOMED_SOCKET, else the usual places)")
    parser.add_argument("--provider-id", default="zigbee2mqtt")
    parser.add_argument("--write-timeout", type=float, default=4.5, metavar="SECONDS",
                        help="how long a write waits for the device's echo (default 4.5, under homed's 5)")
    parser.add_argument("--read-timeout", type=float, default=2.0, metavar="SECONDS",
                        help="how long a read waits for the device's answer to /get (default 2)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), format="%(levelname)s %(name)s: %(message)s")
    username = password = None
    if args.credentials:
        try:
            username, password = read_credentials(args.credentials)
        except OSError as error:
            log.error("credentials file %s: %s", args.credentials, error.strerror or error)
            return 2
    try:
        settings = Settings(args.broker, args.base_topic, username, password, args.socket, args.provider_id,
                            args.write_timeout, args.read_timeout)
    except ValueError as error:
        parser.error(str(error))
    provider = Zigbee2MqttProvider(settings)

    def stop():
        provider.stopping.set()
        provider.provider.stop()

    return run_until_signalled(provider.run, stop, args.provider_id, log)
