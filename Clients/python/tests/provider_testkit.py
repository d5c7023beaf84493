"""Waits shared by the providers' and bridges' tests (Clients/providers/*/tests,
Clients/bridges/*/tests): a provider's log holding a line, a condition coming
true. Every wait is bounded and says what it waited for when it gives up."""

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
