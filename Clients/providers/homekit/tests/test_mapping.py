"""The layers with no I/O: an HAP accessory database (the JSON of GET
/accessories) as homed accessories and bindings, HAP values and statuses, and
the pairing files. The catalog here is a hand-made ListTypesResponse holding
what these tests need, with the daemon's own UUIDs, formats and ranges."""

import json
import os

from homed import pb
from homed.refs import Ref

from homed_hap import hapvalues
from homed_hap.catalog import Catalog, full_uuid
from homed_hap.mapping import map_device
from homed_hap.store import Record, Store

DEVICE = "AA:BB:CC:00:00:0F"


def _catalog():
    response = pb.ListTypesResponse()

    def char(name, short, fmt, perms, unit=pb.UNIT_NONE, low=None, high=None, step=None, valid=(), event_only=False):
        c = response.characteristic_types.add(uuid=full_uuid(short), name=name, format=fmt, unit=unit,
                                              event_only=event_only)
        c.permissions.readable, c.permissions.writable = "r" in perms, "w" in perms
        c.permissions.supports_event_notification = "e" in perms
        if low is not None:
            c.min_value, c.max_value = low, high
        if step is not None:
            c.step_value = step
        for value in valid:
            c.valid_values.add(value=value, name=str(value))

    char("On", "25", pb.FORMAT_BOOL, "rwe")
    char("Brightness", "8", pb.FORMAT_INT, "rwe", pb.UNIT_PERCENTAGE, 0, 100, 1)
    char("Name", "23", pb.FORMAT_STRING, "r")
    char("CurrentTemperature", "11", pb.FORMAT_FLOAT, "re", pb.UNIT_CELSIUS, 0, 100, 0.1)
    char("ProgrammableSwitchEvent", "73", pb.FORMAT_UINT8, "re", valid=(0, 1, 2), event_only=True)
    char("Identify", "14", pb.FORMAT_BOOL, "w")
    for name, short in (("Manufacturer", "20"), ("Model", "21"), ("SerialNumber", "30"),
                        ("FirmwareRevision", "52")):
        char(name, short, pb.FORMAT_STRING, "r")

    def service(name, short, required, optional=("Name",)):
        s = response.service_types.add(uuid=full_uuid(short), name=name)
        s.required_characteristics.extend(required)
        s.optional_characteristics.extend(optional)

    service("AccessoryInformation", "3E", ["Identify", "Manufacturer", "Model", "Name", "SerialNumber",
                                            "FirmwareRevision"], [])
    service("Lightbulb", "43", ["On"], ["Brightness", "Name"])
    service("Switch", "49", ["On"])
    service("TemperatureSensor", "8A", ["CurrentTemperature"])
    service("StatelessProgrammableSwitch", "89", ["ProgrammableSwitchEvent"])
    return Catalog(response)


CATALOG = _catalog()


def info(name, iid=1, serial="S", manufacturer="Acme"):
    return {"iid": iid, "type": "3E", "characteristics": [
        {"iid": iid + 1, "type": "14", "perms": ["pw"], "format": "bool"},
        {"iid": iid + 2, "type": "20", "perms": ["pr"], "format": "string", "value": manufacturer},
        {"iid": iid + 3, "type": "21", "perms": ["pr"], "format": "string", "value": "M"},
        {"iid": iid + 4, "type": "23", "perms": ["pr"], "format": "string", "value": name},
        {"iid": iid + 5, "type": "30", "perms": ["pr"], "format": "string", "value": serial},
        {"iid": iid + 6, "type": "52", "perms": ["pr"], "format": "string", "value": "1.2"}]}


def database():
    return [
        {"aid": 1, "services": [info("Hub/Bridge"), {"iid": 8, "type": "A2", "characteristics": [
            {"iid": 9, "type": "37", "perms": ["pr"], "format": "string", "value": "1.1.0"}]}]},
        {"aid": 2, "services": [info("Desk lamp"), {"iid": 8, "type": "00000043-0000-1000-8000-0026BB765291",
                                                    "primary": True, "characteristics": [
            {"iid": 9, "type": "25", "perms": ["pr", "ev"], "format": "bool", "value": 1},
            {"iid": 10, "type": "8", "perms": ["pr", "pw", "ev"], "format": "int", "value": 40, "minValue": -10,
             "maxValue": 80, "minStep": 1, "unit": "percentage"},
            {"iid": 11, "type": "23", "perms": ["pr"], "format": "string", "value": "Lamp light"},
            {"iid": 12, "type": "11", "perms": ["pr", "ev"], "format": "float", "value": 20.0},
            {"iid": 13, "type": "E863F10D-079E-48FF-8F27-9C2605A29F52", "perms": ["pr", "ev"], "format": "uint16",
             "description": "Watts", "unit": "W", "minValue": 0, "maxValue": 3000, "minStep": 1, "value": 12},
            {"iid": 14, "type": "E863F10D-079E-48FF-8F27-9C2605A29F53", "perms": ["pr", "pw"], "format": "data",
             "value": "AAEC", "maxDataLen": 300}]}]},
        {"aid": 3, "services": [info("Broken", serial="X"), {"iid": 8, "type": "49", "characteristics": [
            {"iid": 9, "type": "23", "perms": ["pr"], "format": "string", "value": "no On"}]},
            {"iid": 20, "type": "E863F007-079E-48FF-8F27-9C2605A29F52", "characteristics": [
                {"iid": 21, "type": "E863F11A-079E-48FF-8F27-9C2605A29F52", "perms": ["pr"], "format": "uint8"}]},
            {"iid": 30, "type": "89", "characteristics": [
                {"iid": 31, "type": "73", "perms": ["pr", "ev"], "format": "uint8", "value": None,
                 "valid-values": [0, 2]}]}]},
    ]


def test_keys_are_the_device_id_and_aid_and_services_are_keyed_by_iid():
    mapped = map_device(DEVICE, database(), CATALOG)
    assert mapped.keys == ["aa:bb:cc:00:00:0f/1", "aa:bb:cc:00:00:0f/2", "aa:bb:cc:00:00:0f/3"]
    bridge, lamp, broken = mapped.templates
    assert bridge.category == pb.CATEGORY_BRIDGE and bridge.name == "Hub Bridge"  # no "/" in homed's names
    assert bridge.services == []  # AccessoryInformation is the daemon's; HAPProtocolInformation is left out
    assert lamp.bridge_key == broken.bridge_key == "aa:bb:cc:00:00:0f/1" and bridge.bridge_key == ""
    assert (lamp.name, lamp.manufacturer, lamp.serial_number, lamp.firmware_revision) == ("Desk lamp", "Acme", "S",
                                                                                          "1.2")
    assert lamp.category == pb.CATEGORY_LIGHTBULB and broken.category == pb.CATEGORY_PROGRAMMABLE_SWITCH
    [bulb] = lamp.services
    assert (bulb.type, bulb.key, bulb.name, bulb.primary) == ("Lightbulb", "iid8", "Lamp light", True)
    assert mapped.by_ref[Ref("aa:bb:cc:00:00:0f/2", "iid8", "Brightness")].iid == 10
    identify = mapped.by_ref[Ref("aa:bb:cc:00:00:0f/2", "AccessoryInformation", "Identify")]
    assert (identify.aid, identify.iid) == (2, 2)
    # A device that is no bridge takes its mDNS category.
    [alone] = map_device(DEVICE, database()[1:2], CATALOG, device_category=pb.CATEGORY_OUTLET).templates
    assert alone.category == pb.CATEGORY_OUTLET and alone.bridge_key == ""


def test_catalog_types_take_the_devices_own_range_and_drop_what_the_catalog_does_not_allow():
    mapped = map_device(DEVICE, database(), CATALOG)
    on, brightness, name = mapped.templates[1].services[0].characteristics[:3]
    assert on.type == "On" and on.properties.readable and not on.properties.writable  # the device dropped pw
    assert brightness.type == "Brightness" and not brightness.HasField("properties")  # the catalog's
    # Its own -10..80, though the catalog's is 0..100: homed takes a wider range too.
    assert brightness.metadata.min_value == -10 and brightness.metadata.max_value == 80
    assert not brightness.metadata.HasField("step_value")  # the catalog's own step: nothing to narrow
    assert name.type == "Name"
    notes = "\n".join(mapped.notes)
    assert "Brightness: minimum" not in notes
    assert "Lightbulb (iid 8): characteristic CurrentTemperature (iid 12) is not one homed's Lightbulb takes; " \
           "left out" in notes
    assert (2, 12) not in mapped.bindings


def test_unknown_types_are_custom_characteristics_with_their_full_metadata():
    mapped = map_device(DEVICE, database(), CATALOG)
    watts, blob = mapped.templates[1].services[0].characteristics[3:]
    assert (watts.type, watts.type_name) == ("E863F10D-079E-48FF-8F27-9C2605A29F52", "Watts")
    assert watts.metadata.format == pb.FORMAT_UINT16 and watts.metadata.unit == pb.UNIT_NONE  # "W" is no HAP unit
    assert (watts.metadata.min_value, watts.metadata.max_value, watts.metadata.step_value) == (0, 3000, 1)
    assert watts.properties.readable and watts.properties.supports_event_notification
    assert not watts.properties.writable
    assert blob.type_name == "Custom E863F10D" and blob.metadata.format == pb.FORMAT_DATA
    assert blob.metadata.max_length == 300
    assert mapped.values[(2, 14)] == b"\x00\x01\x02"  # base64 in HAP's JSON
    assert mapped.values[(2, 9)] is True  # 1 for a bool


def test_what_homed_cannot_take_is_left_out_whole_and_named():
    mapped = map_device(DEVICE, database(), CATALOG)
    broken = mapped.templates[2]
    assert [s.type for s in broken.services] == ["StatelessProgrammableSwitch"]
    notes = "\n".join(mapped.notes)
    assert "'Broken' (aa:bb:cc:00:00:0f/3) Switch (iid 8): lacks On, which homed's Switch requires; left out" in notes
    assert "service E863F007-079E-48FF-8F27-9C2605A29F52 (iid 20) is not a type homed knows (homed has no custom " \
           "service types); left out with its 1 characteristics" in notes
    assert (3, 9) not in mapped.bindings and (3, 21) not in mapped.bindings
    [button] = broken.services[0].characteristics
    assert list(button.metadata.valid_values) == [0, 2]  # narrowed to the presses this button has
    assert mapped.bindings[(3, 31)].event_only


def test_registrations_carry_the_values_known_and_never_a_press():
    mapped = map_device(DEVICE, database(), CATALOG)
    values = dict(mapped.values)
    values[(3, 31)] = 0  # a press seen earlier: an occurrence, not a state
    values[(2, 10)] = 55
    accessories = mapped.accessories(values, reachable=False)
    assert all(a.unreachable for a in accessories)
    brightness = accessories[1].services[0].characteristics[1]
    assert brightness.value.int_value == 55
    assert not accessories[2].services[0].characteristics[0].HasField("value")
    # The templates themselves hold no values: a layout compares without them.
    assert map_device(DEVICE, database(), CATALOG).layout() == mapped.layout()
    changed = database()
    changed[1]["services"][1]["characteristics"][1]["maxValue"] = 90
    assert map_device(DEVICE, changed, CATALOG).layout() != mapped.layout()
    changed = database()
    changed[1]["services"][1]["characteristics"][1]["value"] = 99
    assert map_device(DEVICE, changed, CATALOG).layout() == mapped.layout()


def test_a_malformed_accessory_is_left_out_whole_and_the_others_are_mapped():
    broken = database()
    broken[2]["services"][1]["characteristics"][0]["iid"] = "nine"
    broken.append({"services": []})
    mapped = map_device(DEVICE, broken, CATALOG)
    assert mapped.keys == ["aa:bb:cc:00:00:0f/1", "aa:bb:cc:00:00:0f/2"]
    assert not any(b.aid == 3 for b in mapped.bindings.values())
    assert {s.binding.aid for s in mapped.slots} == {2}
    notes = "\n".join(mapped.notes)
    assert "accessory 3 of aa:bb:cc:00:00:0f is malformed in its database (ValueError: " in notes
    assert "accessory entry 4 of aa:bb:cc:00:00:0f has no aid; left out" in notes
    assert map_device(DEVICE, {"not": "a list"}, CATALOG).templates == []


def test_hap_statuses_become_homed_codes():
    assert hapvalues.status_of_hap(-70402)[0] == pb.UNAVAILABLE
    assert hapvalues.status_of_hap(-70410) == (pb.INVALID_ARGUMENT, "the accessory refused the value (invalid "
                                               "value in request) (HAP status -70410)")
    assert hapvalues.status_of_hap(-70408)[0] == pb.DEADLINE_EXCEEDED
    assert hapvalues.status_of_hap(-70409)[0] == pb.NOT_FOUND
    assert hapvalues.status_of_hap(-70404)[0] == pb.INVALID_ARGUMENT
    assert hapvalues.status_of_hap(-70401)[0] == pb.PERMISSION_DENIED
    assert hapvalues.status_of_hap(-1)[0] == pb.UNKNOWN
    assert hapvalues.status_of_hap(0) == (pb.OK, "")


def test_values_both_ways():
    assert hapvalues.to_hap(b"\x00\x01\x02", pb.FORMAT_TLV8) == "AAEC"
    assert hapvalues.from_hap(21.5, pb.FORMAT_FLOAT) == 21.5
    assert hapvalues.from_hap(True, pb.FORMAT_UINT8) == 1
    for bad, fmt in (("abc", pb.FORMAT_UINT8), (2, pb.FORMAT_BOOL), ("!!", pb.FORMAT_DATA), (1, pb.FORMAT_STRING),
                     (float("nan"), pb.FORMAT_FLOAT)):
        try:
            hapvalues.from_hap(bad, fmt)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} taken as format {fmt}")


def test_pairing_files_are_private_whole_and_a_bad_one_is_skipped(tmp_path):
    store = Store(str(tmp_path / "state"))
    record = Record("aa:bb:cc:00:00:0f", {"AccessoryPairingID": "AA:BB:CC:00:00:0F", "iOSDeviceLTSK": "secret",
                                          "AccessoryIP": "127.0.0.1", "AccessoryPort": 5}, database())
    store.save(record)
    assert os.listdir(store.directory) == ["aa-bb-cc-00-00-0f.json"]  # no temporary file left
    assert os.stat(store.directory).st_mode & 0o777 == 0o700
    assert os.stat(store.path(record.device_id)).st_mode & 0o777 == 0o600
    (tmp_path / "state" / "pairings" / "zz.json").write_text("{not json")
    (tmp_path / "state" / "pairings" / "yy.json").write_text(json.dumps({"device_id": "y", "pairing": {}}))
    [loaded] = store.load_all()
    assert loaded.pairing["iOSDeviceLTSK"] == "secret" and loaded.address == "127.0.0.1:5"
    assert store.remove(record.device_id) and not store.remove(record.device_id)


def test_a_characteristic_with_the_write_response_permission_asks_for_it():
    db = database()
    db[1]["services"][1]["characteristics"][5]["perms"] = ["pr", "pw", "wr"]
    mapped = map_device(DEVICE, db, CATALOG)
    key = "aa:bb:cc:00:00:0f/2"
    custom = mapped.bindings[(2, 14)]
    assert custom.write_response and not mapped.bindings[(2, 10)].write_response
    [declared] = [c for c in mapped.templates[1].services[0].characteristics
                  if c.type == "E863F10D-079E-48FF-8F27-9C2605A29F53"]
    assert declared.properties.write_response and declared.properties.writable
    assert mapped.by_ref[custom.ref] is custom and custom.ref.accessory_key == key
