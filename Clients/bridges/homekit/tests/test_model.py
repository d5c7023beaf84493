"""The pure layers, with no daemon and no network: homed's model as HAP's,
controllers' values, statuses, the aid/iid table, the exposure filter and the
setup URI."""

import random

import pytest

from homed import pb
from homed_homekit import hapmodel as hm
from homed_homekit.exposure import Exposure
from homed_homekit.ids import IdTable
from homed_homekit.setupcode import FORBIDDEN, new_pincode, setup_uri, valid_pincode

APPLE = "-0000-1000-8000-0026BB765291"
CUSTOM = "6A1D0001-0000-4000-8000-686F6D656474"


def char(cid, short, name, fmt, readable=True, writable=False, ev=True, value=None, **meta):
    c = pb.Characteristic(id=cid, type=f"{short:0>8}{APPLE}" if "-" not in short else short, type_name=name)
    c.properties.readable, c.properties.writable, c.properties.supports_event_notification = readable, writable, ev
    c.metadata.format = fmt
    for key, v in meta.items():
        if key == "valid_values":
            c.metadata.valid_values.extend(v)
        else:
            setattr(c.metadata, key, v)
    if value is not None:
        c.value.CopyFrom(value)
    return c


def lamp(extra_chars=()):
    a = pb.Accessory(id=10, name="Desk Lamp", category=pb.CATEGORY_LIGHTBULB, reachable=True)
    info = a.services.add(id=11, type=f"0000003E{APPLE}", type_name="AccessoryInformation", name="Desk Lamp")
    info.characteristics.append(char(12, "14", "Identify", pb.FORMAT_BOOL, readable=False, writable=True, ev=False))
    info.characteristics.append(char(13, "23", "Name", pb.FORMAT_STRING, ev=False,
                                     value=pb.Value(string_value="Desk Lamp"), max_length=64))
    light = a.services.add(id=14, type=f"00000043{APPLE}", type_name="Lightbulb", name="Desk Lamp", primary=True)
    light.characteristics.append(char(15, "25", "On", pb.FORMAT_BOOL, writable=True, value=pb.Value(bool_value=True)))
    light.characteristics.append(char(16, "8", "Brightness", pb.FORMAT_INT, writable=True, unit=pb.UNIT_PERCENTAGE,
                                      min_value=0, max_value=100, step_value=1, value=pb.Value(int_value=40)))
    light.characteristics.append(char(17, CUSTOM, "Warmth", pb.FORMAT_UINT8, writable=True, unit=pb.UNIT_PERCENTAGE,
                                      min_value=0, max_value=50, step_value=5, value=pb.Value(uint_value=10)))
    light.characteristics.extend(extra_chars)
    return a


def test_an_accessory_keeps_homed_types_properties_and_metadata():
    spec = hm.accessory_spec(lamp())
    assert spec.category == 5 and spec.name == "Desk Lamp" and spec.reachable
    info, light = spec.services
    assert info.type == f"0000003E{APPLE}" and light.primary and not info.primary
    identify, name = info.chars
    assert identify.perms == ["pw"] and identify.value is None
    assert name.value == "Desk Lamp" and name.props == {"maxLen": 64}
    renamed = lamp()
    renamed.name = "Reading Lamp"
    assert hm.accessory_spec(renamed).services[0].chars[1].value == "Reading Lamp"
    on, brightness, warmth = light.chars
    assert (on.type, on.format, on.perms, on.value) == (f"00000025{APPLE}", "bool", ["pr", "pw", "ev"], True)
    assert brightness.props == {"minValue": 0, "maxValue": 100, "minStep": 1, "unit": "percentage"}
    assert brightness.value == 40 and isinstance(brightness.value, int)
    # A custom type keeps its own UUID, name, format, unit and range.
    assert (warmth.type, warmth.name, warmth.format) == (CUSTOM, "Warmth", "uint8")
    assert warmth.props == {"minValue": 0, "maxValue": 50, "minStep": 5, "unit": "percentage"}
    assert [c.key for c in light.chars] == ["c15", "c16", "c17"] and light.key == "s14"


def test_valid_values_and_button_presses():
    press = char(18, "73", "ProgrammableSwitchEvent", pb.FORMAT_UINT8, value=pb.Value(uint_value=1),
                 valid_values=[0, 1, 2])
    spec = hm.accessory_spec(lamp([press]))
    event = spec.services[1].chars[-1]
    assert event.props["ValidValues"] == {"0": 0, "1": 1, "2": 2}
    assert event.value is None  # HAP reads a button press as null


def test_the_signature_changes_with_the_structure_not_with_values():
    a, b = lamp(), lamp()
    b.services[1].characteristics[0].value.bool_value = False
    assert hm.accessory_spec(a).signature() == hm.accessory_spec(b).signature()
    b.name = "Reading Lamp"
    assert hm.accessory_spec(a).signature() != hm.accessory_spec(b).signature()
    c = lamp()
    c.services[1].characteristics[1].metadata.max_value = 90
    assert hm.accessory_spec(a).signature() != hm.accessory_spec(c).signature()


@pytest.mark.parametrize("fmt,value,expected", [
    ("bool", True, pb.Value(bool_value=True)),
    ("bool", 0, pb.Value(bool_value=False)),          # iOS writes bools as 0/1
    ("uint8", 50, pb.Value(uint_value=50)),
    ("uint8", 50.0, pb.Value(uint_value=50)),
    ("int", -3, pb.Value(int_value=-3)),
    ("float", 21, pb.Value(float_value=21.0)),
    ("string", "hi", pb.Value(string_value="hi")),
    ("tlv8", "AQI=", pb.Value(data_value=b"\x01\x02")),
])
def test_a_controller_value_of_the_right_kind_becomes_homed_value(fmt, value, expected):
    assert hm.from_hap(value, fmt) == expected


@pytest.mark.parametrize("fmt,value", [
    ("bool", "true"), ("bool", 2), ("uint8", "50"), ("uint8", -1), ("uint8", 1.5), ("uint8", True),
    ("int", None), ("float", "21.5"), ("float", float("nan")), ("string", 5), ("tlv8", "not base64!"),
    ("data", 7),
])
def test_a_controller_value_of_the_wrong_kind_is_refused(fmt, value):
    with pytest.raises(hm.BadValue):
        hm.from_hap(value, fmt)


def test_homed_values_as_hap_values():
    assert hm.to_hap(pb.Value(uint_value=3), "uint8") == 3
    assert hm.to_hap(pb.Value(float_value=21.5), "float") == 21.5
    assert hm.to_hap(pb.Value(data_value=b"\x01\x02"), "tlv8") == "AQI="
    assert hm.to_hap(pb.Value(), "bool") is None


def test_homed_statuses_as_the_hap_statuses_controllers_expect():
    assert hm.hap_status(pb.OK) == 0
    assert hm.hap_status(pb.UNAVAILABLE) == -70402        # "No Response"
    assert hm.hap_status(pb.INVALID_ARGUMENT) == -70410
    assert hm.hap_status(pb.NOT_FOUND) == -70409
    assert hm.hap_status(pb.DEADLINE_EXCEEDED) == -70408
    assert hm.hap_status(pb.PERMISSION_DENIED) == -70401
    assert hm.hap_status(pb.INTERNAL) == -70402


def test_ids_are_stable_across_a_save_and_never_reused():
    table = IdTable()
    first = table.place([hm.accessory_spec(lamp())])[10]
    assert (first.bridge, first.aid) == (0, 2)
    assert first.iids["s11"] == 1            # AccessoryInformation is iid 1, as HAP wants
    assert sorted(first.iids.values()) == list(range(1, 8))  # 2 services, 5 characteristics
    again = IdTable(table.to_dict())
    assert again.place([hm.accessory_spec(lamp())])[10] == first and not again.changed
    # A characteristic added later takes a new iid; the others keep theirs.
    grown = lamp([char(19, "CE", "ColorTemperature", pb.FORMAT_UINT32, writable=True)])
    placed = again.place([hm.accessory_spec(grown)])[10]
    assert placed.iids["c19"] == 8 and all(placed.iids[k] == v for k, v in first.iids.items())
    # Gone from homed: forgotten, and its aid is not given to the next one.
    assert again.forget_except([]) == [10]
    other = lamp()
    other.id = 20
    assert again.place([hm.accessory_spec(other)])[20].aid == 3


def test_more_accessories_than_a_bridge_takes_go_behind_another_bridge_and_stay_there():
    def spec(i):
        a = lamp()
        a.id = i
        return hm.accessory_spec(a)
    table = IdTable(max_per_bridge=2)
    placed = table.place([spec(i) for i in (1, 2, 3)])
    assert [placed[i].bridge for i in (1, 2, 3)] == [0, 0, 1]
    assert placed[3].aid == 2
    # Accessory 1 goes: 3 stays on bridge 1, and the new 4 fills bridge 0.
    table.forget_except([2, 3, 4])
    placed = table.place([spec(i) for i in (2, 3, 4)])
    assert (placed[3].bridge, placed[3].aid) == (1, 2) and placed[4].bridge == 0 and placed[4].aid == 4
    assert table.bridges() == [0, 1]


def test_exposure_by_room_accessory_and_exclusion():
    a = lamp()
    bridge = pb.Accessory(id=30, name="Coordinator", category=pb.CATEGORY_BRIDGE)
    assert Exposure().shows(a, "Office") and not Exposure().shows(bridge, "Office")
    rooms = Exposure.from_config({"expose": {"rooms": ["office"]}})
    assert rooms.shows(a, "Office") and not rooms.shows(a, "Cellar")
    plus = Exposure.from_config({"expose": {"rooms": ["Office"], "accessories": ["Cellar/Desk Lamp"]}})
    assert plus.shows(a, "Cellar")
    minus = Exposure.from_config({"expose": {"exclude": ["office/desk lamp"]}})
    assert not minus.shows(a, "Office")
    by_id = Exposure.from_config({"expose": {"exclude": [10]}})
    assert not by_id.shows(a, "Office")
    with pytest.raises(ValueError, match="must be a table"):
        Exposure.from_config({"expose": 3})
    with pytest.raises(ValueError, match="unknown keys: room"):
        Exposure.from_config({"expose": {"room": ["Office"]}})


def test_accessories_of_the_homekit_provider_are_left_out_unless_asked_for():
    a = lamp()
    a.provider = "homekit"
    other = lamp()
    other.provider = "zigbee2mqtt"
    assert not Exposure().shows(a, "Office") and Exposure().shows(other, "Office")
    assert Exposure().from_excluded_provider(a) and not Exposure().from_excluded_provider(other)
    assert Exposure.from_config({}).exclude_providers == {"homekit"}
    shown = Exposure.from_config({"expose": {"exclude_providers": []}})
    assert shown.shows(a, "Office")
    named = Exposure.from_config({"expose": {"accessories": ["office/desk lamp"]}})
    assert named.shows(a, "Office") and not named.shows(a, "Cellar")
    by_id = Exposure.from_config({"expose": {"accessories": [10], "exclude": []}})
    assert by_id.shows(a, "Cellar")
    # An exclusion still wins over an exposed provider; a room filter still applies.
    assert not Exposure.from_config({"expose": {"exclude_providers": [], "exclude": [10]}}).shows(a, "Office")
    rooms = Exposure.from_config({"expose": {"exclude_providers": [], "rooms": ["Cellar"]}})
    assert not rooms.shows(a, "Office") and rooms.shows(a, "Cellar")
    zigbee = Exposure.from_config({"expose": {"exclude_providers": ["zigbee2mqtt"]}})
    assert zigbee.shows(a, "Office") and not zigbee.shows(other, "Office")
    with pytest.raises(ValueError, match="exclude_providers: 3 is not a provider id"):
        Exposure.from_config({"expose": {"exclude_providers": [3]}})
    with pytest.raises(ValueError, match="exclude_providers must be a list"):
        Exposure.from_config({"expose": {"exclude_providers": "homekit"}})


def test_the_setup_uri_is_the_one_hap_python_makes():
    from pyhap.accessory import Bridge
    from pyhap.accessory_driver import AccessoryDriver
    import asyncio
    loop = asyncio.new_event_loop()
    try:
        driver = AccessoryDriver(loop=loop, pincode=b"031-45-154", address="127.0.0.1", port=0,
                                 persist_file="/dev/null")
        driver.state.setup_id = "AB12"
        bridge = Bridge(driver, "B")
        bridge.driver = driver
        assert setup_uri(2, "031-45-154", "AB12") == bridge.xhm_uri()
    finally:
        loop.close()


def test_setup_codes_are_well_formed_and_never_trivial():
    rng = random.Random(7)
    codes = [new_pincode(rng) for _ in range(200)]
    assert all(valid_pincode(code) for code in codes)
    assert not any(code in FORBIDDEN for code in codes)
    assert not valid_pincode("123-45-678") and not valid_pincode("12345678")
