"""`homed-hue pair` against the fake bridge: error 101 until the link button is
pressed, then the key saved with mode 0600 and the bridge's certificate
pinned; the provider then runs on that file. A button never pressed fails
within the timeout and saves nothing; a certificate that is not the pinned
one is refused."""

import json
import os
import stat
import subprocess
import sys

from .hue_helpers import (APPLICATION_KEY, PROGRAM, accessories, start_program, start_provider, wait_accessories,
                          wait_for, wait_log)
from homed_hue import keyfile


def pair_argv(bridge, key_file, *extra):
    return [sys.executable, PROGRAM, "pair", bridge.address, "--key-file", key_file, "--interval", "0.2", *extra]


def test_pairing_waits_for_the_link_button_then_saves_the_key(homed, bridge, workdir, processes):
    key_file = os.path.join(workdir, "state", "bridge.json")
    process = start_program(homed, pair_argv(bridge, key_file, "--timeout", "30"), "pair.log", processes)
    wait_log(process, "press the link button", timeout=15)
    assert not os.path.exists(key_file)
    bridge.call("POST", "/fake/link-button")
    assert process.proc.wait(20) == 0, process.log()
    mode = stat.S_IMODE(os.stat(key_file).st_mode)
    assert mode == 0o600
    saved = json.loads(open(key_file, encoding="utf-8").read())
    assert saved["application_key"] == APPLICATION_KEY
    assert saved["certificate_sha256"] == bridge.sha256
    assert saved["address"] == bridge.address
    printed = wait_for(lambda: next((e for e in process.history if "paired" in e), None), 5, "the pairing printed")
    assert printed["file"] == key_file
    # The provider runs on what pairing saved (the certificate checked against the pin).
    provider = start_provider(homed, key_file, processes)
    with homed.client() as client:
        wait_accessories(client, ["42b8327b-b7d7-2469-3c45-069a41b4dca8"], provider)


def test_the_link_button_never_pressed_fails_and_saves_nothing(bridge, workdir):
    key_file = os.path.join(workdir, "never.json")
    done = subprocess.run(pair_argv(bridge, key_file, "--timeout", "1"), capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "was not pressed within 1 s" in done.stderr
    assert not os.path.exists(key_file)


def test_a_certificate_other_than_the_pinned_one_is_refused(homed, bridge, workdir, processes):
    key_file = os.path.join(workdir, "pinned.json")
    keyfile.save(key_file, keyfile.Pairing(bridge.address, APPLICATION_KEY, "", "00" * 32))
    process = start_provider(homed, key_file, processes)
    wait_log(process, "its certificate is not the one pinned at pairing", timeout=15)
    with homed.client() as client:
        assert accessories(client) == {}


def test_a_ca_file_instead_of_a_pin(homed, bridge, workdir, processes):
    key_file = os.path.join(workdir, "ca.json")
    keyfile.save(key_file, keyfile.Pairing(bridge.address, APPLICATION_KEY))
    process = start_provider(homed, key_file, processes, "--cafile", bridge.cert)
    with homed.client() as client:
        wait_accessories(client, ["42b8327b-b7d7-2469-3c45-069a41b4dca8"], process)


def test_no_pairing_is_one_sentence(workdir):
    done = subprocess.run([sys.executable, PROGRAM, "--key-file", os.path.join(workdir, "none.json")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "no pairing in" in done.stderr and "homed-hue pair HOST" in done.stderr
