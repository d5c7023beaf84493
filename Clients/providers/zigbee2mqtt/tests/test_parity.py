"""What a Homebridge user of homebridge-z2m gets, pinned on Zigbee2MQTT's own
definitions (the corpus), device by device, with no broker and no daemon:
each test is named by the model it maps. Where homed chooses otherwise the
README's "homebridge-z2m" section says what and why."""

import pytest

from homed.refs import Ref
from homed_z2m.mapping import map_device
from homed_z2m.values import xy_to_hs

from . import devices


def documented(model, n=80):
    dm = map_device(devices.from_corpus(n, model, model))
    return dm, (lambda service, characteristic: Ref(dm.ieee, service, characteristic))


def layout(dm):
    return [(s["type"], s["key"], [c.get("type_name") or c["type"] for c in s["characteristics"]])
            for s in dm.accessory["services"]]


def declared(dm, key, characteristic):
    service = next(s for s in dm.accessory["services"] if s["key"] == key)
    return next(c for c in service["characteristics"] if c["type"] == characteristic)


def test_E1757_window_covering_holds_its_position_with_stop():
    """A cover whose state takes STOP has HoldPosition: true publishes STOP, the
    cover's next report acknowledges it (HAP's HoldPosition is write-only)."""
    blind, ref = documented("E1757")
    hold = ref("cover", "HoldPosition")
    assert "HoldPosition" in layout(blind)[0][2]
    assert declared(blind, "cover", "HoldPosition") == {"type": "HoldPosition"}
    assert blind.payload({hold: True}) == {"state": "STOP"}
    assert blind.payload({hold: False}) == {}  # nothing to ask of the cover
    assert hold not in blind.decode({"state": "STOP", "position": 30})[0]  # nothing to read back
    assert blind.acks({"position": 30}) == [hold] and blind.acks({"battery": 80}) == []
    # Without STOP among its states, no HoldPosition.
    device = devices.from_corpus(81, "no stop", "E1757")
    state = device["definition"]["exposes"][0]["features"][0]
    state["values"] = ["OPEN", "CLOSE"]
    assert Ref(device["ieee_address"], "cover", "HoldPosition") not in map_device(device).bindings


def test_CP180335E_01_tilt_only_cover_is_positioned_and_written_by_its_tilt():
    wand, ref = documented("CP180335E-01")
    assert layout(wand)[0] == ("WindowCovering", "cover", ["CurrentPosition", "TargetPosition", "PositionState",
                                                          "HoldPosition"])
    values, _ = wand.decode({"tilt": 70, "state": "OPEN"})
    assert values[ref("cover", "CurrentPosition")] == 70 and values[ref("cover", "TargetPosition")] == 70
    assert wand.payload({ref("cover", "TargetPosition"): 25}) == {"tilt": 25}


def test_HS1DS_sensor_carries_battery_low_and_tamper_beside_its_battery_service():
    door, ref = documented("HS1DS")  # contact, battery_low, tamper, battery
    assert layout(door) == [("ContactSensor", "contact", ["ContactSensorState", "StatusTampered", "StatusLowBattery"]),
                            ("BatteryService", "battery", ["BatteryLevel", "ChargingState", "StatusLowBattery"])]
    values, _ = door.decode({"battery_low": True, "tamper": False})
    assert values[ref("contact", "StatusLowBattery")] == 1 and values[ref("battery", "StatusLowBattery")] == 1
    assert values[ref("contact", "StatusTampered")] == 0


def test_IM6001_MPP01_every_sensor_service_gets_the_status_and_moving_is_motion():
    multi, ref = documented("IM6001-MPP01")  # temperature, contact, moving, battery_low, tamper, battery
    sensors = [(stype, chars) for stype, key, chars in layout(multi) if stype != "BatteryService"]
    assert sensors == [(stype, [main, "StatusTampered", "StatusLowBattery"]) for stype, main in (
        ("TemperatureSensor", "CurrentTemperature"), ("ContactSensor", "ContactSensorState"),
        ("MotionSensor", "MotionDetected"))]
    assert multi.decode({"moving": True})[0][ref("moving", "MotionDetected")] is True


def test_VOCKQJK11LM_air_quality_sensor_from_voc_and_the_devices_own_verdict():
    """homebridge-z2m's AirQualitySensor for voc; the AirQuality the device
    itself states where it has one (Aqara's air_quality)."""
    monitor, ref = documented("VOCKQJK11LM")
    assert ("AirQualitySensor", "air_quality", ["AirQuality", "VOCDensity"]) in layout(monitor)
    values, _ = monitor.decode({"voc": 420, "air_quality": "moderate"})
    assert values[ref("air_quality", "VOCDensity")] == 420 and values[ref("air_quality", "AirQuality")] == 3
    assert monitor.decode({"air_quality": "unknown"})[0][ref("air_quality", "AirQuality")] == 0


def test_HS2AQ_EM_air_quality_is_the_worst_of_its_readings_on_homebridge_z2ms_scale():
    monitor, ref = documented("HS2AQ-EM")  # voc, pm25, pm10, no verdict of its own
    assert ("AirQualitySensor", "air_quality", ["AirQuality", "PM2.5Density", "VOCDensity", "PM10Density"]) \
        in layout(monitor)
    quality = ref("air_quality", "AirQuality")
    assert monitor.decode({"voc": 200, "pm25": 10, "pm10": 20})[0][quality] == 1  # Excellent
    assert monitor.decode({"voc": 200, "pm25": 60, "pm10": 20})[0][quality] == 4  # pm25 above 55: Inferior
    assert monitor.decode({"voc": 9000, "pm25": 10, "pm10": 20})[0][quality] == 5  # voc above 8332: Poor
    # A reading beyond HAP's 0..1000 is clamped (and said once), the verdict made from the reading itself.
    values, clamped = monitor.decode({"voc": 9000})
    assert values[ref("air_quality", "VOCDensity")] == 1000 and clamped == [ref("air_quality", "VOCDensity")]


def test_8750001213_a_voc_range_of_the_devices_own_is_declared():
    twinguard, _ = documented("8750001213")  # Bosch: voc 0..50 000
    assert declared(twinguard, "air_quality", "VOCDensity")["metadata"] == {"max_value": 50000.0}


def test_RTCZCGQ11LM_presence_is_an_occupancy_sensor():
    fp1, ref = documented("RTCZCGQ11LM")
    assert layout(fp1)[0] == ("OccupancySensor", "presence", ["OccupancyDetected"])
    assert fp1.decode({"presence": True})[0][ref("presence", "OccupancyDetected")] == 1
    assert fp1.decode({"presence": False})[0][ref("presence", "OccupancyDetected")] == 0
    # Its region_*_enter actions are patterns, not values: no buttons.
    assert not [s for s in fp1.accessory["services"] if s["type"] == "StatelessProgrammableSwitch"]


def test_HS1CG_gas_detector_is_a_leak_sensor():
    detector, ref = documented("HS1CG")  # gas, battery_low, tamper
    assert layout(detector) == [("LeakSensor", "gas", ["LeakDetected", "StatusTampered", "StatusLowBattery"])]
    assert detector.decode({"gas": True})[0][ref("gas", "LeakDetected")] == 1
    assert detector.accessory["services"][0]["name"] == "HS1CG Gas"


def test_E1766_blind_remote_has_open_close_and_stop_buttons():
    remote, ref = documented("E1766")
    buttons = [s["key"] for s in remote.accessory["services"] if s["type"] == "StatelessProgrammableSwitch"]
    assert buttons == ["button_open", "button_close", "button_stop"]
    assert remote.events({"action": "stop"}) == [(ref("button_stop", "ProgrammableSwitchEvent"), 0)]


def test_LED1624G9_colour_light_with_only_xy_takes_hue_and_saturation_as_xy():
    """IKEA's colour bulb takes colour as x and y only: Hue and Saturation
    are writable, written as the xy they make, and read back from it."""
    bulb, ref = documented("LED1624G9")
    hue, saturation = ref("light", "Hue"), ref("light", "Saturation")
    assert declared(bulb, "light", "Hue") == {"type": "Hue"}  # writable, as the catalog's
    payload = bulb.payload({hue: 240, saturation: 100})
    assert set(payload) == {"color"} and set(payload["color"]) == {"x", "y"}
    back, _ = bulb.decode(payload)
    assert abs(back[hue] - 240) <= 1 and abs(back[saturation] - 100) <= 1
    # A hue alone takes the saturation the bulb has.
    payload = bulb.payload({hue: 120}, {saturation: 50})
    assert abs(xy_to_hs(payload["color"]["x"], payload["color"]["y"])[0] - 120) <= 1
    with pytest.raises(ValueError, match="Saturation is not known yet"):
        bulb.payload({hue: 120})
