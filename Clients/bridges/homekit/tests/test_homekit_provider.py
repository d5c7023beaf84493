"""Accessories that came into homed from the HomeKit provider
(Clients/providers/homekit) are HomeKit accessories already: the bridge leaves
them out unless asked. Both real processes: a HAP-python accessory paired by the
provider's own `pair` command, the provider running, homed, the bridge and an
aiohomekit controller."""

import os
import sys
from pathlib import Path

import pytest

from .bridge_kit import BridgeProcess, placement

from Clients.providers.homekit.tests.hk_helpers import KEYS, Accessory, Setup, key

HOST = "127.0.0.1"


@pytest.fixture
def provided(homed, processes, workdir):
    """The HAP-python accessory (a bridge with a lamp, a switch, a sensor, a
    button, a gadget) paired, the HomeKit provider running, its accessories in homed."""
    return Setup(homed, Accessory(workdir, processes).start(), workdir, processes).ready()


def test_homekit_provider_accessories_are_not_shown_back_to_homekit_by_default(homed, devices, provided,
                                                                               processes, workdir, controllers):
    bridge = BridgeProcess(workdir, homed.socket_path).start(processes)
    # Five of its accessories left out (its own bridge, aid 1, is never shown anyway).
    bridge.wait_log("5 of providers homekit left out")
    controller = controllers()
    controller.pair(HOST, bridge.port, bridge.pincode())
    shown = bridge.ids()["accessories"]
    assert {str(devices.accessory_id(k)) for k in ("lamp", "button", "sensor")} <= set(shown)
    assert not {str(provided.found[k].id) for k in KEYS} & set(shown)
    names = {c["value"] for a in controller.accessories() for s in a["services"] for c in s["characteristics"]
             if c["type"] == "00000023-0000-1000-8000-0026BB765291"}
    assert names == {"homed Bridge", "Desk Lamp", "Wall Button", "Cellar Sensor"}


def test_asked_for_they_are_shown_and_a_write_goes_round_to_the_accessory(homed, provided, processes, workdir,
                                                                          controllers):
    config = os.path.join(workdir, "homekit.toml")
    with open(config, "w") as f:
        f.write("[expose]\nexclude_providers = []\n")
    bridge = BridgeProcess(workdir, homed.socket_path, extra=["--config", config]).start(processes)
    controller = controllers()
    controller.pair(HOST, bridge.port, bridge.pincode())
    lamp = provided.found[key(2)]
    brightness = placement(bridge, lamp.id, provided.ids(2)[("Lightbulb", "Brightness")])
    # The provider's bridge (aid 1) is not shown; the five behind it are.
    assert str(provided.found[key(1)].id) not in bridge.ids()["accessories"]
    assert all(str(provided.found[key(aid)].id) in bridge.ids()["accessories"] for aid in range(2, 7))
    assert controller.get([brightness]) == {brightness: {"value": 40}}
    controller.subscribe([brightness])
    # Controller → bridge → homed → provider → the HAP-python accessory.
    # (put_raw: aiohomekit's put_characteristics tells its own listeners of the
    # value written, which would hide whether the bridge pushed it back.)
    assert controller.put_raw({"characteristics": [{"aid": brightness[0], "iid": brightness[1], "value": 70}]}) == {}
    assert provided.accessory.expect_set("Brightness", 70)
    # The accessory's own change comes back as an event at the controller; its
    # write did not (HAP: the writer gets no event of its own write).
    provided.accessory.send({"set": [2, "Brightness", 30]})
    assert controller.wait_values(brightness) == [30]
