"""The writes homebridge-z2m's mapping brought that need more than an echo of
the value written, through the provider as a process between a real
mosquitto (with the fake coordinator) and a real homed: a blind told to hold
its position (HAP's HoldPosition is write-only: the blind's next report
acknowledges it), and a colour bulb that takes x and y only."""

from homed import pb

from . import devices
from .z2m_helpers import ids_of, start_provider, wait_accessories, wait_value

XY_BULB = devices.from_corpus(70, "Reading lamp", "LED1624G9")  # IKEA colour bulb: color_xy only


def test_hold_position_stops_the_blind_and_an_xy_bulb_takes_hue_and_saturation(homed, coordinator, processes):
    coordinator.states["Reading lamp"] = {"state": "ON", "brightness": 254, "color": {"x": 0.3127, "y": 0.329}}
    coordinator.publish_devices(devices.bridge_devices(devices.DEVICES + [XY_BULB]))
    provider = start_provider(homed, f"mqtt://127.0.0.1:{coordinator.port}", processes)
    with homed.client() as client:
        keys = {d["ieee_address"] for d in devices.DEVICES} | {XY_BULB["ieee_address"]}
        found = wait_accessories(client, keys, provider)
        blind = ids_of(found[devices.ieee(11)])
        result = client.write({blind[("cover", "HoldPosition")]: pb.Value(bool_value=True)}, timeout=10).results[0]
        assert (result.code, result.message) == (0, "")
        assert coordinator.wait_received("zigbee2mqtt/Bedroom blind/set") == {"state": "STOP"}
        # False asks nothing of the blind, and is done.
        result = client.write({blind[("cover", "HoldPosition")]: pb.Value(bool_value=False)}, timeout=10).results[0]
        assert (result.code, result.message) == (0, "")

        lamp = ids_of(found[XY_BULB["ieee_address"]])
        wait_value(client, lamp[("light", "On")], True, process=provider)
        writes = {lamp[("light", "Hue")]: pb.Value(float_value=240.0),
                  lamp[("light", "Saturation")]: pb.Value(float_value=100.0)}
        assert [(r.code, r.message) for r in client.write(writes, timeout=10).results] == [(0, ""), (0, "")]
        sent = coordinator.wait_received("zigbee2mqtt/Reading lamp/set")
        assert set(sent) == {"color"} and set(sent["color"]) == {"x", "y"}
        wait_value(client, lamp[("light", "Hue")], 240, process=provider)
        assert not [r for r in coordinator.received if r[0] == "zigbee2mqtt/Bedroom blind/set"]
