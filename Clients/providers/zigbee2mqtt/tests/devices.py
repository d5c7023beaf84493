"""Device definitions as Zigbee2MQTT publishes them on `bridge/devices`,
written from its documented exposes format (types light/switch/cover/lock/
climate and the generic binary/numeric/enum features; `access` bits 1
published, 2 settable, 4 gettable; endpoints as `"endpoint": "l1"` with
property `state_l1`)."""

ON_OFF = {"type": "binary", "name": "state", "property": "state", "value_on": "ON", "value_off": "OFF",
          "value_toggle": "TOGGLE", "access": 7}


def state(endpoint=None):
    if endpoint is None:
        return dict(ON_OFF)
    return dict(ON_OFF, property=f"state_{endpoint}", endpoint=endpoint)


def brightness(low=0, high=254):
    return {"type": "numeric", "name": "brightness", "property": "brightness", "value_min": low, "value_max": high,
            "access": 7}


def color_temp(low=150, high=500):
    return {"type": "numeric", "name": "color_temp", "property": "color_temp", "value_min": low, "value_max": high,
            "unit": "mired", "access": 7}


COLOR_XY = {"type": "composite", "name": "color_xy", "property": "color", "access": 7, "features": [
    {"type": "numeric", "name": "x", "property": "x", "access": 7},
    {"type": "numeric", "name": "y", "property": "y", "access": 7}]}
COLOR_HS = {"type": "composite", "name": "color_hs", "property": "color", "access": 7, "features": [
    {"type": "numeric", "name": "hue", "property": "hue", "access": 7},
    {"type": "numeric", "name": "saturation", "property": "saturation", "access": 7}]}
LINKQUALITY = {"type": "numeric", "name": "linkquality", "property": "linkquality", "value_min": 0, "value_max": 255,
               "unit": "lqi", "access": 1}


def binary(name, value_on=True, value_off=False):
    return {"type": "binary", "name": name, "property": name, "value_on": value_on, "value_off": value_off,
            "access": 1}


def numeric(name, unit="", low=None, high=None, access=1):
    entry = {"type": "numeric", "name": name, "property": name, "unit": unit, "access": access}
    if low is not None:
        entry["value_min"] = low
    if high is not None:
        entry["value_max"] = high
    return entry


BATTERY = numeric("battery", "%", 0, 100)


def device(n, name, model, vendor, description, exposes, **extra):
    entry = {"ieee_address": f"0x00124b00{n:08x}", "friendly_name": name, "type": "EndDevice", "network_address": n,
             "supported": True, "interview_completed": True, "disabled": False,
             "definition": {"model": model, "vendor": vendor, "description": description, "exposes": exposes}}
    entry.update(extra)
    return entry


def ieee(n):
    return f"0x00124b00{n:08x}"


COORDINATOR = {"ieee_address": "0x00124b0000000000", "friendly_name": "Coordinator", "type": "Coordinator",
               "network_address": 0, "supported": False, "interview_completed": True, "definition": None}

DEVICES = [
    # lights
    device(1, "kitchen/ceiling", "LED1545G12", "IKEA", "TRADFRI bulb E27, white spectrum",
           [{"type": "light", "features": [state(), brightness(), color_temp(250, 454)]}, LINKQUALITY]),
    device(2, "Living Hue", "9290012573A", "Philips", "Hue white and color ambiance E27",
           [{"type": "light", "features": [state(), brightness(), color_temp(153, 500), COLOR_XY]}, LINKQUALITY]),
    device(3, "Desk strip", "GL-C-008", "Gledopto", "Zigbee LED controller RGB+CCT",
           [{"type": "light", "features": [state(), brightness(1, 254), COLOR_HS]}]),
    device(4, "Hall dimmer", "ZNLDP12LM", "Xiaomi", "Aqara smart LED bulb",
           [{"type": "light", "features": [state(), brightness(0, 100)]}]),
    device(5, "Porch light", "HGZB-01A", "Smart Home Pty", "Light controller",
           [{"type": "light", "features": [state()]}]),
    # plugs and switches
    device(6, "Coffee plug", "E1603", "IKEA", "TRADFRI control outlet",
           [{"type": "switch", "features": [state()]}, LINKQUALITY]),
    device(7, "Washer plug", "SP 120", "innr", "Smart plug",
           [{"type": "switch", "features": [state()]}, numeric("power", "W"), numeric("energy", "kWh")]),
    device(8, "Stairs 2-gang", "QBKG03LM", "Xiaomi", "Aqara double key wired wall switch",
           [{"type": "switch", "endpoint": "l1", "features": [state("l1")]},
            {"type": "switch", "endpoint": "l2", "features": [state("l2")]}]),
    device(9, "Garage 3-gang", "TS0013", "TuYa", "Smart light switch - 3 gang without neutral wire",
           [{"type": "switch", "endpoint": "l1", "features": [state("l1")]},
            {"type": "switch", "endpoint": "l2", "features": [state("l2")]},
            {"type": "switch", "endpoint": "l3", "features": [state("l3")]}]),
    device(10, "Fan relay", "ZBMINI", "SONOFF", "Zigbee two way smart switch",
           [{"type": "switch", "features": [state()]}]),
    # covers
    device(11, "Bedroom blind", "E1757", "IKEA", "FYRTUR roller blind",
           [{"type": "cover", "features": [
               {"type": "enum", "name": "state", "property": "state", "values": ["OPEN", "CLOSE", "STOP"], "access": 3},
               {"type": "numeric", "name": "position", "property": "position", "value_min": 0, "value_max": 100,
                "access": 7}]}, BATTERY]),
    device(12, "Office venetian", "ZNJLBL01LM", "Xiaomi", "Aqara roller shade",
           [{"type": "cover", "features": [
               {"type": "enum", "name": "state", "property": "state", "values": ["OPEN", "CLOSE", "STOP"], "access": 3},
               {"type": "numeric", "name": "position", "property": "position", "value_min": 0, "value_max": 100,
                "access": 7},
               {"type": "numeric", "name": "tilt", "property": "tilt", "value_min": 0, "value_max": 100, "access": 7}]},
            {"type": "enum", "name": "moving", "property": "moving", "values": ["UP", "STOP", "DOWN"], "access": 1}]),
    # lock
    device(13, "Front door", "YRD426NRSC", "Yale", "Assure lock",
           [{"type": "lock", "features": [
               {"type": "binary", "name": "state", "property": "state", "value_on": "LOCK", "value_off": "UNLOCK",
                "access": 7},
               {"type": "enum", "name": "lock_state", "property": "lock_state",
                "values": ["not_fully_locked", "locked", "unlocked"], "access": 1}]}, BATTERY]),
    # thermostat
    device(14, "Radiator", "SPZB0001", "Eurotronic", "Spirit Zigbee wireless heater thermostat",
           [{"type": "climate", "features": [
               {"type": "numeric", "name": "occupied_heating_setpoint", "property": "occupied_heating_setpoint",
                "value_min": 5, "value_max": 30, "value_step": 0.5, "unit": "°C", "access": 7},
               {"type": "numeric", "name": "local_temperature", "property": "local_temperature", "unit": "°C",
                "access": 5},
               {"type": "enum", "name": "system_mode", "property": "system_mode", "values": ["off", "auto", "heat"],
                "access": 7},
               {"type": "enum", "name": "running_state", "property": "running_state", "values": ["idle", "heat"],
                "access": 5}]}, BATTERY]),
    # sensors
    device(15, "Window contact", "MCCGQ11LM", "Xiaomi", "Aqara door & window contact sensor",
           [binary("contact"), BATTERY, numeric("voltage", "mV"), numeric("device_temperature", "°C")]),
    device(16, "Door contact", "SNZB-04", "SONOFF", "Contact sensor",
           [binary("contact"), binary("battery_low"), binary("tamper"), BATTERY]),
    device(17, "Hall motion", "RTCGQ11LM", "Xiaomi", "Aqara human body movement and illuminance sensor",
           [binary("occupancy"), numeric("illuminance_lux", "lx"), numeric("illuminance", "lx"), BATTERY]),
    device(18, "Attic motion", "SNZB-03", "SONOFF", "Motion sensor",
           [binary("occupancy"), binary("battery_low"), binary("tamper")]),
    device(19, "Sink leak", "SJCGQ11LM", "Xiaomi", "Aqara water leak sensor",
           [binary("water_leak"), binary("battery_low"), BATTERY]),
    device(20, "Kitchen smoke", "JTYJ-GD-01LM/BW", "Xiaomi", "MiJia Honeywell smoke detector",
           [binary("smoke"), binary("battery_low"), BATTERY]),
    device(21, "Boiler CO", "HS1CA-E", "HEIMAN", "Carbon monoxide sensor",
           [binary("carbon_monoxide"), binary("battery_low"), BATTERY]),
    device(22, "Bedroom climate", "WSDCGQ11LM", "Xiaomi", "Aqara temperature, humidity and pressure sensor",
           [numeric("temperature", "°C"), numeric("humidity", "%"), numeric("pressure", "hPa"), BATTERY]),
    device(23, "Office air", "SRAC-23B-ZBSR", "Develco", "Air quality sensor",
           [numeric("temperature", "°C"), numeric("humidity", "%"), numeric("co2", "ppm")]),
    device(24, "Shelf vibration", "DJT11LM", "Xiaomi", "Aqara vibration sensor",
           [binary("vibration"), BATTERY]),
    device(25, "Living remote", "E1524/E1810", "IKEA", "TRADFRI remote control",
           [{"type": "enum", "name": "action", "property": "action", "access": 1, "values": [
               "toggle", "toggle_hold", "brightness_up_click", "brightness_up_hold", "brightness_up_release",
               "brightness_down_click", "brightness_down_hold", "brightness_down_release", "arrow_left_click",
               "arrow_left_hold", "arrow_left_release", "arrow_right_click", "arrow_right_hold",
               "arrow_right_release"]}, BATTERY]),
    device(26, "Bedside button", "WXKG11LM", "Xiaomi", "Aqara wireless mini switch",
           [{"type": "enum", "name": "action", "property": "action", "access": 1,
             "values": ["single", "double", "triple", "quadruple", "hold", "release"]}, BATTERY]),
    device(27, "Wall remote", "WXKG02LM", "Xiaomi", "Aqara double key wireless wall switch",
           [{"type": "enum", "name": "action", "property": "action", "access": 1,
             "values": ["single_left", "single_right", "single_both", "double_left", "double_right",
                        "hold_left", "hold_right"]}, BATTERY]),
]

#: A device Zigbee2MQTT does not support, one whose interview is not done, and
#: one with only exposes this provider does not know.
UNSUPPORTED = [
    dict(device(40, "Mystery", "unknown", "unknown", "", []), supported=False, definition=None),
    dict(device(41, "Half joined", "E1603", "IKEA", "TRADFRI control outlet",
                [{"type": "switch", "features": [state()]}]), interview_completed=False),
    device(42, "Strange gadget", "X1", "Acme", "Gadget", [{"type": "hologram", "name": "beam", "property": "beam"}]),
]


def bridge_devices(devices=None):
    return [COORDINATOR] + list(DEVICES if devices is None else devices) + UNSUPPORTED
