"""What the providers' and bridges' tests share (Clients/providers/*/tests,
Clients/bridges/*/tests): a provider program started as a process, waits (a
provider's log holding a line, a condition coming true, a provider's
accessories registered), and what homed holds of them. Every wait is bounded
and says what it waited for when it gives up."""

import os
import time
from pathlib import Path


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


def wait_for(condition, timeout=10.0, what="the condition", process=None):
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not within {timeout} s" + (f"\n{process.log()}" if process else ""))
        time.sleep(0.05)


def start_program(homed, argv, log_name, processes):
    """A provider or bridge program as a process (its stderr in `log_name` in
    homed's directory), in the test's `processes` (killed by pid at teardown)."""
    from . import ProviderProcess
    process = ProviderProcess(argv, os.path.join(homed.directory, log_name))
    processes.append(process)
    return process.start()


def provider_accessories(client, provider):
    """{provider key: Accessory} of one provider's accessories in homed."""
    from homed import pb
    return {a.provider_key: a for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories
            if a.provider == provider}


def wait_provider_accessories(client, provider, keys, process, timeout=15.0, reachable=True):
    """Waits until every key is one of the provider's accessories, reachable (or
    not); returns them all by key."""
    def ready():
        found = provider_accessories(client, provider)
        if set(keys) <= set(found) and all(found[k].reachable == reachable for k in keys):
            return found
        return None
    return wait_for(ready, timeout, f"accessories {sorted(keys)} reachable={reachable}", process)


def ids_of(accessory):
    """{(service key, characteristic type name): id}."""
    return {(s.provider_key or s.type_name, c.type_name): c.id for s in accessory.services for c in s.characteristics}


def value_of(client, cid, fresh=False):
    """A characteristic's value as a plain Python value, or (code, message)."""
    from . import plain
    read = client.read([cid], fresh=fresh).reads[0]
    return plain(read.value) if read.code == 0 else (read.code, read.message)


def wait_value(client, cid, expected, timeout=10.0, process=None):
    """Waits until a characteristic's value (value_of) is `expected`."""
    return wait_for(lambda: value_of(client, cid) == expected, timeout, f"characteristic {cid} == {expected!r}",
                    process)
