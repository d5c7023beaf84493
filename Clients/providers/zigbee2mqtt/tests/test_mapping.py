"""The exposes -> HAP mapping, with no broker and no daemon."""

import pytest

from homed.refs import Ref

from . import devices
from .coordinator import INITIAL
from homed_z2m.mapping import PRESSURE_UUID, Unsupported, map_device, parse_action
from homed_z2m.values import fit, object_name, unscale, valid_name, xy_to_hs
from .corpus_coverage import by_model


def mapped(n):
    return map_device(next(d for d in devices.DEVICES if d["network_address"] == n))


def layout(dm):
    return [(s["type"], s["key"], [c.get("type_name") or c["type"] for c in s["characteristics"]])
            for s in dm.accessory["services"]]


def ref(n, service, characteristic):
    return Ref(devices.ieee(n), service, characteristic)


def documented(model, n=90):
    """A corpus device (Zigbee2MQTT's own definition of `model`) mapped."""
    return map_device(devices.from_corpus(n, model, model))


def test_every_documented_device_maps_and_the_unsupported_ones_say_why():
    assert len(devices.DEVICES) >= 25
    maps = [map_device(d) for d in devices.DEVICES]
    assert [m.accessory["key"] for m in maps] == [d["ieee_address"] for d in devices.DEVICES]
    assert all(m.accessory["services"] and m.accessory["services"][0]["primary"] for m in maps)
    reasons = {}
    for d in devices.UNSUPPORTED + [devices.COORDINATOR]:
        with pytest.raises(Unsupported) as caught:
            map_device(d)
        reasons[d["friendly_name"]] = str(caught.value)
    assert reasons == {
        "Mystery": "Zigbee2MQTT does not support it (no definition)",
        "Half joined": "its interview has not completed",
        "Strange gadget": "none of its exposes maps to a HAP service (unknown: beam (type 'hologram'))",
        "Coordinator": "the coordinator",
    }


def test_lights_scale_brightness_to_percent_and_colour_to_hue_and_saturation():
    hue = mapped(2)
    assert layout(hue) == [("Lightbulb", "light", ["On", "Brightness", "Hue", "Saturation", "ColorTemperature"])]
    values, clamped = hue.decode({"state": "ON", "brightness": 127, "color": {"x": 0.1355, "y": 0.0399}})
    assert values[ref(2, "light", "On")] is True and values[ref(2, "light", "Brightness")] == 50
    assert abs(values[ref(2, "light", "Hue")] - 240) <= 2 and values[ref(2, "light", "Saturation")] >= 95
    assert clamped == []
    # 0..254: 127 is 50 %, and 1 % is still on (a step above the minimum).
    assert mapped(4).decode({"brightness": 127})[0][ref(4, "light", "Brightness")] == 50
    strip = mapped(3)
    assert strip.payload({ref(3, "light", "Brightness"): 1}) == {"brightness": 3}
    assert strip.payload({ref(3, "light", "Brightness"): 100, ref(3, "light", "On"): False}) == \
        {"brightness": 254, "state": "OFF"}
    # A hue written alone carries the current saturation: a colour is set whole.
    current = {ref(3, "light", "Saturation"): 80}
    assert strip.payload({ref(3, "light", "Hue"): 120}, current) == {"color": {"hue": 120, "saturation": 80}}
    assert layout(mapped(5)) == [("Lightbulb", "light", ["On", "Brightness"])]
    # A state the definition does not name is no reading (not "off").
    assert ref(5, "light", "On") not in mapped(5).decode({"state": "TOGGLE"})[0]


def test_color_temperature_in_mireds_with_the_bulbs_own_range():
    """color_temp is ColorTemperature in mireds, declared with the bulb's own
    range whether narrower (250..454) or wider (153..555) than HAP's 140..500."""
    bulb = mapped(1)
    assert layout(bulb) == [("Lightbulb", "light", ["On", "Brightness", "ColorTemperature"])]
    declared = bulb.accessory["services"][0]["characteristics"][2]
    assert declared == {"type": "ColorTemperature", "metadata": {"min_value": 250.0, "max_value": 454.0}}
    assert bulb.decode({"color_temp": 300})[0][ref(1, "light", "ColorTemperature")] == 300
    assert bulb.payload({ref(1, "light", "ColorTemperature"): 370}) == {"color_temp": 370}
    assert not any(i.startswith("color_temp") for i in bulb.ignored)
    wide = map_device(devices.device(99, "wide range", "GL-C-008", "Gledopto", "a white-spectrum strip",
                                     [{"type": "light", "features": [devices.state(), devices.color_temp(153, 555)]}]))
    assert wide.accessory["services"][0]["characteristics"][1]["metadata"] == {"min_value": 153.0, "max_value": 555.0}


def test_switches_outlets_and_one_service_per_endpoint():
    assert layout(mapped(6)) == [("Outlet", "outlet", ["On", "OutletInUse"])]  # "control outlet"
    washer = mapped(7)
    assert washer.decode({"state": "ON", "power": 0})[0][ref(7, "outlet", "OutletInUse")] is False
    assert washer.decode({"state": "ON", "power": 12.5})[0][ref(7, "outlet", "OutletInUse")] is True
    gang = mapped(9)
    assert layout(gang) == [("Switch", f"switch_{e}", ["On"]) for e in ("l1", "l2", "l3")]
    values, _ = gang.decode(INITIAL["Garage 3-gang"])
    assert [values[ref(9, f"switch_{e}", "On")] for e in ("l1", "l2", "l3")] == [False, False, True]
    assert gang.payload({ref(9, "switch_l2", "On"): True}) == {"state_l2": "ON"}
    assert [s["name"] for s in mapped(8).accessory["services"]] == ["Stairs 2-gang L1", "Stairs 2-gang L2"]
    assert layout(mapped(10)) == [("Switch", "switch", ["On"])]


def test_covers_position_tilt_and_movement():
    blind = mapped(11)
    assert layout(blind)[0] == ("WindowCovering", "cover", ["CurrentPosition", "TargetPosition", "PositionState",
                                                             "HoldPosition"])
    values, _ = blind.decode({"position": 40})
    assert values[ref(11, "cover", "CurrentPosition")] == 40 and values[ref(11, "cover", "TargetPosition")] == 40
    assert blind.decode({})[0][ref(11, "cover", "PositionState")] == 2  # no "moving": a constant, stopped
    assert ref(11, "cover", "PositionState") not in values
    assert blind.payload({ref(11, "cover", "TargetPosition"): 75}) == {"position": 75}
    venetian = mapped(12)
    values, _ = venetian.decode({"position": 10, "tilt": 100})
    assert values[ref(12, "cover", "CurrentHorizontalTiltAngle")] == 90
    assert venetian.payload({ref(12, "cover", "TargetHorizontalTiltAngle"): -90}) == {"tilt": 0}
    # `moving` beside the cover is its PositionState.
    curtain = documented("QS-Zigbee-C01")
    values, _ = curtain.decode({"position": 10, "moving": "DOWN"})
    assert values[Ref(curtain.ieee, "cover", "PositionState")] == 0


def test_lock_target_current_and_jammed():
    lock = mapped(13)
    assert layout(lock)[0] == ("LockMechanism", "lock", ["LockCurrentState", "LockTargetState"])
    current, target = ref(13, "lock", "LockCurrentState"), ref(13, "lock", "LockTargetState")
    values = lock.decode({"state": "UNLOCK", "lock_state": "unlocked"})[0]
    assert (values[current], values[target]) == (0, 0)
    values = lock.decode({"state": "LOCK", "lock_state": "not_fully_locked"})[0]
    assert (values[current], values[target]) == (2, 1)
    assert lock.payload({target: 1}) == {"state": "LOCK"}


def test_thermostat_declares_the_devices_setpoint_range_and_modes():
    radiator = mapped(14)
    service = radiator.accessory["services"][0]
    by_type = {c["type"]: c for c in service["characteristics"]}
    # The valve's own 5..30, though the catalog's is 10..38: a 5 °C frost setting is real.
    assert by_type["TargetTemperature"]["metadata"] == {"min_value": 5.0, "max_value": 30.0}
    assert by_type["TargetHeatingCoolingState"]["metadata"] == {"valid_values": [0, 1, 3]}
    assert by_type["TemperatureDisplayUnits"]["properties"] == {"readable": True, "supports_event_notification": True}
    values, _ = radiator.decode(INITIAL["Radiator"])
    assert values[ref(14, "thermostat", "CurrentTemperature")] == 19.4  # 19.37 to the catalog's step 0.1
    assert values[ref(14, "thermostat", "TargetHeatingCoolingState")] == 1
    assert radiator.payload({ref(14, "thermostat", "TargetTemperature"): 21.3}) == {"occupied_heating_setpoint": 21.5}
    assert radiator.payload({ref(14, "thermostat", "TargetHeatingCoolingState"): 3}) == {"system_mode": "auto"}


def test_a_door_contact_reads_as_zigbee2mqtt_defines_it():
    """Zigbee2MQTT's door contact: "closed (= true) or open (= false)", with
    value_on false (on is open) and value_off true: true is closed, HAP's
    ContactDetected (0), false is open (1), anything else no reading."""
    window = mapped(15)
    contact = next(e for e in devices.DEVICES[14]["definition"]["exposes"] if e.get("name") == "contact")
    assert (contact["value_on"], contact["value_off"]) == (False, True)
    state = ref(15, "contact", "ContactSensorState")
    assert window.decode({"contact": True})[0][state] == 0
    assert window.decode({"contact": False})[0][state] == 1
    assert state not in window.decode({"contact": "open"})[0]
    assert state not in window.decode({"contact": 0})[0]  # 0 is not false here: no reading


def test_sensors_tamper_battery_and_pressure():
    contact = documented("HS1DS")  # contact, battery_low, tamper, battery
    key = contact.ieee
    assert layout(contact) == [("ContactSensor", "contact", ["ContactSensorState", "StatusTampered",
                                                             "StatusLowBattery"]),
                               ("BatteryService", "battery", ["BatteryLevel", "ChargingState", "StatusLowBattery"])]
    values, _ = contact.decode({"contact": True, "tamper": True, "battery_low": True, "battery": 5})
    assert values[Ref(key, "contact", "ContactSensorState")] == 0  # contact true: closed
    assert values[Ref(key, "contact", "StatusTampered")] == 1
    assert values[Ref(key, "battery", "StatusLowBattery")] == 1 and values[Ref(key, "contact", "StatusLowBattery")] == 1
    assert contact.decode({})[0] == {Ref(key, "battery", "ChargingState"): 2}  # NotChargeable
    # Without battery_low, low below 20 %.
    assert mapped(15).decode({"battery": 19})[0][ref(15, "battery", "StatusLowBattery")] == 1
    # Without a battery level, battery_low goes on the sensors.
    motion = documented("HS1MS-M")  # occupancy, battery_low, tamper
    assert layout(motion) == [("MotionSensor", "occupancy", ["MotionDetected", "StatusTampered", "StatusLowBattery"])]
    for n, stype in ((19, "LeakSensor"), (20, "SmokeSensor"), (21, "CarbonMonoxideSensor"), (24, "MotionSensor")):
        assert layout(mapped(n))[0][0] == stype
    climate = mapped(22)
    pressure = next(c for c in climate.accessory["services"][0]["characteristics"] if c["type"] == PRESSURE_UUID)
    assert pressure["type_name"] == "AirPressure" and pressure["metadata"]["format"] == "float"
    values, _ = climate.decode(INITIAL["Bedroom climate"])
    assert values[ref(22, "humidity", "CurrentRelativeHumidity")] == 52  # 51.92 on the catalog's step 1
    assert values[ref(22, "temperature", "AirPressure")] == 1012.4
    air = mapped(23)
    values, _ = air.decode({"co2": 1450})
    assert values[ref(23, "co2", "CarbonDioxideDetected")] == 1 and values[ref(23, "co2", "CarbonDioxideLevel")] == 1450
    motion = mapped(17)
    # illuminance_lux is the light level; the raw illuminance is left out.
    assert [s["key"] for s in motion.accessory["services"]] == ["occupancy", "temperature", "illuminance_lux",
                                                                 "humidity", "battery"]


def test_out_of_range_readings_are_clamped_and_said():
    motion = mapped(17)
    values, clamped = motion.decode({"illuminance_lux": 0, "battery": 130})
    assert values[ref(17, "illuminance_lux", "CurrentAmbientLightLevel")] == 0.0001
    assert values[ref(17, "battery", "BatteryLevel")] == 100
    assert set(clamped) == {ref(17, "illuminance_lux", "CurrentAmbientLightLevel"), ref(17, "battery", "BatteryLevel")}
    # Garbage in a value leaves that characteristic alone, not the others.
    values, _ = motion.decode({"illuminance_lux": "bright", "occupancy": True})
    assert values == {ref(17, "occupancy", "MotionDetected"): True}


def test_remotes_get_one_stateless_switch_per_button():
    remote = mapped(25)
    keys = [s["key"] for s in remote.accessory["services"] if s["type"] == "StatelessProgrammableSwitch"]
    assert keys == ["button_toggle", "button_brightness_up", "button_brightness_down", "button_arrow_left",
                    "button_arrow_right"]
    up = ref(25, "button_brightness_up", "ProgrammableSwitchEvent")
    assert remote.events({"action": "brightness_up_click"}) == [(up, 0)]
    assert remote.events({"action": "brightness_up_hold"}) == [(up, 2)]
    assert remote.events({"action": "brightness_up_release"}) == []
    assert remote.events({"action": ""}) == []
    button = mapped(26)
    main = ref(26, "button_main", "ProgrammableSwitchEvent")
    assert [button.events({"action": a}) for a in ("single", "double", "hold")] == [[(main, 0)], [(main, 1)],
                                                                                  [(main, 2)]]
    wall = mapped(27)
    assert wall.events({"action": "double_left"}) == [(ref(27, "button_left", "ProgrammableSwitchEvent"), 1)]
    switch = next(s for s in wall.accessory["services"] if s["key"] == "button_both")
    assert switch["characteristics"][0]["metadata"] == {"valid_values": [0, 1, 2]}
    # The 2016 model has single presses only: HAP is told so.
    older = documented("WXKG02LM_rev1")
    switch = next(s for s in older.accessory["services"] if s["key"] == "button_both")
    assert switch["characteristics"][0]["metadata"] == {"valid_values": [0]}
    assert parse_action("1_single") == ("1", 0) and parse_action("on") == ("on", 0)


def test_an_exposes_entry_it_cannot_read_is_left_out_whole():
    device = devices.device(50, "Odd", "X", "Y", "odd", [
        {"type": "light", "features": [{"type": "numeric", "name": "brightness", "property": "brightness"}]},
        {"type": "switch", "features": [devices.state()]},
        {"type": "laser", "name": "beam", "property": "beam"}])
    dm = map_device(device)
    assert layout(dm) == [("Switch", "switch", ["On"])]
    assert dm.unknown == ["light (a light without a state feature)", "beam (type 'laser')"]


def test_values_fit_the_catalog():
    assert fit(51.92, 0, 100, 1) == (52.0, False)
    assert fit(0, 0.0001, 100000, None) == (0.0001, True)
    assert fit(19.37, -273.1, 1000, 0.1) == (19.4, False)
    assert fit(101, 0, 100, 1) == (100, True)
    assert unscale(0, 0, 254) == 0 and unscale(100, 0, 254) == 254
    assert valid_name("kitchen/ceiling", "x") == "kitchen ceiling"
    assert valid_name("a\x01b", "x") == "a b"
    assert valid_name("é" * 40, "x") == "é" * 32
    assert valid_name("  ", "fallback") == "fallback"


def test_a_device_named_with_digits_alone_gets_a_name_homed_takes():
    """homed refuses names of digits alone (a PATH of digits is an id): the
    accessory and its services are "Device 50208702", not refused."""
    device = by_model("50208702", "Sunricher")
    assert device["friendly_name"] == "50208702"
    dm = map_device(device)
    assert dm.accessory["name"] == "Device 50208702"
    assert all(not s["name"].isdigit() for s in dm.accessory["services"])
    assert object_name("12", "x") == "Device 12" and object_name("12b", "x") == "12b"
    h, s = xy_to_hs(0.7006, 0.2993)  # red
    assert (h < 2 or h > 358) and s > 95
