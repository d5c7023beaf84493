"""Bad input from the bridge, end to end (a real homed, the fake bridge and the
provider as real processes): the application key revoked (HTTP 403 to
everything: one line, asked once more, then exit 2 with the fix, its
accessories unreachable), and malformed events (one line each, naming what was
wrong and the resource; that event dropped, later ones applied)."""

import json
import re
import subprocess

from homed import pb

from .hue_helpers import (accessories, ids_of, resources, start_provider, value_of, wait_accessories, wait_for,
                          wait_log, wait_value, write_pairing)

LAMP = "42b8327b-b7d7-2469-3c45-069a41b4dca8"        # Device 36: colour light, off, 81.03 %
WHITE = "f747dba7-6ec9-5683-7674-98095f330517"       # Device 1: white ambiance, 62.45 %
KEYS = [LAMP, WHITE]
REFUSED = "it refused the application key (HTTP 403: unauthorized user); asking once more in"


def rid(device_id, rtype):
    device = next(r for r in resources() if r["id"] == device_id)
    return next(s["rid"] for s in device["services"] if s["rtype"] == rtype)


def exit_status(process, timeout=20.0):
    try:
        return process.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the provider still runs after {timeout} s\n{process.log()}") from None


def provider_connected(client) -> bool:
    return any(p.provider_id == "hue" and p.connected
               for p in client.call("ListProviders", pb.ListProvidersRequest()).providers)


def the_fix(bridge, key_file):
    return (f"ERROR homed-hue: the bridge at {bridge.address} no longer accepts this application key (HTTP 403: "
            f"unauthorized user): pair again with `homed-hue pair {bridge.address} --key-file {key_file}` (and press "
            "its link button), then restart homed-hue")


def check_revoked_exit(client, process, bridge, key_file):
    assert exit_status(process) == 2
    log = process.log()
    lines = [line for line in log.splitlines() if line.startswith("ERROR")]
    assert lines == [f"ERROR homed-hue: bridge {bridge.address}: {REFUSED} 0.5 s, then giving up (a key revoked on "
                     "the bridge does not come back)", the_fix(bridge, key_file)], log
    # Its connection to homed ended: homed has its accessories unreachable.
    wait_for(lambda: not provider_connected(client), 10, "homed seeing the provider gone", process)
    wait_accessories(client, KEYS, process=None, reachable=False)


def test_a_key_revoked_ends_the_provider_with_exit_2_and_the_fix(homed, bridge, workdir, processes):
    key_file = write_pairing(workdir, bridge)
    process = start_provider(homed, key_file, processes, "--refused-retry", "0.5")
    with homed.client() as client:
        wait_accessories(client, KEYS, process)
        assert provider_connected(client)
        bridge.revoke()  # every request answered 403, the event stream ended
        check_revoked_exit(client, process, bridge, key_file)


def test_a_key_revoked_under_an_open_stream_is_found_by_the_probe(homed, bridge, workdir, processes):
    key_file = write_pairing(workdir, bridge)
    process = start_provider(homed, key_file, processes, "--refused-retry", "0.5", "--probe-interval", "0.5")
    with homed.client() as client:
        wait_accessories(client, KEYS, process)
        bridge.revoke(end_streams=False)  # the stream stays open and silent
        check_revoked_exit(client, process, bridge, key_file)


def test_a_key_refused_at_start_ends_the_provider_too(homed, bridge, workdir, processes):
    key_file = write_pairing(workdir, bridge)
    bridge.revoke()
    process = start_provider(homed, key_file, processes, "--refused-retry", "0.5")
    assert exit_status(process) == 2
    assert the_fix(bridge, key_file) in process.log().splitlines()


def test_a_single_refusal_is_asked_again_and_the_provider_goes_on(homed, bridge, workdir, processes):
    process = start_provider(homed, write_pairing(workdir, bridge), processes, "--refused-retry", "3")
    with homed.client() as client:
        found = wait_accessories(client, KEYS, process)
        bridge.revoke()
        wait_log(process, REFUSED)
        bridge.revoke(revoked=False)  # a transient 403: the key is taken again within the retry
        wait_for(lambda: bridge.streams() == 1, 10, "the provider following the events again", process)
        wait_accessories(client, KEYS, process)
        brightness = ids_of(found[LAMP])[(f"light:{rid(LAMP, 'light')}", "Brightness")]
        bridge.push({"id": rid(LAMP, "light"), "type": "light", "dimming": {"brightness": 33.0}})
        wait_value(client, brightness, 33, process=process)
        assert process.proc.poll() is None
        assert process.log().count(REFUSED) == 1


def test_malformed_events_are_one_line_each_and_dropped_the_rest_applied(homed, bridge, running):
    light = rid(LAMP, "light")
    with homed.client() as client:
        found = wait_accessories(client, KEYS, running)
        brightness = ids_of(found[LAMP])[(f"light:{light}", "Brightness")]
        on = ids_of(found[LAMP])[(f"light:{light}", "On")]
        assert value_of(client, brightness) == 81
        unknown = "00000000-dead-4000-8000-000000000000"
        cases = [
            ("this is not json", " dropped: not JSON (Expecting value: line 1 column 1 (char 0)): 'this is not json'"),
            (json.dumps({"type": "update", "data": []}), " dropped: not a list of events but an object"),
            (json.dumps([{"type": "update", "data": [{"type": "light", "on": {"on": True}}]}]),
             ": item 0 of event 0 (update) left out: it has no resource id"),
            (json.dumps([{"type": "update", "data": [{"id": unknown, "type": "light", "on": {"on": True}}]}]),
             f": the update of light {unknown} dropped: the bridge did not list that resource "
             "(later updates of it dropped without a line)"),
            (json.dumps([{"type": "update", "data": [{"id": light, "type": "light", "dimming": {"brightness": "x"}}]}]),
             f": the update of light {light} (Device 36) dropped: dimming.brightness is a string ('x'), "
             "not a number"),
            (json.dumps([{"type": "update", "data": [{"id": light, "type": "light", "on": 1}]}]),
             f": the update of light {light} (Device 36) dropped: on is a number (1), not an object"),
            (json.dumps([{"type": "update", "data": [{"id": light, "type": "light", "dimming": {"brightness": None}}]}]),
             f": the update of light {light} (Device 36) dropped: its Brightness cannot be read from it "
             "(TypeError: float() argument must be a string or a real number, not 'NoneType')"),
            (json.dumps([{"type": "update", "data": [{"id": light, "type": "button", "on": {"on": True}}]}]),
             f": the update of light {light} (Device 36) dropped: type 'button', but the resource is a light"),
        ]
        for data, said in cases:
            bridge.raw(data)
            log = wait_log(running, said)
            lines = [line for line in log.splitlines() if said in line]
            assert len(lines) == 1, lines
            assert re.fullmatch(rf"WARNING homed-hue: bridge {re.escape(bridge.address)}: event \d+:\d+"
                                rf"{re.escape(said)}", lines[0]), lines[0]
            assert running.proc.poll() is None
        # Nothing of them was applied: the lamp is as it was, its resource readable.
        assert value_of(client, brightness) == 81 and value_of(client, on) is False
        # One bad item beside a good one: the good one applied, the bad one named.
        bridge.raw(json.dumps([{"type": "update", "data": [
            {"id": light, "type": "light", "on": {"on": "yes"}},
            {"id": rid(WHITE, "light"), "type": "light", "on": {"on": False}}]}]))
        wait_log(running, f"the update of light {light} (Device 36) dropped: on.on is a string ('yes'), not a "
                          "boolean; the rest applied")
        wait_value(client, ids_of(found[WHITE])[(f"light:{rid(WHITE, 'light')}", "On")], False, process=running)
        # A good event after them all is applied.
        bridge.push({"id": light, "type": "light", "dimming": {"brightness": 12.0}, "on": {"on": True}})
        wait_value(client, brightness, 12, process=running)
        wait_value(client, on, True, process=running)
        # The unknown resource's next update is dropped without another line.
        bridge.raw(json.dumps([{"type": "update", "data": [{"id": unknown, "type": "light", "on": {"on": False}}]}]))
        wait_log(running, "another update of the unknown resource")
        assert running.log().count("the bridge did not list that resource") == 1
        assert accessories(client)[LAMP].reachable
