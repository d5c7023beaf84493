"""Debian's mosquitto as a test's broker, on a free loopback port (shared by every
MQTT provider's and bridge's tests)."""

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Mosquitto:
    """Debian's mosquitto on 127.0.0.1:<port>, started, killed (SIGKILL) and
    started again on the same port by pid."""

    def __init__(self, directory: str, port: int, extra: str = ""):
        self.directory = directory
        self.port = port
        self.conf = os.path.join(directory, "mosquitto.conf")
        self.log_path = os.path.join(directory, "mosquitto.log")
        with open(self.conf, "w") as f:
            f.write(self.settings(port, "allow_anonymous true\n" + extra))
        self.proc = None

    @staticmethod
    def settings(port: int, extra: str) -> str:
        # As root, mosquitto would switch to the user "mosquitto", who cannot
        # read the test's temporary files (a password file).
        user = "user root\n" if os.geteuid() == 0 else ""
        return f"listener {port} 127.0.0.1\npersistence false\n{user}{extra}"

    def start(self) -> "Mosquitto":
        from . import die_with_parent
        binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        if not os.access(binary, os.X_OK):
            pytest.fail("no mosquitto: run Scripts/bootstrap.sh --python (apt-get install mosquitto)")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([binary, "-c", self.conf], stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        deadline = time.monotonic() + 10
        while not listening(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"mosquitto did not listen on {self.port}\n{self.log()}")
            time.sleep(0.02)
        return self

    def kill(self) -> None:
        from . import kill_pid
        kill_pid(self.proc)

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    @classmethod
    def with_password(cls, directory: str, username: str, password: str) -> "Mosquitto":
        """A broker (not started) that takes only `username` with `password`
        (mosquitto_passwd's file, mode 0600, in `directory`)."""
        passwords = os.path.join(directory, "passwords")
        subprocess.run(["mosquitto_passwd", "-b", "-c", passwords, username, password], check=True)
        os.chmod(passwords, 0o600)
        broker = cls(directory, free_port())
        with open(broker.conf, "w") as f:
            f.write(broker.settings(broker.port, f"allow_anonymous false\npassword_file {passwords}\n"))
        return broker
