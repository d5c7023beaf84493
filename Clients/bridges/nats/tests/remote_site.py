"""A home reached through the remote socket, for the tests: a real nats-server
with two accounts (HOMED: the bridge; REMOTE: the people, who import the
bridge's call service with `share: true` and its JetStream API under a prefix),
a real homed, the bridge as a process, and `homed-nats-remote` serving a
socket as a process."""

import os
import sys

from homed_testkit import ProviderProcess, accepts, installed_program
from homed_testkit.providers import wait_for

from .nats_home import start_bridge, wait_snapshot
from .nats_server import NatsServer

REMOTE = installed_program("homed-nats-remote")
JS_PREFIX = "JS.HOMED.API"

ACCOUNTS = """
listen: 127.0.0.1:{port}
jetstream: {store_dir: "{store}"}
accounts: {
  HOMED: {
    jetstream: enabled
    users: [{user: bridge, password: bridge-secret}]
    exports: [{service: "homed.*.call.*"}, {service: "$JS.API.>", response_type: stream}]
  }
  REMOTE: {
    users: [{user: alice, password: alice-secret}, {user: victor, password: victor-secret},
            {user: olga, password: olga-secret}]
    imports: [{service: {account: HOMED, subject: "homed.*.call.*"}, share: true},
              {service: {account: HOMED, subject: "$JS.API.>"}, to: "JS.HOMED.API.>"}]
  }
}
"""

ROLES = """[nats]
site = home
[roles]
REMOTE/olga = admin
REMOTE/alice = user
REMOTE/* = viewer
"""


def user_file(workdir, user):
    path = os.path.join(workdir, f"{user}.user")
    with open(path, "w") as f:
        f.write(f"username={user}\npassword={user}-secret\n")
    os.chmod(path, 0o600)
    return path


def accounts_server(workdir, name="acc"):
    return NatsServer(workdir, name, config=ACCOUNTS)


def start_site_bridge(homed, server, processes, workdir):
    config = os.path.join(workdir, "homed-nats.ini")
    with open(config, "w") as f:
        f.write(ROLES)
    bridge = start_bridge(homed, server.url, processes, "--config", config, "--user-file",
                          user_file(workdir, "bridge"))
    wait_snapshot(bridge, timeout=20)
    return bridge


def start_remote(url, processes, workdir, user="alice", name="remote", extra=(), path=None):
    """homed-nats-remote serving a socket (in the test's directory unless `path`); returns (process, path)."""
    path = path or os.path.join(workdir, f"{name}.sock")
    argv = [sys.executable, REMOTE, "--server", url, "--site", "home", "--user-file", user_file(workdir, user),
            "--js-prefix", JS_PREFIX, "--listen-socket", path, "--log-level", "debug", *extra]
    process = ProviderProcess(argv, os.path.join(workdir, f"{name}.log"))
    processes.append(process)
    process.start()
    wait_for(lambda: accepts(path), 10, f"{path} listening", process)
    return process, path
