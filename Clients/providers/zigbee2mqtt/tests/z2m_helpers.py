"""Helpers of the end-to-end tests: the provider process, its log, and what
homed holds of its accessories (the shared parts are homed_testkit.providers').
Every wait is bounded."""

import sys

from homed_testkit import installed_program
from homed_testkit.providers import (ids_of, provider_accessories, start_program, value_of,  # noqa: F401 (tests import them here)
                                     wait_for, wait_log, wait_provider_accessories, wait_value)

PROGRAM = installed_program("homed-zigbee2mqtt")
PROVIDER = "zigbee2mqtt"


def start_provider(homed, broker_url, processes, *extra, write_timeout=1.5):
    argv = [sys.executable, PROGRAM, "--socket", homed.socket_path, "--broker", broker_url,
            "--write-timeout", str(write_timeout), "--read-timeout", "1", "--log-level", "debug", *extra]
    return start_program(homed, argv, "z2m.log", processes)


def accessories(client):
    return provider_accessories(client, PROVIDER)


def wait_accessories(client, keys, process, timeout=15.0, reachable=True):
    return wait_provider_accessories(client, PROVIDER, keys, process, timeout, reachable)
