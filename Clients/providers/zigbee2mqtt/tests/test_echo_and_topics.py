"""Echo confirmation and topic parsing, with no broker and no daemon."""

import threading

from homed.refs import Ref

from homed_z2m.bridge import Topic, classify, online_of, parse_json
from homed.echo import EchoMatcher, matches

ON = Ref("0x1", "light", "On")
BRIGHTNESS = Ref("0x1", "light", "Brightness")
HUE = Ref("0x1", "light", "Hue")


def test_matches_within_tolerance_and_never_across_types():
    assert matches(True, True, 0) and not matches(True, False, 0)
    assert not matches(True, 1, 0) and not matches(1, True, 0)
    assert matches(50, 49, 1) and not matches(50, 48, 1)
    assert matches(21.3, 21.5, 0.3) and matches("a", "a", 0)


def test_a_write_is_confirmed_only_by_its_echo():
    matcher = EchoMatcher()
    pending = matcher.add("0x1", {ON: True, BRIGHTNESS: 50}, {ON: 0, BRIGHTNESS: 1})
    assert matcher.observe("0x2", {ON: True}) == set()  # another device
    assert matcher.observe("0x1", {ON: False}) == set()  # not the value written
    assert matcher.observe("0x1", {ON: True, HUE: 3}) == {ON}
    assert not pending.done and pending.waiting == {BRIGHTNESS: 50}
    done = []
    waiter = threading.Thread(target=lambda: done.append(matcher.wait(pending, 10)))
    waiter.start()
    assert matcher.observe("0x1", {BRIGHTNESS: 49}) == {BRIGHTNESS}
    waiter.join(10)
    assert done == [True] and pending.echoed == {ON: True, BRIGHTNESS: 49}
    assert matcher.observe("0x1", {ON: True}) == set()  # forgotten once answered


def test_a_write_without_its_echo_ends_at_its_deadline():
    matcher = EchoMatcher()
    pending = matcher.add("0x1", {ON: True, BRIGHTNESS: 80}, {})
    matcher.observe("0x1", {ON: True})  # a partial echo
    assert matcher.wait(pending, 0.05) is False
    assert pending.waiting == {BRIGHTNESS: 80} and pending.echoed == {ON: True}


def test_two_writes_waiting_on_one_device_are_both_confirmed():
    matcher = EchoMatcher()
    first = matcher.add("0x1", {ON: True}, {})
    second = matcher.add("0x1", {ON: True}, {})
    assert matcher.observe("0x1", {ON: True}) == {ON}
    assert first.done and second.done


def test_topics_with_slashes_in_names():
    names = {"kitchen/ceiling", "Desk"}
    assert classify("zigbee2mqtt", "zigbee2mqtt/bridge/devices", names) == (Topic.DEVICES, "")
    assert classify("zigbee2mqtt", "zigbee2mqtt/bridge/state", names) == (Topic.BRIDGE_STATE, "")
    assert classify("zigbee2mqtt", "zigbee2mqtt/kitchen/ceiling", names) == (Topic.STATE, "kitchen/ceiling")
    assert classify("zigbee2mqtt", "zigbee2mqtt/kitchen/ceiling/availability", names) == \
        (Topic.AVAILABILITY, "kitchen/ceiling")
    assert classify("zigbee2mqtt", "zigbee2mqtt/kitchen/ceiling/set", names) == (Topic.OWN, "kitchen/ceiling")
    assert classify("zigbee2mqtt", "zigbee2mqtt/Ghost", names) == (Topic.STATE, "Ghost")
    assert classify("zigbee2mqtt", "zigbee2mqtt/bridge/logging", names) == (Topic.BRIDGE_OTHER, "bridge/logging")
    assert classify("zigbee2mqtt", "other/Desk", names) == (Topic.UNKNOWN, "other/Desk")


def test_online_in_both_forms_and_garbage():
    assert online_of(b'{"state":"online"}') is True and online_of(b"offline") is False
    assert online_of(b"online") is True and online_of(b'{"state":"offline"}') is False
    assert online_of(b"{not json") is None and online_of(b"maybe") is None and online_of(b"[1]") is None
    assert parse_json(b"\xff")[1].startswith("not UTF-8")
    assert parse_json(b"{")[1].startswith("not JSON")
    assert parse_json(b'{"a": 1}') == ({"a": 1}, None)
