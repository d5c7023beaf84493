"""Helpers of the end-to-end tests: the provider process, its log, and what
homed holds of its accessories. Every wait is bounded."""

import os
import sys
from pathlib import Path

from homed import pb
from homed_testkit import ProviderProcess, plain
from provider_testkit import wait_for, wait_log  # noqa: F401 (the tests import them from here too)

PROGRAM = str(Path(__file__).resolve().parents[1] / "homed_zigbee2mqtt.py")
PROVIDER = "zigbee2mqtt"


def start_provider(homed, broker_url, processes, *extra, write_timeout=1.5):
    argv = [sys.executable, PROGRAM, "--socket", homed.socket_path, "--broker", broker_url,
            "--write-timeout", str(write_timeout), "--read-timeout", "1", "--log-level", "debug", *extra]
    process = ProviderProcess(argv, os.path.join(homed.directory, "z2m.log"))
    processes.append(process)
    return process.start()


def accessories(client):
    return {a.provider_key: a for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories
            if a.provider == PROVIDER}


def wait_accessories(client, keys, process, timeout=15.0, reachable=True):
    def ready():
        found = accessories(client)
        if set(keys) <= set(found) and all(found[k].reachable == reachable for k in keys):
            return found
        return None
    return wait_for(ready, timeout, f"accessories {sorted(keys)} reachable={reachable}", process)


def ids_of(accessory):
    """{(service key, characteristic type name): id}."""
    return {(s.provider_key or s.type_name, c.type_name): c.id for s in accessory.services for c in s.characteristics}


def value_of(client, cid, fresh=False):
    read = client.read([cid], fresh=fresh).reads[0]
    return plain(read.value) if read.code == 0 else (read.code, read.message)
