"""The repository's conformance list (Tests/Conformance/scenarios.json), run by
the Python client's own runner (Clients/python/tests/test_conformance.py)
through the remote socket: homed → homed-nats → nats-server → homed-nats-remote
→ a client that knows nothing of NATS. The provider scenarios cannot be carried
(a provider session over NATS): their first provider call is UNIMPLEMENTED,
naming the method."""

import importlib.util
import os

import pytest

from homed import Client, HomedError, pb
from homed_testkit import HomedProcess, kill_pid, repository, require_binary

from .remote_site import accounts_server, start_remote, start_site_bridge

_spec = importlib.util.spec_from_file_location(
    "homed_conformance_runner", repository() / "Clients" / "python" / "tests" / "test_conformance.py")
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)

PROVIDER_STEPS = {"provider_open", "provider_register", "provider_expect_write"}
CARRIED = [s for s in runner.LIST["scenarios"] if not PROVIDER_STEPS & {step["op"] for step in s["steps"]}]
NOT_CARRIED = [s for s in runner.LIST["scenarios"] if s not in CARRIED]


class Remote:
    def __init__(self, socket_path):
        self.socket_path = socket_path


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    workdir = str(tmp_path_factory.mktemp("remote-conformance"))
    daemon = HomedProcess(require_binary(), workdir)
    daemon.args = [daemon.binary, "--socket", daemon.socket_path] + runner.LIST["daemon"]
    server = accounts_server(workdir)
    processes = []
    try:
        daemon.start()
        server.start()
        start_site_bridge(daemon, server, processes, workdir)
        # As olga, an admin, as a local client of the daemon's own user is.
        _, path = start_remote(server.url, processes, workdir, user="olga")
        yield Remote(path)
    finally:
        for process in processes:
            process.cleanup()
        server.kill()
        kill_pid(daemon.proc)


@pytest.mark.parametrize("scenario", CARRIED, ids=[s["name"] for s in CARRIED])
def test_conformance_through_the_remote_socket(remote, scenario):
    runner.test_conformance(remote, scenario)


def test_the_provider_scenarios_are_unimplemented_naming_the_method(remote):
    assert {s["name"] for s in NOT_CARRIED} == {"provider", "provider-batches-and-absence"}
    with Client.connect(remote.socket_path, client_name="conformance-provider") as client:
        stream = client.stream("OpenProvider", pb.OpenProviderRequest(provider_id="p"))
        with pytest.raises(HomedError) as raised:
            stream.get(5)
        assert raised.value.code == pb.UNIMPLEMENTED
        assert raised.value.message.startswith("OpenProvider is not carried by the remote socket over NATS")
        for method in ("RegisterAccessories", "AnswerCommand", "ReportValues", "Backup"):
            with pytest.raises(HomedError) as raised:
                client.call_raw(method, b"")
            assert raised.value.code == pb.UNIMPLEMENTED and raised.value.message.startswith(method), method
        # The connection goes on.
        assert client.call("GetStatus", pb.GetStatusRequest()).connection_id == client.connection_id


def test_the_c_clients_runner_through_the_remote_socket(tmp_path):
    """The C client's own runner (Clients/c/tests/conformance.c, built here) with
    tests/remote_daemon.py in homed's place: the carried scenarios, through the
    remote socket, by libhomed-client."""
    import json
    import shutil
    import subprocess
    import sys

    if not shutil.which("make") or not shutil.which("cc"):
        pytest.skip("no C compiler")
    build = f"/tmp/homed-nats-c-conformance-{os.getuid()}"
    made = subprocess.run(["make", "-C", str(repository() / "Clients" / "c"), f"BUILD={build}",
                           f"{build}/asan/conformance"], capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr[-2000:]
    carried = dict(runner.LIST, scenarios=CARRIED)
    scenarios = tmp_path / "carried.json"
    scenarios.write_text(json.dumps(carried))
    daemon = tmp_path / "homed"
    daemon.write_text(f"#!/bin/sh\nexec {sys.executable} {os.path.join(os.path.dirname(__file__), 'remote_daemon.py')}"
                      f" \"$@\"\n")
    daemon.chmod(0o755)
    done = subprocess.run([f"{build}/asan/conformance", str(scenarios), str(daemon)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
