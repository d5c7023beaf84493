"""The provider as a real process between a real mosquitto (with a fake
Zigbee2MQTT coordinator on it) and a real homed."""

import pytest

from homed import pb
from homed_testkit import EventLog, is_reachability, is_value, plain

from . import devices
from .z2m_helpers import (accessories, ids_of, start_provider, value_of, wait_accessories, wait_for, wait_log,
                         wait_value)

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
        # Values seeded with /get (device state is not retained).
        ids = ids_of(found[devices.ieee(2)])
        wait_value(client, ids[("light", "Brightness")], 100, process=provider)
        assert value_of(client, ids[("light", "On")]) is False
        assert coordinator.wait_received("zigbee2mqtt/Living Hue/get") == {"state": "", "brightness": "",
                                                                           "color": "", "color_temp": ""}
        radiator = ids_of(found[devices.ieee(14)])
        wait_value(client, radiator[("thermostat", "CurrentTemperature")], pytest.approx(19.4), process=provider)
        # A fresh read asks the device again.
        coordinator.states["Porch light"]["state"] = "ON"  # the device changed, and said nothing
        porch = ids_of(found[devices.ieee(5)])[("light", "On")]
        assert value_of(client, porch) is False
        # The provider answers once the device has said something after its /get: a
        # late answer to the /get that seeded it at start (still OFF) may be that, so
        # a fresh read is asked until one brings the device's ON. Only a fresh read
        # can: the device changed without a word, so the cache alone stays OFF.
        wait_for(lambda: value_of(client, porch, fresh=True) is True or None, 15, "a fresh read to ask the device",
                 provider)
        assert value_of(client, porch) is True


def ready(homed, coordinator, processes, keys=SUPPORTED, *extra, **kwargs):
    """The provider started, every device registered and reachable: (provider, client, accessories)."""
    provider = start_provider(homed, f"mqtt://127.0.0.1:{coordinator.port}", processes, *extra, **kwargs)
    client = homed.client()
    return provider, client, wait_accessories(client, keys, provider)


def write(client, cid, value, timeout=10.0):
    result = client.write({cid: value}, timeout=timeout).results[0]
    return result.code, result.message


def test_a_write_goes_to_set_and_is_acknowledged_by_the_echo(homed, coordinator, processes):
    provider, client, found = ready(homed, coordinator, processes)
    with client:
        ids = ids_of(found[devices.ieee(6)])
        wait_value(client, ids[("outlet", "On")], False)
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            assert write(client, ids[("outlet", "On")], pb.Value(bool_value=True)) == (0, "")
            assert coordinator.wait_received("zigbee2mqtt/Coffee plug/set") == {"state": "ON"}
            events.wait_for(lambda e: is_value(ids[("outlet", "On")])(e) and plain(e.value.value) is True)
            # What follows from the echo (in use while on) is reported too.
            wait_value(client, ids[("outlet", "OutletInUse")], True)
            # Brightness to the device's range, and the echo scaled back.
            light = ids_of(found[devices.ieee(1)])
            assert write(client, light[("light", "Brightness")], pb.Value(int_value=30)) == (0, "")
            assert coordinator.wait_received("zigbee2mqtt/kitchen/ceiling/set") == {"brightness": 76}
            assert coordinator.states["kitchen/ceiling"]["brightness"] == 76
            # A two-gang switch's second endpoint.
            gang = ids_of(found[devices.ieee(8)])
            assert write(client, gang[("switch_l2", "On")], pb.Value(bool_value=True)) == (0, "")
            assert coordinator.wait_received("zigbee2mqtt/Stairs 2-gang/set") == {"state_l2": "ON"}
            assert value_of(client, gang[("switch_l1", "On")]) is True
            # A thermostat's setpoint on the device's 0.5 step; a lock.
            radiator = ids_of(found[devices.ieee(14)])
            assert write(client, radiator[("thermostat", "TargetTemperature")], pb.Value(float_value=21.3)) == (0, "")
            assert coordinator.wait_received("zigbee2mqtt/Radiator/set") == {"occupied_heating_setpoint": 21.5}
            # Acknowledged, and then homed holds the value the device echoed.
            wait_value(client, radiator[("thermostat", "TargetTemperature")], pytest.approx(21.5), process=provider)
            lock = ids_of(found[devices.ieee(13)])
            assert write(client, lock[("lock", "LockTargetState")], pb.Value(uint_value=0)) == (0, "")
            assert coordinator.wait_received("zigbee2mqtt/Front door/set") == {"state": "UNLOCK"}
        finally:
            events.close()


def test_late_partial_and_missing_echoes(homed, coordinator, processes):
    provider, client, found = ready(homed, coordinator, processes, write_timeout=1.5)
    with client:
        hue = ids_of(found[devices.ieee(2)])
        on, brightness = hue[("light", "On")], hue[("light", "Brightness")]
        wait_value(client, brightness, 100)
        coordinator.modes["Living Hue"] = ("late", 0.5)
        assert write(client, on, pb.Value(bool_value=True)) == (0, "")
        assert value_of(client, on) is True
        coordinator.modes["Living Hue"] = ("never",)
        code, message = write(client, on, pb.Value(bool_value=False))
        assert code == pb.DEADLINE_EXCEEDED
        assert message == ("device 'Living Hue' (0x00124b0000000002) did not echo On = False within 1.5 s of "
                           "zigbee2mqtt/Living Hue/set")
        assert value_of(client, on) is True  # not confirmed: not applied
        # Partially: the device echoes the first property written only.
        coordinator.modes["Living Hue"] = ("partial",)
        response = client.write({on: pb.Value(bool_value=False), brightness: pb.Value(int_value=20)}, timeout=10)
        codes = {r.characteristic_id: r.code for r in response.results}
        assert codes == {on: 0, brightness: pb.DEADLINE_EXCEEDED}
        assert value_of(client, on) is False and value_of(client, brightness) == 100
        # Too late: the echo comes after the deadline; the write failed, and the
        # echo is then the device's own change, reported as such.
        coordinator.modes["Living Hue"] = ("late", 2.5)
        assert write(client, brightness, pb.Value(int_value=40))[0] == pb.DEADLINE_EXCEEDED
        wait_value(client, brightness, 40, process=provider)


def test_a_button_press_is_a_single_press_event(homed, coordinator, processes):
    provider, client, found = ready(homed, coordinator, processes)
    with client:
        remote = ids_of(found[devices.ieee(25)])
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            up = remote[("button_brightness_up", "ProgrammableSwitchEvent")]
            coordinator.publish("Living remote", {"action": "brightness_up_click", "battery": 74})
            events.wait_for(lambda e: is_value(up)(e) and plain(e.value.value) == 0)
            coordinator.publish("Living remote", {"action": "brightness_up_hold", "battery": 74})
            events.wait_for(lambda e: is_value(up)(e) and plain(e.value.value) == 2)
            # The same press twice is two events.
            coordinator.publish("Living remote", {"action": "brightness_up_click", "battery": 74})
            events.wait_for(lambda e: is_value(up)(e) and plain(e.value.value) == 0, count=2)
            toggle = remote[("button_toggle", "ProgrammableSwitchEvent")]
            assert not events.matching(is_value(toggle))
        finally:
            events.close()


def test_sensor_reports_reach_homed_fitted_to_the_catalog(homed, coordinator, processes):
    provider, client, found = ready(homed, coordinator, processes)
    with client:
        climate = ids_of(found[devices.ieee(22)])
        coordinator.publish("Bedroom climate", {"temperature": 21.37, "humidity": 51.92, "pressure": 1012.4,
                                                "battery": 91})
        wait_value(client, climate[("humidity", "CurrentRelativeHumidity")], 52.0)
        assert value_of(client, climate[("temperature", "CurrentTemperature")]) == pytest.approx(21.4)
        assert value_of(client, climate[("temperature", "AirPressure")]) == pytest.approx(1012.4)
        motion = ids_of(found[devices.ieee(17)])
        coordinator.publish("Hall motion", {"occupancy": True, "illuminance_lux": 0, "battery": 80})
        wait_value(client, motion[("occupancy", "MotionDetected")], True)
        assert value_of(client, motion[("illuminance_lux", "CurrentAmbientLightLevel")]) == pytest.approx(0.0001)
        wait_log(provider, "zigbee2mqtt/Hall motion: device 'Hall motion' (0x00124b0000000011): "
                           "CurrentAmbientLightLevel out of range")


def test_a_burst_of_readings_reaches_homed_in_order_with_nothing_lost(homed, coordinator, processes):
    # Readings are reported by paho's thread at once when it can, else by the
    # sync thread (a report still on its way): either way in the order they came.
    provider, client, found = ready(homed, coordinator, processes)
    with client:
        temperature = ids_of(found[devices.ieee(22)])[("temperature", "CurrentTemperature")]
        remote = ids_of(found[devices.ieee(25)])
        up = remote[("button_brightness_up", "ProgrammableSwitchEvent")]
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            readings = [round(10 + n * 0.1, 1) for n in range(300)]
            for n, reading in enumerate(readings):
                coordinator.publish("Bedroom climate", {"temperature": reading, "humidity": 50, "battery": 91})
                if n % 50 == 0:
                    coordinator.publish("Living remote", {"action": "brightness_up_click", "battery": 74})
            events.wait_for(lambda e: is_value(temperature)(e) and plain(e.value.value) == pytest.approx(readings[-1]))
            seen = [plain(e.value.value) for _, e in events.matching(is_value(temperature))]
            assert all(a < b for a, b in zip(seen, seen[1:])), seen  # in the order they came
            events.wait_for(is_value(up), count=6)  # every press, once
            assert len(events.matching(is_value(up))) == 6
        finally:
            events.close()
        assert "Traceback" not in provider.log()


def test_broker_killed_and_restarted(homed, broker, coordinator, processes):
    provider, client, found = ready(homed, coordinator, processes)
    with client:
        plug = found[devices.ieee(6)]
        on = ids_of(plug)[("outlet", "On")]
        wait_value(client, on, False)
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            with coordinator.cond:
                coordinator.received.clear()
            broker.kill()
            for key in SUPPORTED:
                events.wait_for(is_reachability(found[key].id, False), timeout=15)
            wait_log(provider, "lost the broker")
            coordinator.states["Coffee plug"]["state"] = "ON"  # changed meanwhile
            broker.start()
            for key in SUPPORTED:
                events.wait_for(is_reachability(found[key].id, True), timeout=20)
            wait_value(client, on, True, timeout=10, process=provider)
            events.wait_for(is_value(on))
            # Exactly what changed: one value event for On, none for an unchanged
            # switch. (A later change, reported after every re-read, is the marker.)
            assert coordinator.wait_received("zigbee2mqtt/Fan relay/get", timeout=10) == {"state": ""}
            porch = ids_of(found[devices.ieee(5)])[("light", "On")]
            coordinator.change("Porch light", {"state": "ON"})
            events.wait_for(is_value(porch))
            fan = ids_of(found[devices.ieee(10)])[("switch", "On")]
            assert len(events.matching(is_value(on))) == 1
            assert events.matching(is_value(fan)) == []
        finally:
            events.close()


def test_bridge_offline_and_device_availability(homed, coordinator, processes):
    provider, client, found = ready(homed, coordinator, processes)
    with client:
        coordinator.raw("zigbee2mqtt/bridge/state", b'{"state":"offline"}', retain=True)
        wait_accessories(client, SUPPORTED, provider, reachable=False)
        coordinator.raw("zigbee2mqtt/bridge/state", b"online", retain=True)
        wait_accessories(client, SUPPORTED, provider)
        coordinator.raw("zigbee2mqtt/Sink leak/availability", b'{"state":"offline"}', retain=True)
        wait_for(lambda: not accessories(client)[devices.ieee(19)].reachable, what="Sink leak unreachable")
        assert all(a.reachable for k, a in accessories(client).items() if k != devices.ieee(19))
        coordinator.raw("zigbee2mqtt/Sink leak/availability", b"online", retain=True)
        wait_for(lambda: accessories(client)[devices.ieee(19)].reachable, what="Sink leak reachable")


def test_bad_input_is_logged_and_the_rest_keeps_working(homed, coordinator, processes):
    provider, client, found = ready(homed, coordinator, processes)
    with client:
        plug = ids_of(found[devices.ieee(6)])[("outlet", "On")]
        coordinator.raw("zigbee2mqtt/Coffee plug", b"{not json")
        wait_log(provider, "zigbee2mqtt/Coffee plug: device 'Coffee plug' (0x00124b0000000006): state not JSON")
        coordinator.raw("zigbee2mqtt/Coffee plug", b"[1, 2]")
        wait_log(provider, "state a JSON list, not an object; ignored")
        coordinator.raw("zigbee2mqtt/Ghost", b'{"state": "ON"}')
        wait_log(provider, "zigbee2mqtt/Ghost: a message for no known device; ignored")
        coordinator.raw("zigbee2mqtt/Sink leak/availability", b"sideways")
        wait_log(provider, "zigbee2mqtt/Sink leak/availability: availability b'sideways' is neither online nor offline")
        # Retained garbage on the config topic: the devices known stay.
        coordinator.raw("zigbee2mqtt/bridge/devices", b"\x00garbage", retain=True)
        wait_log(provider, "zigbee2mqtt/bridge/devices: not JSON")
        coordinator.raw("zigbee2mqtt/bridge/devices", b'{"devices": 1}', retain=True)
        wait_log(provider, "zigbee2mqtt/bridge/devices: a JSON dict, not a list of devices; keeping the devices known")
        assert set(accessories(client)) == SUPPORTED
        # ... and a device still works.
        coordinator.change("Coffee plug", {"state": "ON"})
        wait_value(client, plug, True, process=provider)
        assert provider.proc.poll() is None


def test_join_rename_reinterview_and_leave(homed, coordinator, processes):
    provider, client, found = ready(homed, coordinator, processes)
    with client:
        fan = found[devices.ieee(10)]
        renamed = [dict(d, friendly_name="Attic fan") if d["network_address"] == 10 else d for d in devices.DEVICES]
        newcomer = devices.device(30, "New plug", "E1603", "IKEA", "TRADFRI control outlet",
                                  [{"type": "switch", "features": [devices.state()]}])
        gone = devices.ieee(24)
        listed = [d for d in renamed if d["ieee_address"] != gone] + [newcomer]
        coordinator.states["Attic fan"] = coordinator.states.pop("Fan relay")
        coordinator.states["New plug"] = {"state": "ON"}
        coordinator.publish_devices(devices.bridge_devices(listed))
        keys = (SUPPORTED - {gone}) | {devices.ieee(30)}
        wait_for(lambda: set(accessories(client)) == keys, what="the new list of accessories", process=provider)
        now = accessories(client)
        # The rename renames nothing in homed: same accessory, same name; the new topic is served.
        assert now[devices.ieee(10)].id == fan.id and now[devices.ieee(10)].name == "Fan relay"
        wait_log(provider, "renamed in Zigbee2MQTT: 'Fan relay' -> 'Attic fan'")
        on = ids_of(now[devices.ieee(10)])[("switch", "On")]
        assert write(client, on, pb.Value(bool_value=True)) == (0, "")
        assert coordinator.wait_received("zigbee2mqtt/Attic fan/set") == {"state": "ON"}
        wait_value(client, ids_of(now[devices.ieee(30)])[("outlet", "On")], True, process=provider)
        # A re-interview that changes the exposes registers the device again, keeping its id.
        reinterviewed = [dict(d, definition=dict(d["definition"], exposes=[
            {"type": "light", "features": [devices.state(), devices.brightness()]}]))
            if d["network_address"] == 10 else d for d in listed]
        coordinator.publish_devices(devices.bridge_devices(reinterviewed))
        wait_for(lambda: [s.type_name for s in accessories(client)[devices.ieee(10)].services][1:] == ["Lightbulb"],
                 what="the re-interviewed device's Lightbulb", process=provider)
        assert accessories(client)[devices.ieee(10)].id == fan.id


def test_homed_restarted_and_the_provider_stopped(homed, coordinator, processes):
    provider, client, found = ready(homed, coordinator, processes)
    hue = ids_of(found[devices.ieee(2)])
    wait_value(client, hue[("light", "Brightness")], 100, process=provider)
    client.close()
    homed.restart()  # in memory: the provider registers everything anew, values read from the devices
    with homed.client() as client:
        found = wait_accessories(client, SUPPORTED, provider, timeout=20)
        hue = ids_of(found[devices.ieee(2)])
        wait_value(client, hue[("light", "Brightness")], 100, process=provider)
        assert write(client, hue[("light", "On")], pb.Value(bool_value=True)) == (0, "")
        provider.proc.terminate()
        assert provider.proc.wait(10) == 0
        wait_accessories(client, SUPPORTED, None, reachable=False)


def test_an_empty_device_list_removes_nothing(homed, coordinator, processes):
    provider, client, found = ready(homed, coordinator, processes)
    with client:
        coordinator.publish_devices([])
        wait_log(provider, "zigbee2mqtt/bridge/devices: an empty list (not even the coordinator); keeping")
        coordinator.publish_devices(devices.bridge_devices())  # a marker: handled after the empty list
        wait_log(provider, "zigbee2mqtt/bridge/devices: 31 devices, 27 mapped", count=2)
        assert set(accessories(client)) == SUPPORTED
