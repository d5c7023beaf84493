"""homed-web's tests: a real homed with the demo home on a database in a temporary
directory (homed_testkit, Clients/python/testkit), a real homed-web
(Web/.build/debug/homed-web) and headless Chromium driven over WebDriver by
Debian's chromedriver. Every process is killed by pid at teardown."""

import os
import shutil
import subprocess
import tempfile

import pytest

from homed_testkit import HomedProcess, require_binary

from .helpers import WebProcess, web_binary
from .webdriver import Browser


@pytest.fixture
def workdir():
    tmp = tempfile.mkdtemp(prefix="homed-web-test-", dir="/tmp")
    # The viewer's connection is made as nobody, who must reach the socket: the
    # directory is searchable by all, the socket is the nogroup group's (below).
    os.chmod(tmp, 0o755)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def homed(workdir):
    """The demo home, still (no simulator: every event is one a test made), with its
    journal on a database so that it continues across a restart; nobody is a viewer."""
    daemon = HomedProcess(require_binary(), workdir, extra_args=[
        "--demo", "--no-simulator", "--viewers", "nobody", "--socket-group", "nogroup", "--socket-mode", "0660"])
    try:
        daemon.start()
        yield daemon
    finally:
        daemon.kill()


@pytest.fixture
def web(workdir, homed):
    """homed-web with no login for local requests (the user running it: root, an admin)."""
    server = WebProcess(workdir, homed.socket_path, args=["--log-level", "debug"])
    try:
        yield server.start()
    finally:
        server.kill()


@pytest.fixture
def users_file(workdir):
    """alice (user) and victor (viewer), passwords hashed by homed-web hash-password."""
    lines = []
    for name, role in (("alice", "user"), ("victor", "viewer")):
        hashed = subprocess.run([web_binary(), "hash-password", "--cost", "4"], input=f"{name}-secret\n",
                                capture_output=True, text=True, check=True).stdout.strip()
        lines.append(f"{name} {role} {hashed}")
    path = os.path.join(workdir, "users")
    with open(path, "w") as out:
        out.write("# name role bcrypt-hash\n" + "\n".join(lines) + "\n")
    return path


@pytest.fixture
def login_web(workdir, homed, users_file):
    """homed-web where everyone logs in; viewers reach homed as nobody, homed's viewer."""
    server = WebProcess(workdir, homed.socket_path, name="login-web", args=[
        "--login", "always", "--users-file", users_file, "--connect-as", "viewer=nobody"])
    try:
        yield server.start()
    finally:
        server.kill()


@pytest.fixture
def browser(workdir):
    from homed_testkit import die_with_parent
    session = Browser(os.path.join(workdir, "chromedriver.log"), preexec_fn=die_with_parent)
    try:
        yield session
    finally:
        session.close()
