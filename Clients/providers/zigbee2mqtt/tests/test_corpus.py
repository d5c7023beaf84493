"""The mapping against Zigbee2MQTT's own device documentation: every device of
tests/corpus/devices-N.json (made by tests/corpus/generate.py from the
zigbee2mqtt.io pages, never edited by hand) mapped with no broker and no
daemon, and the coverage kept from going down (tests/corpus/floor.json)."""

import importlib.util
import json
import re
from pathlib import Path

from . import corpus_coverage
from homed_z2m.mapping import MISSING, PRESSURE_UUID, Unsupported, map_device

HERE = Path(__file__).resolve().parent
FLOOR = HERE / "corpus" / "floor.json"


def _generator():
    spec = importlib.util.spec_from_file_location("z2m_corpus_generate", HERE / "corpus" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_corpus_is_the_generators_output_unedited():
    """Written as the script writes it (one device a line, keys sorted, in the
    script's order), each device once, from a recorded source commit."""
    generator = _generator()
    corpus, texts = generator.read(corpus_coverage.CORPUS)
    assert generator.render(corpus) == texts
    assert corpus == corpus_coverage.corpus()
    assert corpus["source"]["repository"] == "zigbee2mqtt.io" and len(corpus["source"]["commit"]) == 40
    keys = [d["ieee_address"] for d in corpus["devices"]]
    assert len(keys) == len(set(keys)) > 2000
    order = [(d["definition"]["vendor"].lower(), d["definition"]["model"].lower(), d["definition"]["model"])
             for d in corpus["devices"]]
    assert order == sorted(order)


# That the corpus is what zigbee2mqtt.io's pages give is checked with the pages at
# hand: python3 tests/corpus/generate.py --source DIR --rev REV --check.


def test_coverage_does_not_go_down(capsys):
    result = corpus_coverage.measure(corpus_coverage.corpus_devices(), map_device, Unsupported)
    floor = json.loads(FLOOR.read_text(encoding="utf-8"))
    numbers = result.as_dict()
    with capsys.disabled():
        print(f"\nZigbee2MQTT corpus: {numbers['devices']} devices, {numbers['registered']} registered with at "
              f"least one service; {numbers['left_out']} of {numbers['exposes']} exposes left out: "
              + ", ".join(f"{t} {n}" for t, n in numbers["left_out_by_type"].items()))
    assert numbers["devices"] >= floor["devices"]
    assert numbers["registered"] >= floor["registered"], numbers
    assert numbers["left_out"] <= floor["left_out"], numbers
    for etype, count in numbers["left_out_by_type"].items():
        assert count <= floor["left_out_by_type"].get(etype, 0), (etype, numbers)



def test_every_corpus_device_maps_or_says_why():
    """No corpus definition makes the mapping fail: each is registered or
    refused with a reason, and a registered one has a primary service."""
    for device in corpus_coverage.corpus_devices():
        try:
            dm = map_device(device)
        except Unsupported as why:
            assert str(why), device["definition"]["model"]
            continue
        services = dm.accessory["services"]
        assert services and services[0].get("primary") is True
        assert len({s["key"] for s in services}) == len(services), device["definition"]["model"]


#: What HAP says at a binary sensor's value_on, Zigbee2MQTT's "on": a door
#: contact is on when open (ContactSensorState 1, not detected), the others
#: when they detect.
HAP_AT_ON = {"ContactSensorState": 1, "MotionDetected": True, "OccupancyDetected": 1, "LeakDetected": 1,
             "SmokeDetected": 1, "CarbonMonoxideDetected": 1, "StatusTampered": 1, "StatusLowBattery": 1}


def test_every_binary_sensor_reads_value_on_and_value_off_as_defined():
    """For every binary expose of every corpus device bound to a sensor
    characteristic: value_on gives HAP's "on", value_off the other, and a
    value that is neither (the other's type, a string the device never
    sends) gives no reading."""
    checked = 0
    for device in corpus_coverage.corpus_devices():
        try:
            dm = map_device(device)
        except Unsupported:
            continue
        binaries = {e["property"]: e for e in device["definition"]["exposes"]
                    if e.get("type") == "binary" and "value_on" in e}
        for ref, binding in dm.bindings.items():
            if ref.characteristic not in HAP_AT_ON or binding.props[0] not in binaries:
                continue
            expose = binaries[binding.props[0]]
            prop, on, off = expose["property"], expose["value_on"], expose["value_off"]
            at_on, _ = binding.value({prop: on})
            at_off, _ = binding.value({prop: off})
            model = device["definition"]["model"]
            assert at_on == HAP_AT_ON[ref.characteristic], (model, ref, on)
            assert at_off not in (at_on, None) and at_off is not MISSING, (model, ref, off)
            for neither in ("sideways", 2, None):
                assert binding.value({prop: neither})[0] is MISSING, (model, ref, neither)
            checked += 1
    assert checked > 500


def test_parity_with_homebridge_z2m_does_not_go_down(capsys):
    """The share of corpus devices that get every HAP service and characteristic
    homebridge-z2m's device pages list (their committed extract,
    tests/corpus/homebridge-z2m.json) stays at least the committed floor."""
    spec = importlib.util.spec_from_file_location("z2m_parity", HERE / "corpus" / "parity.py")
    parity = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(parity)
    docs = parity.load()
    result = parity.compare(corpus_coverage.corpus_devices(), docs, map_device, Unsupported)
    with capsys.disabled():
        print(f"\nhomebridge-z2m parity: {result['at_parity']} of {result['compared']} devices")
    floor = json.loads(FLOOR.read_text(encoding="utf-8"))
    assert result["at_parity"] >= floor["homebridge_z2m_parity"], result["missing"].most_common(10)


def _daemon_catalog():
    """homed's own catalog, as the daemon is built with it: {service: (required,
    allowed)}, {characteristic: writable}."""
    text = (HERE.parents[3] / "Sources" / "HomeModel" / "Catalog" / "HAPCatalog+Generated.swift").read_text()
    services = {}
    for name, required, optional in re.findall(
            r'ServiceTypeInfo\(\s*uuid: "[^"]+", name: "([^"]+)",\s*requiredCharacteristics: \[([^\]]*)\],'
            r'\s*optionalCharacteristics: \[([^\]]*)\]', text):
        required = set(re.findall(r'"([^"]+)"', required))
        services[name] = (required, required | set(re.findall(r'"([^"]+)"', optional)))
    characteristics = {name: writable == "true" for name, writable in re.findall(
        r'CharacteristicTypeInfo\(\s*uuid: "[^"]+", name: "([^"]+)", format: \.\w+,\s*'
        r'permissions: CharacteristicProperties\(readable: \w+, writable: (\w+)', text)}
    return services, characteristics


def test_every_service_and_characteristic_made_is_in_homeds_catalog():
    """Of every corpus device: each service type is one of homed's, with its
    required characteristics and only ones it allows (the custom AirPressure
    aside), and what the mapping writes the catalog lets be written."""
    services, characteristics = _daemon_catalog()
    assert "AirQualitySensor" in services and "VOCDensity" in characteristics  # the catalog was read
    made = set()
    for device in corpus_coverage.corpus_devices():
        try:
            dm = map_device(device)
        except Unsupported:
            continue
        model = device["definition"]["model"]
        for service in dm.accessory["services"]:
            required, allowed = services[service["type"]]
            types = [c["type"] for c in service["characteristics"] if c["type"] != PRESSURE_UUID]
            assert required <= set(types) and set(types) <= allowed, (model, service["type"], types)
            assert len(types) == len(set(types)), (model, service["type"], types)
            made.add(service["type"])
        for ref, binding in dm.bindings.items():
            if binding.encode is not None and ref.characteristic != "AirPressure":
                assert characteristics[ref.characteristic], (model, ref)
    assert {"AirQualitySensor", "OccupancySensor", "WindowCovering", "LeakSensor"} <= made
