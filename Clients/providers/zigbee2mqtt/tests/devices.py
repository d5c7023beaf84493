"""Device definitions as Zigbee2MQTT publishes them on `bridge/devices`: the
devices the end-to-end tests run with are taken from the corpus made from
Zigbee2MQTT's own device pages (tests/corpus), never written by hand; the
helpers below build the odd entries a test needs of its own (a re-interview
into a light, a device that joins, bad input), in Zigbee2MQTT's exposes format
(`access` bits 1 published, 2 settable, 4 gettable; endpoints as
`"endpoint": "l1"` with property `state_l1`)."""

import copy

from .corpus_coverage import by_model

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


def numeric(name, unit="", low=None, high=None, access=1):
    entry = {"type": "numeric", "name": name, "property": name, "unit": unit, "access": access}
    if low is not None:
        entry["value_min"] = low
    if high is not None:
        entry["value_max"] = high
    return entry


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


def from_corpus(n, name, model, vendor=None, **extra):
    """A device as Zigbee2MQTT documents it (tests/corpus/devices-N.json, made from
    its device pages), under this test's address and friendly name."""
    definition = copy.deepcopy(by_model(model, vendor)["definition"])
    entry = {"ieee_address": f"0x00124b00{n:08x}", "friendly_name": name, "type": "EndDevice", "network_address": n,
             "supported": True, "interview_completed": True, "disabled": False, "definition": definition}
    entry.update(extra)
    return entry


DEVICES = [
    # lights
    from_corpus(1, "kitchen/ceiling", "LED1545G12"),  # white spectrum, 250..454 mireds
    from_corpus(2, "Living Hue", "9290012573A"),  # colour (hs and xy) and white
    from_corpus(3, "Desk strip", "GL-C-008P"),
    from_corpus(4, "Hall dimmer", "ZNLDP12LM"),
    from_corpus(5, "Porch light", "HLQDQ01LM"),  # a dimmer: state and brightness
    # plugs and switches
    from_corpus(6, "Coffee plug", "E1603/E1702/E1708"),  # "control outlet"
    from_corpus(7, "Washer plug", "SP 120"),  # power, energy
    from_corpus(8, "Stairs 2-gang", "X712A"),  # endpoints l1, l2
    from_corpus(9, "Garage 3-gang", "X713A"),  # l1, l2, l3
    from_corpus(10, "Fan relay", "ZBMINI"),
    # covers
    from_corpus(11, "Bedroom blind", "E1757"),
    from_corpus(12, "Office venetian", "TS0301"),  # position and tilt
    # lock
    from_corpus(13, "Front door", "YRD426NRSC"),
    # thermostat (and a child lock)
    from_corpus(14, "Radiator", "SPZB0001"),
    # sensors
    from_corpus(15, "Window contact", "MCCGQ11LM"),  # contact: value_on false, value_off true
    from_corpus(16, "Door contact", "SNZB-04"),
    from_corpus(17, "Hall motion", "07047L"),  # occupancy, illuminance_lux and raw illuminance, none gettable
    from_corpus(18, "Attic motion", "SNZB-03"),
    from_corpus(19, "Sink leak", "SJCGQ11LM"),
    from_corpus(20, "Kitchen smoke", "HS1SA"),
    from_corpus(21, "Boiler CO", "HS1CA-E"),
    from_corpus(22, "Bedroom climate", "WSDCGQ11LM"),  # temperature, humidity, pressure
    from_corpus(23, "Office air", "KQJCMB11LM"),  # temperature, humidity, pm25, co2
    from_corpus(24, "Shelf vibration", "DJT11LM"),
    # remotes
    from_corpus(25, "Living remote", "E1524/E1810"),
    from_corpus(26, "Bedside button", "WXKG11LM"),
    from_corpus(27, "Wall remote", "WXKG02LM_rev2"),
]

#: A device Zigbee2MQTT does not support, one whose interview is not done, and
#: one with only exposes this provider does not know.
UNSUPPORTED = [
    dict(device(40, "Mystery", "unknown", "unknown", "", []), supported=False, definition=None),
    from_corpus(41, "Half joined", "E1603/E1702/E1708", interview_completed=False),
    device(42, "Strange gadget", "X1", "Acme", "Gadget", [{"type": "hologram", "name": "beam", "property": "beam"}]),
]


def bridge_devices(devices=None):
    return [COORDINATOR] + list(DEVICES if devices is None else devices) + UNSUPPORTED
