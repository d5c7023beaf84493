"""The provider as a real process between a real mosquitto (with a fake
Zigbee2MQTT coordinator on it) and a real homed."""

import pytest

from homed import pb
from homed_testkit import EventLog, is_reachability, is_value, plain

import devices
from z2m_helpers import accessories, ids_of, start_provider, value_of, wait_accessories, wait_for, wait_log

SUPPORTED = {d["ieee_address"] for d in devices.DEVICES}


def test_every_supported_device_is_registered_by_ieee_address(homed, broker, coordinator, processes):
    provider = start_provider(homed, broker.url, processes)
    with homed.client() as client:
        found = wait_accessories(client, SUPPORTED, provider)
        assert set(found) == SUPPORTED  # nothing half-registered, the unsupported ones absent
        log = wait_log(provider, "not registered")
        assert "device 'Mystery' (0x00124b0000000028) not registered: Zigbee2MQTT does not support it" in log
        assert "device 'Half joined' (0x00124b0000000029) not registered: its interview has not completed" in log
        assert "'Strange gadget' (0x00124b000000002a) not registered: none of its exposes maps" in log
        # A '/' in a friendly name is not one in homed's name.
        assert found[devices.ieee(1)].name == "kitchen ceiling"
        values = {k: value_of(client, cid) for k, cid in ids_of(found[devices.ieee(2)]).items()}
        assert values[("light", "On")] is False and values[("light", "Brightness")] == 100
