"""Restarts of the bridge and of homed: the same aid/iid (HomeKit keys what
users build on them), pairings kept, and the values the controller sees are
homed's — nothing lost while one side was away, nothing stale after."""

import time

import pytest

from .bridge_kit import BRIGHTNESS, ON, TEMPERATURE, WARMTH, BridgeProcess, TestDevices, placement, value_of
from homed_testkit import HomedProcess, require_binary
from homed_testkit.providers import wait_for

HOST = "127.0.0.1"


def layout(controller):
    """The accessory database without values: what must never move."""
    return [(a["aid"], [(s["iid"], s["type"], [(c["iid"], c["type"], tuple(c["perms"])) for c in s["characteristics"]])
                        for s in a["services"]]) for a in controller.accessories()]


def test_restarts_keep_aid_iid_and_pairings_and_lose_no_value(workdir, processes, controllers):
    daemon = HomedProcess(require_binary(), workdir).start()   # on a database: ids survive its restarts
    devices = TestDevices(daemon.socket_path).start()
    try:
        bridge = BridgeProcess(workdir, daemon.socket_path).start(processes)
        controller = controllers()
        controller.pair(HOST, bridge.port, bridge.pincode())
        before = layout(controller)
        ids_before = bridge.ids()
        configuration = bridge.hap_state()["config_version"]
        brightness = placement(bridge, devices.accessory_id("lamp"), devices.id_of(BRIGHTNESS))
        on = placement(bridge, devices.accessory_id("lamp"), devices.id_of(ON))

        # The bridge restarts, and a value changes in homed while it is away.
        assert bridge.stop() == 0
        controller.run(controller.pairing.close())
        devices.provider.report({BRIGHTNESS: 55})
        bridge.start(processes)
        assert layout(controller) == before and bridge.ids() == ids_before   # still paired, same ids
        assert controller.get([brightness])[brightness] == {"value": 55}
        # Nothing changed in the layout: no new configuration number, so
        # controllers keep their copy of the database.
        assert bridge.hap_state()["config_version"] == configuration

        # homed is killed and started again on its database; the lamp is switched
        # off at the wall while the bridge catches up (a resync: a new journal).
        # The controller ends with homed's values, the change pushed to it.
        controller.subscribe([brightness, on])
        assert controller.put([(*on, True)]) == {}
        devices.wait_write(ON, True)
        daemon.kill()
        daemon.start()
        assert devices.provider.wait_registered(10, count=2)
        devices.values[ON] = False
        devices.provider.report({ON: False})
        with daemon.client() as client:
            assert value_of(client, devices.id_of(ON)) is False

            def agree():
                got = controller.get([brightness, on])
                return (got[brightness].get("value") == value_of(client, devices.id_of(BRIGHTNESS))
                        and got[on].get("value") == value_of(client, devices.id_of(ON)))
            wait_for(agree, what="the controller's values equal to homed's after its restart")
        assert controller.wait_values(on)[-1] is False            # and the change was pushed
        assert layout(controller) == before and bridge.ids() == ids_before
    finally:
        devices.stop()
        daemon.kill()


def test_a_bridge_started_before_homed_pairs_and_shows_the_accessories_once_homed_comes(workdir, processes,
                                                                                        controllers):
    daemon = HomedProcess(require_binary(), workdir)           # not started yet
    bridge = BridgeProcess(workdir, daemon.socket_path, extra=["--start-unfilled-after", "0.2"])
    bridge.start(processes, wait_for="the bridge starts without accessories")
    bridge.wait_log("listening on port")
    controller = controllers()
    controller.pair(HOST, bridge.port, bridge.pincode())
    assert [a["aid"] for a in controller.accessories()] == [1]
    empty = bridge.hap_state()["config_version"]
    daemon.start()
    devices = TestDevices(daemon.socket_path).start()
    try:
        wait_for(lambda: len(controller.accessories()) == 4, what="homed's accessories behind the bridge")
        assert bridge.hap_state()["config_version"] > empty
        temperature = placement(bridge, devices.accessory_id("sensor"), devices.id_of(TEMPERATURE))
        assert controller.get([temperature])[temperature] == {"value": 12.5}
    finally:
        devices.stop()
        daemon.kill()


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_every_accessory_answers_no_response_as_soon_as_homed_is_gone(how, workdir, processes, controllers):
    """README: while homed cannot be reached, its accessories answer No Response.
    However homed went (kill -9 too, which sends nothing before the socket
    closes), every accessory answers -70402 at once — reads of values the bridge
    holds included — until homed is back, then homed's values again."""
    daemon = HomedProcess(require_binary(), workdir).start()
    devices = TestDevices(daemon.socket_path).start()
    try:
        bridge = BridgeProcess(workdir, daemon.socket_path).start(processes)
        controller = controllers()
        controller.pair(HOST, bridge.port, bridge.pincode())
        lamp, sensor = devices.accessory_id("lamp"), devices.accessory_id("sensor")
        keys = [placement(bridge, lamp, devices.id_of(ON)), placement(bridge, lamp, devices.id_of(WARMTH)),
                placement(bridge, sensor, devices.id_of(TEMPERATURE))]
        assert all("value" in answer for answer in controller.get(keys).values())

        gone = time.monotonic()
        if how == "SIGKILL":
            daemon.kill()
        else:
            daemon.stop()

        def no_response():
            return all(answer.get("status") == -70402 for answer in controller.get(keys).values())
        wait_for(no_response, timeout=5, what=f"No Response from every accessory after homed's {how}")
        took = time.monotonic() - gone
        print(f"homed's {how}: No Response after {took * 1000:.0f} ms")
        bridge.wait_log("HomeKit shows No Response")
        on = keys[0]
        assert controller.put([(*on, True)])[on]["status"] == -70402
        with devices.cond:
            assert devices.writes == []

        daemon.start()
        assert devices.provider.wait_registered(15, count=2)
        temperature = keys[2]
        wait_for(lambda: controller.get([temperature])[temperature] == {"value": 12.5}, timeout=15,
                 what="the sensor's value once homed is back")
        assert controller.put([(*on, True)]) == {}
        devices.wait_write(ON, True)
    finally:
        devices.stop()
        daemon.kill()
