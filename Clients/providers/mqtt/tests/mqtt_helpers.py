"""Helpers of the end-to-end tests: the provider process, its log, what homed
holds of its accessories, and the real homectl. Every wait is bounded."""

import json
import os
import subprocess
import sys
from pathlib import Path

from homed import pb
from homed_testkit import ProviderProcess, homed_binary, plain
from provider_testkit import wait_for, wait_log  # noqa: F401 (the tests import them from here too)

PROGRAM = str(Path(__file__).resolve().parents[1] / "homed_mqtt_devices.py")
PROVIDER = "mqtt"


def start_provider(homed, broker_url, processes, *extra, write_timeout=1.5, settle=0.2):
    argv = [sys.executable, PROGRAM, "--socket", homed.socket_path, "--broker", broker_url,
            "--write-timeout", str(write_timeout), "--settle", str(settle), "--log-level", "debug", *extra]
    process = ProviderProcess(argv, os.path.join(homed.directory, "mqtt-devices.log"))
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


def wait_value(client, cid, expected, timeout=10.0, process=None):
    return wait_for(lambda: value_of(client, cid) == expected, timeout, f"characteristic {cid} == {expected!r}",
                    process)


def homectl_binary():
    """$HOMECTL_BIN, else the homectl beside the homed under test."""
    return os.environ.get("HOMECTL_BIN") or str(Path(homed_binary()[0]).with_name("homectl"))


def homectl(homed, *args, timeout=20):
    """Runs the real homectl against the test's homed: (exit code, stdout, stderr)."""
    done = subprocess.run([homectl_binary(), *args, "--socket", homed.socket_path], capture_output=True, text=True,
                          timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def homectl_json(homed, *args):
    code, out, err = homectl(homed, *args, "--json")
    assert code == 0, f"homectl {' '.join(args)} exited {code}: {err}{out}"
    return json.loads(out)
