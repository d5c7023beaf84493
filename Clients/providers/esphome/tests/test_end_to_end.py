"""The provider as a real process between a fake ESPHome device (a real
process speaking the native API, killed and restarted for real) and a real
homed."""

import pytest

from homed import pb
from homed_testkit import EventLog, is_reachability, is_value, plain

from .esp_helpers import (MAC, accessories, definition, ids_of, start_provider, value_of, wait_accessories, wait_for,
                          wait_log, wait_value, with_state, without, write_config)


def ready(homed, workdir, device, processes, *extra):
    config = write_config(workdir, [("test-device", device.port)])
    provider = start_provider(homed, workdir, processes, config, *extra)
    client = homed.client()
    found = wait_accessories(client, [MAC], provider)
    return provider, client, found[MAC]


def write(client, cid, value, timeout=10.0):
    result = client.write({cid: value}, timeout=timeout).results[0]
    return result.code, result.message


def test_the_device_is_registered_by_its_mac_with_its_values(homed, workdir, device, processes):
    provider, client, accessory = ready(homed, workdir, device, processes)
    with client:
        assert accessory.name == "Test Device"
        services = {s.provider_key: s.type_name for s in accessory.services if s.provider_key}
        assert services == {
            "binary_sensor_front_door": "ContactSensor", "binary_sensor_motion_sensor": "MotionSensor",
            "button_restart": "Switch", "climate_hvac": "Thermostat", "cover_living_room_blind": "WindowCovering",
            "event_doorbell": "StatelessProgrammableSwitch", "light_rgbww_light": "Lightbulb",
            "lock_front_door_lock": "LockMechanism", "sensor_bathroom_humidity": "HumiditySensor",
            "sensor_living_room_temperature": "TemperatureSensor", "switch_relay_1": "Outlet"}
        ids = ids_of(accessory)
        wait_value(client, ids[("sensor_living_room_temperature", "CurrentTemperature")], pytest.approx(21.5),
                   process=provider)
        assert value_of(client, ids[("light_rgbww_light", "On")]) is True
        assert value_of(client, ids[("light_rgbww_light", "Brightness")]) == 50
        assert value_of(client, ids[("light_rgbww_light", "ColorTemperature")]) == 300
        assert value_of(client, ids[("binary_sensor_front_door", "ContactSensorState")]) == 0
        assert value_of(client, ids[("lock_front_door_lock", "LockCurrentState")]) == 1
        assert value_of(client, ids[("cover_living_room_blind", "CurrentPosition")]) == 100
        assert value_of(client, ids[("climate_hvac", "TargetTemperature")]) == pytest.approx(21.0)
        assert value_of(client, ids[("switch_relay_1", "On")]) is False
        # The text sensor: one line naming the device and what was left out.
        log = wait_log(provider, "left out")
        assert log.count("left out") == 1
        assert ("Test Device (AA:BB:CC:DD:EE:FF): left out: text_sensor 'uptime_text' (an entity type this "
                "provider does not map); the rest is registered") in log
        # A state changed on the device is reported.
        device.send({"state": "living_room_temperature", "fields": {"state": 22.5}})
        wait_value(client, ids[("sensor_living_room_temperature", "CurrentTemperature")], pytest.approx(22.5),
                   process=provider)
        device.send({"state": "front_door", "fields": {"state": True}})
        wait_value(client, ids[("binary_sensor_front_door", "ContactSensorState")], 1, process=provider)


def test_writes_are_commands_acknowledged_when_the_state_confirms_them(homed, workdir, device, processes):
    provider, client, accessory = ready(homed, workdir, device, processes)
    with client:
        ids = ids_of(accessory)
        relay = ids[("switch_relay_1", "On")]
        wait_value(client, relay, False, process=provider)
        assert write(client, relay, pb.Value(bool_value=True)) == (0, "")
        assert device.wait_command("SwitchCommandRequest") == {"key": 12345680, "state": True}
        assert value_of(client, relay) is True
        assert value_of(client, ids[("switch_relay_1", "OutletInUse")]) is True
        # Brightness as ESPHome's 0..1.
        assert write(client, ids[("light_rgbww_light", "Brightness")], pb.Value(int_value=30)) == (0, "")
        command = device.wait_command("LightCommandRequest")
        assert command["has_brightness"] and command["brightness"] == pytest.approx(0.3)
        assert "has_state" not in command  # a brightness alone leaves on/off as it is
        assert value_of(client, ids[("light_rgbww_light", "Brightness")]) == 30
        assert write(client, ids[("light_rgbww_light", "ColorTemperature")], pb.Value(int_value=250)) == (0, "")
        assert device.wait_command("LightCommandRequest")["color_temperature"] == pytest.approx(250)
        assert write(client, ids[("light_rgbww_light", "Saturation")], pb.Value(float_value=100)) == (0, "")
        assert write(client, ids[("light_rgbww_light", "Hue")], pb.Value(float_value=120)) == (0, "")
        device.wait_command("LightCommandRequest")
        rgb = device.wait_command("LightCommandRequest")
        assert (rgb.get("red", 0.0), rgb["green"], rgb.get("blue", 0.0)) == (pytest.approx(0), pytest.approx(1), pytest.approx(0))
        assert value_of(client, ids[("light_rgbww_light", "Hue")]) == pytest.approx(120, abs=1)
        # A lock, a cover.
        assert write(client, ids[("lock_front_door_lock", "LockTargetState")], pb.Value(int_value=0)) == (0, "")
        assert device.wait_command("LockCommandRequest") == {"key": 22000004}  # UNLOCK is 0, protobuf's default
        wait_value(client, ids[("lock_front_door_lock", "LockCurrentState")], 0, process=provider)
        assert write(client, ids[("cover_living_room_blind", "TargetPosition")], pb.Value(int_value=40)) == (0, "")
        assert device.wait_command("CoverCommandRequest")["position"] == pytest.approx(0.4)
        wait_value(client, ids[("cover_living_room_blind", "CurrentPosition")], 40, process=provider)
        # A thermostat's setpoint.
        assert write(client, ids[("climate_hvac", "TargetTemperature")], pb.Value(float_value=22.5)) == (0, "")
        assert device.wait_command("ClimateCommandRequest")["target_temperature"] == pytest.approx(22.5)
        # A button: pressed by a write, and off again.
        button = ids[("button_restart", "On")]
        assert write(client, button, pb.Value(bool_value=True)) == (0, "")
        assert device.wait_command("ButtonCommandRequest") == {"key": 22000005}
        wait_value(client, button, False, process=provider)
        assert len(device.commands("ButtonCommandRequest")) == 1


def test_a_write_the_device_does_not_confirm_fails_and_one_to_a_device_gone_is_unavailable(homed, workdir, device,
                                                                                           processes):
    provider, client, accessory = ready(homed, workdir, device, processes)
    with client:
        ids = ids_of(accessory)
        relay = ids[("switch_relay_1", "On")]
        wait_value(client, relay, False, process=provider)
        device.send({"stuck": "relay_1"})  # takes the command, and its state stays off
        code, message = write(client, relay, pb.Value(bool_value=True))
        assert code == pb.DEADLINE_EXCEEDED and "did not confirm the write" in message
        assert device.commands("SwitchCommandRequest") == [{"key": 12345680, "state": True}]
        assert value_of(client, relay) is False
        device.kill()
        wait_for(lambda: not accessories(client)[MAC].reachable, 10, "unreachable", provider)
        code, message = write(client, ids[("lock_front_door_lock", "LockTargetState")], pb.Value(int_value=0))
        assert code == pb.UNAVAILABLE and "not connected" in message


def test_a_press_is_told_once(homed, workdir, device, processes):
    provider, client, accessory = ready(homed, workdir, device, processes)
    with client:
        ids = ids_of(accessory)
        press = ids[("event_doorbell", "ProgrammableSwitchEvent")]
        motion = ids[("binary_sensor_motion_sensor", "MotionDetected")]
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            device.send({"press": "doorbell", "event_type": "double_press"})
            found = events.wait_for(is_value(press))
            assert plain(found[0][1].value.value) == 1
            device.send({"press": "doorbell", "event_type": "single_press"})
            events.wait_for(is_value(press), count=2)
            # Something after both presses, so that a third would have come by then.
            device.send({"state": "motion_sensor", "fields": {"state": True}})
            events.wait_for(lambda e: is_value(motion)(e) and plain(e.value.value) is True)
            assert [plain(e.value.value) for _, e in events.matching(is_value(press))] == [1, 0]
        finally:
            events.close()


def test_reachability_follows_the_device_and_values_are_read_again(homed, workdir, device, processes):
    provider, client, accessory = ready(homed, workdir, device, processes)
    with client:
        ids = ids_of(accessory)
        temperature = ids[("sensor_living_room_temperature", "CurrentTemperature")]
        wait_value(client, temperature, pytest.approx(21.5), process=provider)
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            device.kill()  # SIGKILL: no goodbye
            events.wait_for(is_reachability(accessory.id, False), timeout=15)
            code, _ = value_of(client, temperature, fresh=True)
            assert code == pb.UNAVAILABLE
            # Back, with other values: read again, the same ids.
            device.start(with_state(definition(), "living_room_temperature", state=18.5))
            events.wait_for(is_reachability(accessory.id, True), timeout=20)
            wait_value(client, temperature, pytest.approx(18.5), process=provider)
            assert ids_of(accessories(client)[MAC]) == ids
            # Reachability is told once each way.
            assert len(events.matching(is_reachability(accessory.id, False))) == 1
            assert len(events.matching(is_reachability(accessory.id, True))) == 1
        finally:
            events.close()


def test_a_restarted_provider_keeps_the_ids_and_knows_a_device_that_is_off(homed, workdir, device, processes):
    provider, client, accessory = ready(homed, workdir, device, processes)
    with client:
        ids = ids_of(accessory)
        provider.kill()
        wait_for(lambda: not accessories(client)[MAC].reachable, 10, "unreachable after the provider's death")
        again = start_provider(homed, workdir, processes, write_config(workdir, [("test-device", device.port)]))
        found = wait_accessories(client, [MAC], again)
        assert ids_of(found[MAC]) == ids
        # Stopped with the device off: started again, the accessory is there,
        # unreachable (from what the provider kept), until the device answers.
        again.kill()
        device.kill()
        third = start_provider(homed, workdir, processes, write_config(workdir, [("test-device", device.port)]))
        wait_log(third, "not connected")
        found = wait_accessories(client, [MAC], third, reachable=False)
        assert ids_of(found[MAC]) == ids
        device.start()
        found = wait_accessories(client, [MAC], third)
        assert ids_of(found[MAC]) == ids


def test_a_reflashed_device_is_registered_again_with_the_same_ids(homed, workdir, device, processes):
    provider, client, accessory = ready(homed, workdir, device, processes)
    with client:
        ids = ids_of(accessory)
        device.kill()
        wait_for(lambda: not accessories(client)[MAC].reachable, 15, "unreachable", provider)
        device.start(without(definition(), "front_door_lock"))
        wait_log(provider, "its entities changed; registered again")
        found = wait_accessories(client, [MAC], provider)
        now = ids_of(found[MAC])
        assert {k for k in ids if k[0] == "lock_front_door_lock"} and not {k for k in now
                                                                          if k[0] == "lock_front_door_lock"}
        assert {k: v for k, v in ids.items() if k[0] != "lock_front_door_lock"} == now


def test_homed_restarted_and_the_provider_stopped(homed, workdir, device, processes):
    provider, client, accessory = ready(homed, workdir, device, processes)
    ids = ids_of(accessory)
    wait_value(client, ids[("light_rgbww_light", "Brightness")], 50, process=provider)
    client.close()
    homed.stop()
    # Changed on the device while homed was away: the new registration says it.
    device.send({"state": "rgbww_light", "fields": {"brightness": 0.8}})
    homed.start()  # in memory: the provider registers everything anew
    with homed.client() as client:
        found = wait_accessories(client, [MAC], provider)
        ids = ids_of(found[MAC])
        wait_value(client, ids[("light_rgbww_light", "Brightness")], 80, process=provider)
        result = client.write({ids[("switch_relay_1", "On")]: pb.Value(bool_value=True)}, timeout=10).results[0]
        assert (result.code, result.message) == (0, "")
        provider.proc.terminate()
        assert provider.proc.wait(10) == 0
        wait_accessories(client, [MAC], None, reachable=False)


def test_a_device_lost_while_homed_was_away_is_unreachable_when_homed_returns(homed, workdir, device, processes):
    provider, client, accessory = ready(homed, workdir, device, processes)
    client.close()
    homed.stop()
    device.kill()
    wait_log(provider, "unreachable (connection lost)")
    homed.start()
    with homed.client() as client:
        found = wait_accessories(client, [MAC], provider, reachable=False)
        assert set(ids_of(found[MAC])) == set(ids_of(accessory))  # all of it, from what the provider kept
        device.start()
        wait_accessories(client, [MAC], provider)


def test_two_devices_each_its_own_accessory_and_reachability(homed, workdir, device, processes):
    from .esp_helpers import FakeDevice
    other_data = definition()
    other_data["device_info"].update(mac_address="11:22:33:44:55:66", friendly_name="Other Device", name="other")
    other = FakeDevice(workdir, processes)
    other.starts = 100  # its own files in the work directory
    other.start(other_data)
    config = write_config(workdir, [("test-device", device.port), ("other", other.port)])
    provider = start_provider(homed, workdir, processes, config)
    with homed.client() as client:
        found = wait_accessories(client, [MAC, "11:22:33:44:55:66"], provider)
        assert found["11:22:33:44:55:66"].name == "Other Device"
        other.kill()
        wait_accessories(client, ["11:22:33:44:55:66"], provider, reachable=False)
        assert accessories(client)[MAC].reachable is True
        relay = ids_of(found[MAC])[("switch_relay_1", "On")]
        assert write(client, relay, pb.Value(bool_value=True)) == (0, "")
        assert device.wait_command("SwitchCommandRequest") == {"key": 12345680, "state": True}
        assert other.commands("SwitchCommandRequest") == []
