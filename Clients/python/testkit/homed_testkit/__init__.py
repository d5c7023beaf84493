"""Processes for integration tests: a restartable homed on a database in a
temporary directory, provider processes that talk JSON lines, and a subscription
that records every event with the time it arrived.

Shared by Clients/python/tests and the providers' and bridges' tests (the
homed-testkit distribution, installed with them). Every process is started with PR_SET_PDEATHSIG, so a test
run that dies leaks none, and tests kill what they started by pid in `finally`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, List, Optional

from homed import Client, pb

START_TIMEOUT = 10.0
CALL_TIMEOUT = 10.0


def repository() -> Path:
    """The checkout the tests run in: the nearest directory at or above the
    current one with Package.swift (the test kit itself is installed elsewhere)."""
    here = Path.cwd().resolve()
    for directory in (here, *here.parents):
        if (directory / "Package.swift").is_file() and (directory / "Clients").is_dir():
            return directory
    raise RuntimeError(f"run the tests inside homed's checkout ({here} is not in one)")


def homed_binary():
    """(path, explicitly requested): $HOMED_BIN, else <repo>/.build/debug/homed."""
    env = os.environ.get("HOMED_BIN")
    return (env, True) if env else (str(repository() / ".build" / "debug" / "homed"), False)


def installed_program(name: str) -> str:
    """The console script ``name`` of a distribution installed beside this Python
    (the test venv's bin/): tests run the programs as users do."""
    path = os.path.join(os.path.dirname(sys.executable), name)
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"{name} is not installed beside {sys.executable}: run Scripts/bootstrap.sh --python "
                           f"(it installs every integration into .venv from Clients/constraints.txt)")
    return path


def homectl_binary() -> str:
    """$HOMECTL_BIN, else the homectl beside the homed under test (a build puts
    both in .build/debug); fails the test when there is none."""
    import pytest
    binary = os.environ.get("HOMECTL_BIN") or str(Path(homed_binary()[0]).resolve().with_name("homectl"))
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no homectl at {binary} (swift build, or set HOMECTL_BIN)")
    return binary


def homectl(homed, *args, timeout: float = 30.0) -> subprocess.CompletedProcess:
    """Runs the real homectl against the test's homed (``homed.socket_path``),
    as a user would; returns the finished process, output as text."""
    env = dict(os.environ, HOMED_SOCKET=homed.socket_path)
    return subprocess.run([homectl_binary(), *args], capture_output=True, text=True, env=env, timeout=timeout)


def require_binary():
    """The homed binary's path; fails the test when there is none (a test that
    cannot run has not passed)."""
    import pytest
    binary, explicit = homed_binary()
    if not os.access(binary, os.X_OK):
        if explicit:
            pytest.fail(f"HOMED_BIN={binary} is not an executable file")
        pytest.fail(f"no homed binary at {binary} (swift build, or set HOMED_BIN)")
    return binary


def accepts(path: str) -> bool:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(0.5)
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def die_with_parent():
    """In the child: get SIGKILL if the test process dies."""
    try:
        import ctypes
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except Exception:  # noqa: BLE001 - best effort
        pass


def die_with_parent_as_a_user():
    """In the child: die_with_parent(), and when running as root, lose
    CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (from the bounding set, so the program
    exec'd next never has them): file modes then apply to it as to a user, and a
    write to a read-only file fails with EACCES."""
    die_with_parent()
    if os.geteuid() != 0:
        return
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def kill_pid(proc: Optional[subprocess.Popen]) -> None:
    """SIGKILL by pid, if still running, and reap it."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass


class HomedProcess:
    """A homed on `<directory>/homed.sock` with its database `<directory>/homed.sqlite`
    (or in memory): start, stop (SIGTERM), kill (SIGKILL), restart on the same
    database."""

    def __init__(self, binary: str, directory: str, in_memory: bool = False, extra_args=()):
        self.binary = binary
        self.directory = directory
        self.socket_path = os.path.join(directory, "homed.sock")
        self.db_path = os.path.join(directory, "homed.sqlite")
        self.log_path = os.path.join(directory, "homed.log")
        self.args = [binary, "--socket", self.socket_path]
        self.args += ["--in-memory"] if in_memory else ["--db", self.db_path]
        self.args += list(extra_args)
        self.proc: Optional[subprocess.Popen] = None

    def start(self) -> "HomedProcess":
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
        env = dict(os.environ)
        env.pop("HOMED_SOCKET", None)
        # Nothing of the machine's: as root, homed would read /etc/homed/homed.yaml
        # (whose database.path wins over --db's absence) and keep state in /var/lib/homed.
        env.setdefault("CONFIGURATION_DIRECTORY", self.directory)
        env.setdefault("STATE_DIRECTORY", self.directory)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         cwd=self.directory, env=env, preexec_fn=die_with_parent)
        deadline = time.monotonic() + START_TIMEOUT
        while not accepts(self.socket_path):
            if self.proc.poll() is not None:
                raise AssertionError(f"homed exited with {self.proc.returncode} before listening\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"homed did not listen within {START_TIMEOUT} s\n{self.log()}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """SIGTERM (a clean shutdown: values saved), SIGKILL after 5 s."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            kill_pid(self.proc)

    def kill(self) -> None:
        kill_pid(self.proc)

    def restart(self) -> "HomedProcess":
        self.stop()
        return self.start()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def client(self, name: str = "pytest") -> Client:
        return Client.connect(self.socket_path, client_name=name, call_timeout=CALL_TIMEOUT)

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-4000:]
        except OSError:
            return ""


class ProviderProcess:
    """A provider run as a real process whose stdout is JSON lines (one object
    with an "event" each) and whose stdin takes JSON commands."""

    def __init__(self, argv: List[str], log_path: str, env=None, preexec_fn=die_with_parent):
        self.argv = argv
        self.log_path = log_path
        self.env = env
        self.preexec_fn = preexec_fn
        self.proc: Optional[subprocess.Popen] = None
        self.history: List[dict] = []  # every event, in order
        self._pending: List[dict] = []  # those expect() has not returned yet
        self._cond = threading.Condition()
        self._reader: Optional[threading.Thread] = None

    def start(self) -> "ProviderProcess":
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                         env=self.env, preexec_fn=self.preexec_fn)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def _read(self):
        try:
            for line in self.proc.stdout:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                self._add(event)
        except (OSError, ValueError):  # cleanup() closed the pipe
            pass
        self._add({"event": "exit"})

    def _add(self, event: dict) -> None:
        event["_t"] = time.monotonic()
        with self._cond:
            self.history.append(event)
            self._pending.append(event)
            self._cond.notify_all()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def expect(self, name: str, timeout: float = 5.0, where: Callable[[dict], bool] = lambda e: True) -> dict:
        """The first event called `name` (for which `where` holds) that no earlier
        expect() returned, waiting up to `timeout` seconds for it. Events are
        not lost by waiting for others: "read" may come before "registered"."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for event in self._pending:
                    if event["event"] == name and where(event):
                        self._pending.remove(event)
                        return event
                if name != "exit" and any(e["event"] == "exit" for e in self._pending):
                    raise AssertionError(f"the provider exited ({self.proc.poll()}) before {name!r}\n{self.log()}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no {name!r} event from the provider within {timeout} s\n{self.log()}")
                self._cond.wait(remaining)

    def send(self, command: dict) -> None:
        self.proc.stdin.write((json.dumps(command) + "\n").encode())
        self.proc.stdin.flush()

    def kill(self) -> None:
        """SIGKILL, for real, and reap."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(5)

    def cleanup(self) -> None:
        kill_pid(self.proc)
        for stream in (self.proc.stdin, self.proc.stdout) if self.proc else ():
            try:
                stream.close()
            except OSError:
                pass

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-3000:]
        except OSError:
            return ""


class EventLog:
    """A subscription on its own connection, recording (arrival time, Event)."""

    def __init__(self, socket_path: str, request=None, name: str = "pytest-events"):
        self.client = Client.connect(socket_path, client_name=name, call_timeout=CALL_TIMEOUT)
        self.events: List[tuple] = []
        self.markers: List[object] = []
        self.error: Optional[BaseException] = None
        self._cond = threading.Condition()
        self._stream = self.client.subscribe(request if request is not None else pb.SubscribeRequest())
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        try:
            for response in self._stream:
                now = time.monotonic()
                with self._cond:
                    if response.HasField("marker") and response.marker.kind != pb.MARKER_NONE:
                        self.markers.append(response.marker)
                    for event in response.events:
                        self.events.append((now, event))
                    self._cond.notify_all()
        except Exception as error:  # noqa: BLE001 - reported by wait_for
            with self._cond:
                self.error = error
                self._cond.notify_all()

    def wait_subscribed(self, timeout: float = 5.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: any(m.kind == pb.MARKER_SUBSCRIBED for m in self.markers)
                                       or self.error is not None, timeout):
                raise AssertionError(f"no SUBSCRIBED marker within {timeout} s")
            if self.error is not None:
                raise self.error

    def matching(self, where: Callable) -> List[tuple]:
        with self._cond:
            return [(t, e) for t, e in self.events if where(e)]

    def wait_for(self, where: Callable, timeout: float = 5.0, count: int = 1) -> List[tuple]:
        """At least `count` recorded events for which `where(event)` holds."""
        with self._cond:
            ok = self._cond.wait_for(
                lambda: self.error is not None or len([1 for _, e in self.events if where(e)]) >= count, timeout)
            found = [(t, e) for t, e in self.events if where(e)]
            if self.error is not None and len(found) < count:
                raise AssertionError(f"the subscription ended: {self.error}")
            if not ok:
                raise AssertionError(f"{len(found)} matching events within {timeout} s, expected {count}")
            return found

    def close(self) -> None:
        try:
            self._stream.cancel()
        finally:
            self.client.close()


def is_reachability(accessory_id: int, reachable: bool):
    return lambda e: (e.kind == pb.EVENT_REACHABILITY_CHANGED and e.reachability.accessory_id == accessory_id
                      and e.reachability.reachable == reachable)


def is_value(characteristic_id: int):
    return lambda e: e.kind == pb.EVENT_VALUE_CHANGED and e.value.characteristic_id == characteristic_id


def plain(value):
    """A pb.Value's content (None when empty)."""
    kind = value.WhichOneof("kind")
    return None if kind is None else getattr(value, kind)
