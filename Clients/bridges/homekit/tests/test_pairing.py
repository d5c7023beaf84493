"""Pairing with the bridge as a controller does it (aiohomekit on loopback):
the setup code from the bridge's own command, a wrong code, a controller that
goes away mid-pairing, a second controller, unpairing, and what persists."""

import subprocess
import sys

import pytest
from aiohomekit.exceptions import AuthenticationError, UnavailableError

from .bridge_kit import PROGRAM, BridgeProcess
from homed_testkit.providers import wait_for

HOST = "127.0.0.1"


def paired_ids(bridge):
    return set(bridge.hap_state()["paired_clients"])


def wrong(code: str) -> str:
    digit = "1" if code[0] != "1" else "2"
    return digit + code[1:]


def test_the_pairing_command_gives_the_setup_code_and_uri_the_bridge_pairs_with(homed, processes, workdir,
                                                                                  controllers):
    bridge = BridgeProcess(workdir, homed.socket_path).start(processes)
    out = subprocess.run([sys.executable, PROGRAM, "pairing", "--state-dir", bridge.state_dir, "--qr"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    code = bridge.pincode()
    assert f"setup code: {code}" in out
    assert "setup URI:  X-HM://" in out and "no (ready to pair)" in out
    assert "\x1b[7m" in out  # the QR code, drawn for a terminal
    controller = controllers()
    controller.pair(HOST, bridge.port, code)
    bridge.wait_log("controller(s) paired")
    out = subprocess.run([sys.executable, PROGRAM, "pairing", "--state-dir", bridge.state_dir, "--no-qr"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    assert "paired:     1 controller(s)" in out


def test_a_wrong_setup_code_is_refused_and_nothing_is_half_paired(homed, processes, workdir, controllers):
    bridge = BridgeProcess(workdir, homed.socket_path).start(processes)
    intruder = controllers()
    with pytest.raises(AuthenticationError):
        intruder.pair(HOST, bridge.port, wrong(bridge.pincode()))
    bridge.wait_log("refused: wrong setup code")
    assert paired_ids(bridge) == set()
    # The right code still pairs, from a fresh controller.
    owner = controllers()
    owner.pair(HOST, bridge.port, bridge.pincode())
    wait_for(lambda: paired_ids(bridge) == {owner.pairing_id}, what="the owner's pairing saved")
    assert len(owner.accessories()) >= 1


def test_a_controller_that_goes_away_mid_pairing_leaves_nothing_paired(homed, processes, workdir, controllers):
    bridge = BridgeProcess(workdir, homed.socket_path).start(processes)
    quitter = controllers()
    quitter.start_pairing(HOST, bridge.port)          # M1..M2 done: the SRP exchange is under way
    quitter.run(quitter._discovery.close())           # and the controller goes
    assert paired_ids(bridge) == set()
    owner = controllers()
    owner.pair(HOST, bridge.port, bridge.pincode())
    wait_for(lambda: paired_ids(bridge) == {owner.pairing_id}, what="the owner's pairing saved")


def test_a_second_controller_pairs_through_the_first_and_unpairing_works(homed, devices, processes, workdir,
                                                                         controllers):
    bridge = BridgeProcess(workdir, homed.socket_path).start(processes)
    owner = controllers()
    owner.pair(HOST, bridge.port, bridge.pincode())
    # Pair-setup is HomeKit's first pairing only: a second one is refused...
    late = controllers()
    with pytest.raises(UnavailableError):
        late.pair(HOST, bridge.port, bridge.pincode())
    bridge.wait_log("refused: the bridge homed Bridge is already paired")
    # ...and the owner adds other controllers, as the Home app shares a home.
    guest = controllers()
    guest.pair_as_guest_of(owner, HOST, bridge.port)
    assert [a["aid"] for a in guest.accessories()] == [a["aid"] for a in owner.accessories()]
    wait_for(lambda: paired_ids(bridge) == {owner.pairing_id, guest.pairing_id}, what="both pairings saved")
    listed = owner.run(owner.pairing.list_pairings())
    assert {p["pairingId"] for p in listed} == {owner.pairing_id, guest.pairing_id}

    # The pairings survive a restart of the bridge.
    assert bridge.stop() == 0
    owner.run(owner.pairing.close())
    guest.run(guest.pairing.close())
    bridge.start(processes)
    assert len(guest.accessories()) == len(owner.accessories()) == 4  # the bridge and the three devices

    # The owner removes the guest: it is forgotten and its session closed.
    owner.run(owner.pairing.remove_pairing(guest.pairing_id))
    wait_for(lambda: paired_ids(bridge) == {owner.pairing_id}, what="the guest forgotten")
    wait_for(lambda: not guest.pairing.is_connected, what="the guest's session closed")
    # The owner removes itself (the Home app's "Remove Bridge"): no pairing is
    # left, and the setup code pairs a new home.
    owner.run(owner.pairing.remove_pairing(owner.pairing_id))
    wait_for(lambda: paired_ids(bridge) == set(), what="every pairing gone")
    bridge.wait_log("0 controller(s) remain paired")
    newcomer = controllers()
    newcomer.pair(HOST, bridge.port, bridge.pincode())
    wait_for(lambda: paired_ids(bridge) == {newcomer.pairing_id}, what="the new pairing saved")
