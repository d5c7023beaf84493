"""homed-web as a real process for the tests, and what they ask homed directly."""

from __future__ import annotations

import json
import os
import pwd
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Optional

from homed import pb
from homed_testkit import die_with_parent, kill_pid, repository

from .webdriver import free_port

START_TIMEOUT = 15.0


def web_binary() -> str:
    """$HOMED_WEB_BIN, else Web/.build/debug/homed-web (swift build --package-path Web)."""
    binary = os.environ.get("HOMED_WEB_BIN") or str(repository() / "Web" / ".build" / "debug" / "homed-web")
    if not os.access(binary, os.X_OK):
        import pytest
        pytest.fail(f"no homed-web at {binary} (swift build --package-path Web, or set HOMED_WEB_BIN)")
    return binary


class WebProcess:
    """homed-web on a loopback port, restartable on the same port."""

    def __init__(self, directory: str, homed_socket: str, args=(), name: str = "web"):
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(directory, f"{name}.log")
        self.args = [web_binary(), "--socket", homed_socket, "--listen", f"127.0.0.1:{self.port}", *args]
        self.proc: Optional[subprocess.Popen] = None

    def start(self) -> "WebProcess":
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         cwd=self.directory, preexec_fn=die_with_parent)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                if self.proc.poll() is not None:
                    raise AssertionError(f"homed-web exited with {self.proc.returncode}\n{self.log()}")
                if time.monotonic() > deadline:
                    raise AssertionError(f"homed-web did not listen within {START_TIMEOUT} s\n{self.log()}")
                time.sleep(0.02)

    def kill(self) -> None:
        kill_pid(self.proc)

    def stop(self) -> None:
        """SIGTERM: a graceful shutdown, which ends the open event streams at once."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            raise AssertionError("homed-web did not stop within 5 s of SIGTERM") from None

    def restart(self, graceful: bool = False) -> "WebProcess":
        self.stop() if graceful else self.kill()
        return self.start()

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def request(self, method: str, path: str, body: Optional[bytes] = None, headers: Optional[dict] = None,
                timeout: float = 10):
        """(status, headers, body) of one request; an HTTP error is an answer too."""
        request = urllib.request.Request(self.url + path, data=body, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def state(self) -> dict:
        status, _, body = self.request("GET", "/api/home")
        assert status == 200, body
        return json.loads(body)


def history_seqs(client, after: int, through: int) -> list:
    """The seqs of the events homed's history holds in (after, through], every kind a
    default subscription receives (no audit notes), in order."""
    seqs = []
    cursor = after
    while True:
        response = client.call("ReadHistory", pb.ReadHistoryRequest(after_seq=cursor, limit=1000))
        for event in response.events:
            if event.seq <= through:
                seqs.append(event.seq)
        if not response.events or response.next_seq == 0 or response.events[-1].seq >= through:
            return seqs
        cursor = response.events[-1].seq


def characteristic_id(state: dict, accessory: str, type_name: str) -> int:
    for acc in state["accessories"].values():
        if acc["name"] == accessory:
            for service in acc["services"]:
                for cid in service["characteristics"]:
                    if state["characteristics"][str(cid)]["type"] == type_name:
                        return cid
    raise AssertionError(f"no {accessory}/{type_name} in the state")


def nobody():
    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid
