"""Pairing by address and setup code with the provider's own commands, against
the HAP-python accessory process: the file it leaves (and the ones it does not),
and pairings added and removed while the provider runs."""

import os
import socket
import threading

from .hk_helpers import (CODE, DEVICE, KEYS, Setup, accessories, key, mode, pairing_files, run_cli,
                        start_provider, wait_accessories, wait_for, wait_log)


def test_a_wrong_setup_code_is_refused_and_leaves_nothing_paired(accessory, workdir):
    state = os.path.join(workdir, "state")
    result = run_cli(state, "pair", accessory.address, "111-22-333")
    assert result.returncode == 1
    assert (f"the accessory at {accessory.address} refused the setup code: it is not this accessory's code "
            f"(nothing was paired)") in result.stderr
    assert pairing_files(state) == []
    # The accessory was left unpaired: the right code pairs it (read from stdin).
    result = run_cli(state, "pair", accessory.address, stdin=CODE + "\n")
    assert result.returncode == 0, result.stderr
    assert f'"paired": "{DEVICE}"' in result.stdout
    assert pairing_files(state) == ["aa-bb-cc-dd-ee-01.json"]
    # The controller's secret key is in it: the file and its directory are the user's alone.
    assert mode(os.path.join(state, "pairings")) == 0o700
    assert mode(os.path.join(state, "pairings", "aa-bb-cc-dd-ee-01.json")) == 0o600
    assert CODE not in open(os.path.join(state, "pairings", "aa-bb-cc-dd-ee-01.json")).read()
    # Paired once, it takes no other controller.
    other = os.path.join(workdir, "other")
    result = run_cli(other, "pair", accessory.address, CODE)
    assert result.returncode == 1 and "is already paired with another controller" in result.stderr
    assert pairing_files(other) == []


def test_a_code_file_and_a_malformed_code(accessory, workdir):
    state = os.path.join(workdir, "state")
    result = run_cli(state, "pair", accessory.address, "12345")
    assert result.returncode == 1 and "the setup code must be 8 digits as XXX-XX-XXX" in result.stderr
    code_file = os.path.join(workdir, "code")
    with open(code_file, "w") as f:
        f.write(CODE + "\n")
    result = run_cli(state, "pair", accessory.address, "--code-file", code_file)
    assert result.returncode == 0, result.stderr
    assert run_cli(state, "list").stdout.count(DEVICE) == 1


class _Vanishing:
    """A TCP peer on loopback that reads the first request of pair-setup and
    closes the connection: an accessory that goes away mid-pairing."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.port = self.server.getsockname()[1]
        self.requests = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.requests:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(10)
                data = connection.recv(65536)
                if data:  # (a connection that sends nothing is the pairing's reachability probe)
                    self.requests.append(data)
        self.server.close()


def test_an_accessory_gone_mid_pairing_is_a_clear_error_and_leaves_no_file(workdir):
    state = os.path.join(workdir, "state")
    peer = _Vanishing()
    result = run_cli(state, "pair", f"127.0.0.1:{peer.port}", CODE)
    assert result.returncode == 1
    assert b"POST /pair-setup" in peer.requests[0]
    assert f"127.0.0.1:{peer.port}" in result.stderr and "(nothing was paired)" in result.stderr
    assert pairing_files(state) == []
    # Nobody there at all.
    result = run_cli(state, "pair", f"127.0.0.1:{peer.port}", CODE)
    assert result.returncode == 1 and f"cannot reach the accessory at 127.0.0.1:{peer.port}" in result.stderr
    assert pairing_files(state) == []


def test_pairing_and_unpairing_while_the_provider_runs(homed, accessory, workdir, processes):
    setup = Setup(homed, accessory, workdir, processes)
    provider = start_provider(homed, setup.state_dir, processes)
    wait_log(provider, "no paired accessories yet")
    setup.pair()  # noticed without a restart
    with homed.client() as client:
        found = wait_accessories(client, KEYS, provider)
        assert found[key(2)].name == "Desk lamp"
        result = run_cli(setup.state_dir, "unpair", DEVICE)
        assert result.returncode == 0, result.stderr
        assert pairing_files(setup.state_dir) == []
        wait_for(lambda: not accessories(client), 15, "the unpaired device's accessories removed", provider)
        wait_log(provider, "was unpaired: removing its accessories")
    # The accessory forgot this controller too: it can be paired again.
    setup.pair()
    assert pairing_files(setup.state_dir) == ["aa-bb-cc-dd-ee-01.json"]


def test_a_restarted_provider_registers_its_devices_at_once_and_drops_what_is_no_longer_paired(
        homed, accessory, workdir, processes):
    setup = Setup(homed, accessory, workdir, processes).ready()
    ids = {k: a.id for k, a in setup.found.items()}
    setup.provider.kill()
    accessory.kill()
    provider = start_provider(homed, setup.state_dir, processes, name="provider-2")
    # From the saved database, unreachable until the device answers: same ids.
    with homed.client() as client:
        wait_log(provider, "registered 6 accessories")
        found = wait_accessories(client, KEYS, provider, reachable=False)
        assert {k: a.id for k, a in found.items()} == ids
        accessory.start()
        wait_accessories(client, KEYS, provider)
        provider.kill()
        os.unlink(os.path.join(setup.state_dir, "pairings", "aa-bb-cc-dd-ee-01.json"))  # forgotten offline
        provider = start_provider(homed, setup.state_dir, processes, name="provider-3")
        wait_for(lambda: not accessories(client), 15, "the accessories of a device no longer paired removed",
                 provider)


def test_unpairing_an_accessory_that_is_not_there_removes_the_file_and_says_what_is_left(accessory, workdir):
    state = os.path.join(workdir, "state")
    assert run_cli(state, "pair", accessory.address, stdin=CODE + "\n").returncode == 0
    accessory.kill()
    result = run_cli(state, "unpair", DEVICE)
    assert result.returncode == 0
    assert f"cannot reach the accessory {DEVICE} at {accessory.address}" in result.stderr
    assert "it may still list this controller: reset it before pairing it again" in result.stderr
    assert pairing_files(state) == []
    result = run_cli(state, "unpair", DEVICE)
    assert result.returncode == 1 and f"no pairing with {DEVICE}" in result.stderr
