"""The whole loop in one test: a device of a provider → homed → the HomeKit
bridge → an aiohomekit controller writes → homed → the provider is sent the
write; and the provider's report comes back as an event at the controllers."""

from .bridge_kit import BRIGHTNESS, ON, BridgeProcess, placement
from homed import pb
from homed_testkit import EventLog, is_value

HOST = "127.0.0.1"


def test_a_write_from_a_controller_reaches_the_device_and_its_report_comes_back(homed, devices, processes,
                                                                               workdir, controllers):
    bridge = BridgeProcess(workdir, homed.socket_path).start(processes)
    owner = controllers()
    owner.pair(HOST, bridge.port, bridge.pincode())
    guest = controllers()
    guest.pair_as_guest_of(owner, HOST, bridge.port)
    on = placement(bridge, devices.accessory_id("lamp"), devices.id_of(ON))
    brightness = placement(bridge, devices.accessory_id("lamp"), devices.id_of(BRIGHTNESS))
    for controller in (owner, guest):
        controller.subscribe([on, brightness])
    events = EventLog(homed.socket_path, pb.SubscribeRequest(filter=pb.SubscriptionFilter(
        characteristic_ids=[devices.id_of(ON)])))
    try:
        events.wait_subscribed()
        # The owner switches the lamp on: the provider is sent the write, homed
        # records it (origin: the bridge), and the other controller is told.
        assert owner.put([(*on, True)]) == {}
        devices.wait_write(ON, True)
        (_, event), = events.wait_for(is_value(devices.id_of(ON)))
        assert event.origin.name == "homekit-bridge" and event.value.value.bool_value is True
        assert guest.wait_values(on) == [True]
        # The device reports a change of its own: an event at both controllers.
        devices.provider.report({BRIGHTNESS: 12})
        assert owner.wait_values(brightness) == [12]
        assert guest.wait_values(brightness) == [12]
        assert owner.get([on, brightness]) == {on: {"value": True}, brightness: {"value": 12}}
    finally:
        events.close()
