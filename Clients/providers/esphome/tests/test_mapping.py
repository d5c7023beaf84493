"""The entity → HAP mapping (no I/O), on aioesphomeapi's own models, and the
configuration and credentials files."""

import os

import pytest
from aioesphomeapi import api_pb2
from aioesphomeapi import model as m
from google.protobuf import json_format

from homed.refs import Ref
from homed_esphome.mapping import MISSING, air_quality, command_for, confirms, map_device
from homed_esphome.service import read_config, read_credentials

from .esp_helpers import definition

INFO = m.DeviceInfo(name="dev", friendly_name="Dev", mac_address="aa:bb:cc:00:11:22", esphome_version="2025.6.0-dev")
KEY = "AA:BB:CC:00:11:22"

INFO_OF = {"ListEntitiesSensorResponse": m.SensorInfo, "ListEntitiesBinarySensorResponse": m.BinarySensorInfo,
           "ListEntitiesSwitchResponse": m.SwitchInfo, "ListEntitiesLightResponse": m.LightInfo,
           "ListEntitiesClimateResponse": m.ClimateInfo, "ListEntitiesCoverResponse": m.CoverInfo,
           "ListEntitiesLockResponse": m.LockInfo, "ListEntitiesButtonResponse": m.ButtonInfo,
           "ListEntitiesEventResponse": m.EventInfo, "ListEntitiesTextSensorResponse": m.TextSensorInfo}


def from_definition():
    data = definition()
    info = m.DeviceInfo.from_pb(json_format.ParseDict(data["device_info"], api_pb2.DeviceInfoResponse()))
    entities = [INFO_OF[e["type"]].from_pb(json_format.ParseDict(e["fields"], getattr(api_pb2, e["type"])()))
                for e in data["entities"]]
    return info, entities


def services(dm):
    return {s["key"]: (s["type"], [c["type"] for c in s["characteristics"]]) for s in dm.accessory["services"]}


def test_the_generated_device_maps_to_one_accessory_keyed_by_its_mac():
    dm = map_device(*from_definition())
    assert dm.key == "AA:BB:CC:DD:EE:FF" and dm.accessory["serial_number"] == dm.key
    assert dm.accessory["name"] == "Test Device" and dm.accessory["room"] == "Living Room"
    got = services(dm)
    assert got["light_rgbww_light"] == ("Lightbulb", ["On", "Brightness", "Hue", "Saturation", "ColorTemperature"])
    assert got["switch_relay_1"] == ("Outlet", ["On", "OutletInUse"])
    assert got["cover_living_room_blind"][1] == ["CurrentPosition", "TargetPosition", "PositionState",
                                                 "CurrentHorizontalTiltAngle", "TargetHorizontalTiltAngle",
                                                 "HoldPosition"]
    assert got["event_doorbell"] == ("StatelessProgrammableSwitch", ["ProgrammableSwitchEvent"])
    assert dm.left_out == ["text_sensor 'uptime_text' (an entity type this provider does not map)"]
    assert sum(1 for s in dm.accessory["services"] if s.get("primary")) == 1
    light = next(s for s in dm.accessory["services"] if s["key"] == "light_rgbww_light")
    temperature = next(c for c in light["characteristics"] if c["type"] == "ColorTemperature")
    assert temperature["metadata"] == {"min_value": 153.0, "max_value": 500.0}


@pytest.mark.parametrize("device_class, service, characteristic, on, off", [
    ("door", "ContactSensor", "ContactSensorState", 1, 0),
    ("window", "ContactSensor", "ContactSensorState", 1, 0),
    ("motion", "MotionSensor", "MotionDetected", True, False),
    ("occupancy", "OccupancySensor", "OccupancyDetected", 1, 0),
    ("moisture", "LeakSensor", "LeakDetected", 1, 0),
    ("smoke", "SmokeSensor", "SmokeDetected", 1, 0),
    ("gas", "LeakSensor", "LeakDetected", 1, 0),
    ("carbon_monoxide", "CarbonMonoxideSensor", "CarbonMonoxideDetected", 1, 0),
])
def test_binary_sensors_by_device_class(device_class, service, characteristic, on, off):
    dm = map_device(INFO, [m.BinarySensorInfo(object_id="b", key=1, name="B", device_class=device_class)])
    assert services(dm) == {"binary_sensor_b": (service, [characteristic])}
    ref = Ref(KEY, "binary_sensor_b", characteristic)
    assert dm.values({1: m.BinarySensorState(key=1, state=True)}) == {ref: on}
    assert dm.values({1: m.BinarySensorState(key=1, state=False)}) == {ref: off}
    assert dm.values({1: m.BinarySensorState(key=1, missing_state=True)}) == {}


def test_what_has_no_hap_service_is_left_out_and_the_rest_kept():
    dm = map_device(INFO, [m.BinarySensorInfo(object_id="b", key=1, device_class="power"),
                           m.SensorInfo(object_id="watts", key=2, device_class="power"),
                           m.LockInfo(object_id="safe", key=3, requires_code=True),
                           m.NumberInfo(object_id="n", key=4),
                           m.SwitchInfo(object_id="relay", key=5)])
    assert services(dm) == {"switch_relay": ("Switch", ["On"])}
    assert dm.left_out == ["binary_sensor 'b' (device class 'power': no HAP sensor for it)",
                           "lock 'safe' (it needs a code, which HAP has no way to give)",
                           "number 'n' (an entity type this provider does not map)",
                           "sensor 'watts' (device class 'power': no HAP sensor for it)"]
    assert dm.accessory["category"] == "SWITCH"


@pytest.mark.parametrize("modes, characteristics", [
    ([m.ColorMode.ON_OFF], ["On"]),
    ([m.ColorMode.BRIGHTNESS], ["On", "Brightness"]),
    ([m.ColorMode.RGB], ["On", "Brightness", "Hue", "Saturation"]),
    ([m.ColorMode.COLOR_TEMPERATURE], ["On", "Brightness", "ColorTemperature"]),
])
def test_a_light_by_its_color_modes(modes, characteristics):
    dm = map_device(INFO, [m.LightInfo(object_id="l", key=1, supported_color_modes=modes, min_mireds=153,
                                       max_mireds=370)])
    assert services(dm)["light_l"] == ("Lightbulb", characteristics)


def test_light_values_and_one_command_for_on_and_brightness():
    dm = map_device(INFO, [m.LightInfo(object_id="l", key=7, supported_color_modes=[m.ColorMode.RGB])])
    state = m.LightState(key=7, state=True, brightness=0.404, red=0.0, green=0.0, blue=1.0)
    values = dm.values({7: state})
    assert values[Ref(KEY, "light_l", "Brightness")] == 40
    assert values[Ref(KEY, "light_l", "Hue")] == 240.0 and values[Ref(KEY, "light_l", "Saturation")] == 100.0
    on, bright = dm.bindings[Ref(KEY, "light_l", "On")], dm.bindings[Ref(KEY, "light_l", "Brightness")]
    assert command_for([(on, True), (bright, 25)], {7: state}) == {
        7: ("light_command", {"key": 7, "state": True, "brightness": 0.25})}
    # A hue written alone keeps the saturation the light has.
    hue = dm.bindings[Ref(KEY, "light_l", "Hue")]
    half = m.LightState(key=7, red=1.0, green=0.5, blue=0.5)  # saturation 50 %
    assert command_for([(hue, 120)], {7: half})[7][1]["rgb"] == (0.5, 1.0, 0.5)
    assert confirms(bright, 25, m.LightState(key=7, brightness=0.26)) is True  # within the 1 % it rounds to
    assert confirms(bright, 25, m.LightState(key=7, brightness=0.3)) is False


def test_sensors_by_device_class_with_units():
    dm = map_device(INFO, [m.SensorInfo(object_id="t", key=1, device_class="temperature", unit_of_measurement="°F"),
                           m.SensorInfo(object_id="pm", key=2, device_class="pm25"),
                           m.SensorInfo(object_id="co2", key=3, device_class="carbon_dioxide"),
                           m.SensorInfo(object_id="lux", key=4, device_class="illuminance")])
    values = dm.values({1: m.SensorState(key=1, state=68.0), 2: m.SensorState(key=2, state=40.0),
                        3: m.SensorState(key=3, state=1200.0), 4: m.SensorState(key=4, missing_state=True)})
    assert values == {Ref(KEY, "sensor_t", "CurrentTemperature"): 20.0,
                      Ref(KEY, "sensor_pm", "AirQuality"): 3, Ref(KEY, "sensor_pm", "PM2.5Density"): 40.0,
                      Ref(KEY, "sensor_co2", "CarbonDioxideDetected"): 1,
                      Ref(KEY, "sensor_co2", "CarbonDioxideLevel"): 1200.0}
    assert [air_quality(v) for v in (5, 12.1, 35.4, 100, 500)] == [1, 2, 2, 4, 5]


def test_a_cover_target_only_when_idle_and_a_lock():
    dm = map_device(INFO, [m.CoverInfo(object_id="c", key=1, supports_position=True),
                           m.LockInfo(object_id="door", key=2)])
    moving = m.CoverState(key=1, position=0.3, current_operation=m.CoverOperation.IS_OPENING)
    values = dm.values({1: moving, 2: m.LockEntityState(key=2, state=m.LockState.UNLOCKING)})
    assert values[Ref(KEY, "cover_c", "CurrentPosition")] == 30
    assert values[Ref(KEY, "cover_c", "PositionState")] == 1
    assert Ref(KEY, "cover_c", "TargetPosition") not in values
    assert values[Ref(KEY, "lock_door", "LockTargetState")] == 0
    target = dm.bindings[Ref(KEY, "lock_door", "LockTargetState")]
    assert command_for([(target, 1)], {}) == {2: ("lock_command", {"key": 2, "command": m.LockCommand.LOCK})}


def test_event_types_as_presses_and_the_others_left_out():
    dm = map_device(INFO, [m.EventInfo(object_id="e", key=1, event_types=["single", "long_press", "triple"]),
                           m.EventInfo(object_id="x", key=2, event_types=["opened"])])
    service = next(s for s in dm.accessory["services"] if s["key"] == "event_e")
    assert service["characteristics"] == [{"type": "ProgrammableSwitchEvent", "metadata": {"valid_values": [0, 2]}}]
    binding = dm.bindings[Ref(KEY, "event_e", "ProgrammableSwitchEvent")]
    assert binding.event and binding.decode(m.Event(key=1, event_type="long_press")) == 2
    assert binding.decode(m.Event(key=1, event_type="triple")) is MISSING
    assert dm.left_out == ["event 'e''s types triple (not a single, double or long press)",
                           "event 'x' (event types opened: none is a single, double or long press)"]
    assert dm.values({1: m.Event(key=1, event_type="single")}) == {}  # a press is told, never a value


def test_firmware_revision_is_numbers_only():
    assert map_device(INFO, []).accessory["firmware_revision"] == "2025.6.0"
    assert map_device(m.DeviceInfo(mac_address="aa", project_version="v1"), []).accessory["firmware_revision"] == "0"


def test_credentials_must_be_private_and_name_each_device(tmp_path):
    secret = tmp_path / "credentials"
    secret.write_text("# keys\nkitchen = abc=\nkitchen.password = pw\n")
    os.chmod(secret, 0o644)
    with pytest.raises(PermissionError, match="readable by others"):
        read_credentials(str(secret))
    os.chmod(secret, 0o600)
    credentials = read_credentials(str(secret))
    assert credentials == {"kitchen": {"noise_psk": "abc=", "password": "pw"}}
    config = tmp_path / "esphome.toml"
    config.write_text('[[device]]\nname = "kitchen"\nhost = "10.0.0.5"\n[[device]]\nhost = "10.0.0.6"\nport = 6054\n')
    devices = read_config(str(config), credentials)
    assert [(d.name, d.host, d.port, d.noise_psk) for d in devices] == [("kitchen", "10.0.0.5", 6053, "abc="),
                                                                        ("10.0.0.6", "10.0.0.6", 6054, None)]
    config.write_text('[[device]]\nname = "hall"\nhost = "10.0.0.7"\nencryption = true\n')
    with pytest.raises(ValueError, match="no key for it"):
        read_config(str(config), credentials)


def test_the_benchmarks_climate_as_a_thermostat():
    info, entities = from_definition()
    climate = [e for e in entities if isinstance(e, m.ClimateInfo)]
    dm = map_device(info, climate)
    service = dm.accessory["services"][0]
    by_type = {c["type"]: c for c in service["characteristics"]}
    assert service["type"] == "Thermostat"
    assert by_type["TargetTemperature"]["metadata"] == {"min_value": 10.0, "max_value": 32.0, "step_value": 0.5}
    assert by_type["TargetHeatingCoolingState"]["metadata"] == {"valid_values": [0, 1, 2, 3]}
    assert by_type["TemperatureDisplayUnits"]["properties"] == {"readable": True, "supports_event_notification": True}
    state = m.ClimateState(key=climate[0].key, mode=m.ClimateMode.COOL, action=m.ClimateAction.COOLING,
                           current_temperature=25.0, target_temperature=23.0)
    values = {ref.characteristic: v for ref, v in dm.values({climate[0].key: state}).items()}
    assert values == {"CurrentTemperature": 25.0, "TargetTemperature": 23.0, "TargetHeatingCoolingState": 2,
                      "CurrentHeatingCoolingState": 2, "TemperatureDisplayUnits": 0}
    mode = dm.bindings[Ref(dm.key, service["key"], "TargetHeatingCoolingState")]
    assert command_for([(mode, 3)], {})[climate[0].key] == ("climate_command",
                                                           {"key": climate[0].key, "mode": m.ClimateMode.HEAT_COOL})
