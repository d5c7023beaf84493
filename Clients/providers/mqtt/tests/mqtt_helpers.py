"""Helpers of the end-to-end tests: the provider process, its log, what homed
holds of its accessories (the shared parts are homed_testkit.providers'), and the
real homectl. Every wait is bounded."""

import json
import sys

from homed_testkit import homectl as run_homectl
from homed_testkit import installed_program
from homed_testkit.providers import (ids_of, provider_accessories, start_program, value_of,  # noqa: F401 (tests import them here)
                                     wait_for, wait_log, wait_provider_accessories, wait_value)

PROGRAM = installed_program("homed-mqtt-devices")
PROVIDER = "mqtt"


def start_provider(homed, broker_url, processes, *extra, write_timeout=1.5, settle=0.2):
    argv = [sys.executable, PROGRAM, "--socket", homed.socket_path, "--broker", broker_url,
            "--write-timeout", str(write_timeout), "--settle", str(settle), "--log-level", "debug", *extra]
    return start_program(homed, argv, "mqtt-devices.log", processes)


def accessories(client):
    return provider_accessories(client, PROVIDER)


def wait_accessories(client, keys, process, timeout=15.0, reachable=True):
    return wait_provider_accessories(client, PROVIDER, keys, process, timeout, reachable)


def homectl(homed, *args, timeout=20):
    """Runs the real homectl against the test's homed: (exit code, stdout, stderr)."""
    done = run_homectl(homed, *args, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def homectl_json(homed, *args):
    code, out, err = homectl(homed, *args, "--json")
    assert code == 0, f"homectl {' '.join(args)} exited {code}: {err}{out}"
    return json.loads(out)
