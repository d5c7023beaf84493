"""Sensors as HAP services, with no I/O: binary and numeric exposes with a
HAP counterpart become sensor services; the air readings one air quality
sensor; `battery` a BatteryService; and `tamper`, `battery_low` and
`pressure` join the sensor services the others made."""

from __future__ import annotations

from typing import List

from homed.refs import Ref

from .binding import Binding
from .builder import CATALOG, Builder, binary_values, gettable, num, two_way
from .air_quality import AIR_READINGS, air_quality
from .buttons import action

__all__ = ["generic", "attach", "PRESSURE_UUID", "KNOWN_TYPES"]

#: A custom characteristic for air pressure (HAP has none): a UUID of this
#: provider's own, hPa as Zigbee2MQTT reports it.
PRESSURE_UUID = "5B1E0F6A-3C2D-4E8F-9A7B-6C5D4E3F2A10"
PRESSURE_META = {"format": "float", "unit": "none", "min_value": 0.0, "max_value": 2000.0, "step_value": 0.1}

#: Exposes types this mapping knows (a feature of another type is logged as unknown).
KNOWN_TYPES = {"light", "switch", "cover", "lock", "climate", "fan", "binary", "numeric", "enum", "text",
               "composite", "list"}

#: Above this CO2 level (ppm) CarbonDioxideDetected says abnormal.
CO2_ABNORMAL_PPM = 1000
#: Without battery_low, a battery below this (percent) is low.
LOW_BATTERY_PERCENT = 20


# Binary sensors: name -> (service type, characteristic, HAP value at value_on, at value_off). Zigbee2MQTT's
# "on" is the state a sensor reports: a door contact is on when open (its value_on is false, "contact" false),
# and ContactSensorState 1 is ContactNotDetected.
BINARY_SENSORS = {
    "contact": ("ContactSensor", "ContactSensorState", 1, 0),
    "occupancy": ("MotionSensor", "MotionDetected", True, False),
    "presence": ("OccupancySensor", "OccupancyDetected", 1, 0),  # mmWave presence: someone is there, moving or not
    "vibration": ("MotionSensor", "MotionDetected", True, False),
    "moving": ("MotionSensor", "MotionDetected", True, False),  # a binary `moving`: a multi-sensor's own movement
    "water_leak": ("LeakSensor", "LeakDetected", 1, 0),
    "gas": ("LeakSensor", "LeakDetected", 1, 0),  # HAP has no gas detector: a gas leak is a leak
    "smoke": ("SmokeSensor", "SmokeDetected", 1, 0),
    "carbon_monoxide": ("CarbonMonoxideSensor", "CarbonMonoxideDetected", 1, 0),
}
# Numeric sensors: name -> (service type, characteristic)
NUMERIC_SENSORS = {
    "temperature": ("TemperatureSensor", "CurrentTemperature"),
    "humidity": ("HumiditySensor", "CurrentRelativeHumidity"),
    "illuminance": ("LightSensor", "CurrentAmbientLightLevel"),
    "illuminance_lux": ("LightSensor", "CurrentAmbientLightLevel"),
}
# Shown by name only in the debug log: diagnostics with no HAP counterpart.
QUIET = {"linkquality", "voltage", "power", "energy", "current", "update", "update_available", "power_on_behavior",
         "effect", "identify", "color_temp_startup", "level_config", "color_options", "child_lock", "local_time"}


def _binary_value(feature: dict, when_on, when_off):
    prop = feature["property"]
    on, off = binary_values(feature, True, False)
    return dict(props=(prop,), decode=two_way(prop, on, off, when_on, when_off), gettable=gettable(feature))


def generic(b: Builder, feature: dict, ignored: List[str], unknown: List[str], later: List[dict]) -> None:
    ftype, name, prop = feature.get("type"), feature.get("name"), feature.get("property")
    if ftype not in KNOWN_TYPES:
        unknown.append(f"{name or prop} (type {ftype!r})")
        return
    if not prop:
        ignored.append(str(name))
        return
    label = name.replace("_", " ").capitalize() if isinstance(name, str) else str(prop)
    key = prop
    if name == "moving" and ftype == "enum":
        return  # a cover's direction: its PositionState
    if ftype == "binary" and name in BINARY_SENSORS:
        stype, ctype, when_on, when_off = BINARY_SENSORS[name]
        service = b.service(stype, key, f"{b.name} {label}", sensor=True)
        b.bind(service, ctype, _binary_value(feature, when_on, when_off))
    elif ftype == "numeric" and name == "illuminance" and b.has_lux:
        ignored.append("illuminance (illuminance_lux is the one in lux)")
    elif ftype == "numeric" and name in NUMERIC_SENSORS:
        stype, ctype = NUMERIC_SENSORS[name]
        service = b.service(stype, key, f"{b.name} {label}", sensor=True)
        b.bind(service, ctype, dict(props=(prop,), decode=lambda s: num(s[prop]), bounds=CATALOG[ctype],
                                    gettable=gettable(feature)))
    elif ftype == "numeric" and name == "co2":
        service = b.service("CarbonDioxideSensor", key, f"{b.name} CO2", sensor=True)
        b.bind(service, "CarbonDioxideDetected",
               dict(props=(prop,), decode=lambda s: 1 if num(s[prop]) > CO2_ABNORMAL_PPM else 0))
        b.bind(service, "CarbonDioxideLevel", dict(props=(prop,), decode=lambda s: num(s[prop]),
                                                   bounds=CATALOG["CarbonDioxideLevel"], gettable=gettable(feature)))
    elif (name in ("pressure", "tamper", "battery", "battery_low") and ftype in ("numeric", "binary")
          or name in AIR_READINGS and ftype == "numeric" or name == "air_quality" and ftype == "enum"):
        if ftype == "binary":
            binary_values(feature, True, False)  # a bad one is left out here, with the others' log line
        later.append(feature)  # they join services made by the others, or make one together
    elif ftype == "enum" and name == "action":
        action(b, feature, ignored)
    else:
        ignored.append(str(name))



def attach(b: Builder, later: List[dict], ignored: List[str]) -> None:
    """What joins the services the others made, once they are all made: the
    air readings make one AirQualitySensor, the battery its BatteryService,
    and tamper, battery_low and pressure go on the sensor services."""
    air_quality(b, [f for f in later if f["name"] in AIR_READINGS],
                next((f for f in later if f["name"] == "air_quality"), None))
    battery = next((f for f in later if f["name"] == "battery"), None)
    battery_low = next((f for f in later if f["name"] == "battery_low"), None)
    if battery:
        prop = battery["property"]
        service = b.service("BatteryService", "battery", f"{b.name} Battery")
        b.bind(service, "BatteryLevel", dict(props=(prop,), decode=lambda s: num(s[prop]),
                                             bounds=CATALOG["BatteryLevel"], gettable=gettable(battery)))
        b.bind(service, "ChargingState", dict(props=(), decode=lambda s: 2))  # NotChargeable
        if battery_low:
            b.bind(service, "StatusLowBattery", _binary_value(battery_low, 1, 0))
        else:
            b.bind(service, "StatusLowBattery",
                   dict(props=(prop,), decode=lambda s: 1 if num(s[prop]) < LOW_BATTERY_PERCENT else 0))
    targets = [b.by_key(k) for k in b.sensor_keys]
    for name, ctype in (("tamper", "StatusTampered"), ("battery_low", "StatusLowBattery"), ("pressure", None)):
        feature = next((f for f in later if f["name"] == name), None)
        if feature is None:
            continue
        if not targets:
            if not (name == "battery_low" and battery):  # then on the BatteryService only
                ignored.append(f"{name} (no sensor service to carry it)")
            continue
        if ctype:
            # On every sensor service, battery or not: the Home app shows a
            # sensor's own status, not its accessory's battery's.
            for service in targets:
                b.bind(service, ctype, _binary_value(feature, 1, 0))
        else:
            _pressure(b, targets[0], feature)


def _pressure(b: Builder, service: dict, feature: dict) -> None:
    prop = feature["property"]
    ref = Ref(b.ieee, service["key"], "AirPressure")
    service["characteristics"].append({
        "type": PRESSURE_UUID, "type_name": "AirPressure",
        "properties": {"readable": True, "supports_event_notification": True}, "metadata": dict(PRESSURE_META)})
    b.bindings[ref] = Binding(ref=ref, props=(prop,), decode=lambda s: num(s[prop]),
                              bounds=(PRESSURE_META["min_value"], PRESSURE_META["max_value"], 0.1),
                              gettable=gettable(feature))
