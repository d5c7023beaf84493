"""Helpers of the end-to-end tests: the provider process, its log, and what
homed holds of its accessories. Every wait is bounded."""

import os
import sys
import time
from pathlib import Path

from homed import pb
from homed_testkit import ProviderProcess, plain

PROGRAM = str(Path(__file__).resolve().parents[1] / "homed_zigbee2mqtt.py")
PROVIDER = "zigbee2mqtt"


def start_provider(homed, broker_url, processes, *extra, write_timeout=1.5):
    argv = [sys.executable, PROGRAM, "--socket", homed.socket_path, "--broker", broker_url,
            "--write-timeout", str(write_timeout), "--read-timeout", "1", "--log-level", "debug", *extra]
    process = ProviderProcess(argv, os.path.join(homed.directory, "z2m.log"))
    processes.append(process)
    return process.start()


def wait_log(process, text, timeout=10.0, count=1):
    """Waits until the provider's log holds `text` (at least `count` times)."""
    deadline = time.monotonic() + timeout
    while True:
        log = Path(process.log_path).read_text(errors="replace")
        if log.count(text) >= count:
            return log
        if process.proc.poll() is not None:
            raise AssertionError(f"the provider exited with {process.proc.returncode} before {text!r}\n{log[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {text!r} in the provider's log within {timeout} s\n{log[-3000:]}")
        time.sleep(0.05)


def accessories(client):
    return {a.provider_key: a for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories
            if a.provider == PROVIDER}


def wait_for(condition, timeout=10.0, what="the condition", process=None):
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not within {timeout} s" + (f"\n{process.log()}" if process else ""))
        time.sleep(0.05)


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
