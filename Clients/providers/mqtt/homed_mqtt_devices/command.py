"""homed-mqtt-devices: devices announced with Home Assistant's MQTT discovery,
Tasmota's own and Shelly Gen2+ devices as homed accessories (see README.md).

    homed-mqtt-devices [--broker mqtt://127.0.0.1:1883] [--prefix homeassistant]
                          [--tasmota-prefix tasmota/discovery] [--shelly PREFIX ...]
                          [--credentials FILE] [--socket PATH]
"""

from __future__ import annotations

import argparse
import logging
import sys


from homed.provider import run_until_signalled
from homed_mqtt_devices.service import MqttDevicesProvider, Settings, read_credentials

log = logging.getLogger("homed-mqtt-devices")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Brings devices announced with Home Assistant's MQTT discovery "
                                                 "(Tasmota, ESPHome, Shelly, OpenMQTTGateway), Tasmota's own "
                                                 "discovery and Shelly Gen2+ devices into homed.")
    parser.add_argument("--broker", default="mqtt://127.0.0.1:1883", help="mqtt://HOST:PORT or mqtts://HOST:PORT")
    parser.add_argument("--prefix", default="homeassistant",
                        help="the discovery prefix the devices announce under (default: homeassistant)")
    parser.add_argument("--credentials", metavar="FILE",
                        help="a file with username=… and password=… lines (never on the command line)")
    parser.add_argument("--socket", help="homed's socket (default: $HOMED_SOCKET, else the usual places)")
    parser.add_argument("--provider-id", default="mqtt")
    parser.add_argument("--write-timeout", type=float, default=4.5, metavar="SECONDS",
                        help="how long a write waits for the state topic's echo (default 4.5, under homed's 5)")
    parser.add_argument("--settle", type=float, default=0.3, metavar="SECONDS",
                        help="how long a device's configs must be still before it is registered (default 0.3)")
    parser.add_argument("--forget-after", type=float, default=10.0, metavar="SECONDS",
                        help="after (re)connecting, entities whose retained config has not come again once no "
                             "config has come for this long are removed (default 10)")
    parser.add_argument("--tasmota-prefix", default="tasmota/discovery", metavar="PREFIX",
                        help="where Tasmota announces itself (its own discovery; default tasmota/discovery)")
    parser.add_argument("--no-tasmota", action="store_true", help="do not read Tasmota's own discovery")
    parser.add_argument("--shelly", action="append", default=[], metavar="PREFIX",
                        help="a Shelly Gen2+ device's MQTT topic prefix (again for more devices)")
    parser.add_argument("--no-shelly-discovery", action="store_true",
                        help="ask only the --shelly devices, not every shelly*/online that says true")
    parser.add_argument("--client-id", help="the MQTT client id (default: homed-<provider id>)")
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
        settings = Settings(args.broker, args.prefix, username, password, args.socket, args.provider_id,
                            args.write_timeout, args.settle, args.client_id, args.forget_after,
                            None if args.no_tasmota else args.tasmota_prefix, args.shelly,
                            not args.no_shelly_discovery)
    except ValueError as error:
        parser.error(str(error))
    provider = MqttDevicesProvider(settings)

    def stop():
        provider.stopping.set()
        provider.provider.stop()

    return run_until_signalled(provider.run, stop, args.provider_id, log)
