"""Cover tilt, a binary_sensor's off_delay and expire_after, end to end: the
provider as a real process between a real mosquitto and a real homed, the
devices played by the fake fleet (tests/fleet.py) publishing what their
firmware would."""

import json
import time

import pytest

from homed import pb
from homed_testkit import EventLog

from .discovered_devices import Device
from .fleet import Fleet
from .mqtt_helpers import accessories, ids_of, start_provider, value_of, wait_accessories, wait_log, \
    wait_value

P = "homeassistant"


BLIND = {"dev": {"ids": ["venetian-01"], "name": "Office blind", "mf": "Acme", "mdl": "VB-2"}}

#: Two covers of one device: Home Assistant's default tilt range (0–100, the
#: value itself as the command) and a 0–180 one written as a percentage.
VENETIAN = Device(
    "venetian", "venetian-01",
    {f"{P}/cover/vb/slats/config": dict(
        BLIND, name="Slats", uniq_id="vb-slats", cmd_t="vb/slats/set", pos_t="vb/slats/pos",
        tilt_cmd_t="vb/slats/tilt/set", tilt_status_t="vb/slats/tilt"),
     f"{P}/cover/vb/wide/config": dict(
        BLIND, name="Wide", uniq_id="vb-wide", cmd_t="vb/wide/set", tilt_cmd_t="vb/wide/tilt/set",
        tilt_status_t="vb/wide/state", tilt_status_tpl="{{ value_json.tilt }}", tilt_min=0, tilt_max=180,
        tilt_cmd_tpl='{"pct": {{ tilt_position }}}')},
    {"pos": 100, "slats": 50, "wide": 45},
    lambda s: [("vb/slats/pos", str(s["pos"])), ("vb/slats/tilt", str(s["slats"])),
               ("vb/wide/state", json.dumps({"tilt": s["wide"]}))],
    {"vb/slats/tilt/set": lambda s, p: s.update(slats=int(p)),
     "vb/wide/tilt/set": lambda s, p: s.update(wide=round(json.loads(p)["pct"] * 180 / 100))},
    availability=("vb/status", "online", "offline"))

#: A PIR that only ever says ON (as many do), its state not retained.
PIR = Device(
    "pir", "pir-01",
    {f"{P}/binary_sensor/pir/config": {"name": "Hall PIR", "uniq_id": "pir-01", "stat_t": "pir/motion",
                                       "dev_cla": "motion", "off_dly": 1, "dev": {"ids": ["pir-01"],
                                                                                  "name": "Hall PIR"}}},
    {"motion": None},
    lambda s: [("pir/motion", s["motion"])] if s["motion"] else [],
    availability=("pir/status", "online", "offline"), retain_state=False)

#: A BLE sensor with expire_after, that has said nothing yet.
ATTIC = Device(
    "attic", "bt-attic",
    {f"{P}/sensor/bt/temp/config": {"name": "Attic temperature", "uniq_id": "bt-temp", "stat_t": "bt/attic/temp",
                                    "dev_cla": "temperature", "unit_of_meas": "°C", "exp_aft": 2,
                                    "dev": {"ids": ["bt-attic"], "name": "Attic sensor"}}},
    {"temp": None},
    lambda s: [("bt/attic/temp", s["temp"])] if s["temp"] else [],
    availability=("bt/status", "online", "offline"), retain_state=False)


@pytest.fixture
def fleet_of(broker):
    """Starts a fleet of the devices given on the test's broker (stopped after the test)."""
    started = []

    def start(*devices):
        started.append(Fleet(broker.port, list(devices)).start())
        return started[-1]
    yield start
    for fleet in started:
        fleet.stop()


def test_a_covers_tilt_is_read_and_written_as_the_horizontal_tilt_angle(homed, broker, fleet_of, processes):
    devices = fleet_of(VENETIAN)
    provider = start_provider(homed, broker.url, processes)
    with homed.client() as client:
        found = wait_accessories(client, ["venetian-01"], provider)
        ids = ids_of(found["venetian-01"])
        slats_current, slats_target = ids[("vb-slats", "CurrentHorizontalTiltAngle")], \
            ids[("vb-slats", "TargetHorizontalTiltAngle")]
        wide_current, wide_target = ids[("vb-wide", "CurrentHorizontalTiltAngle")], \
            ids[("vb-wide", "TargetHorizontalTiltAngle")]
        # Seeded from the retained states: 50 of 0–100 and 45 of 0–180.
        assert value_of(client, slats_current) == 0 and value_of(client, slats_target) == 0
        assert value_of(client, wide_current) == -45
        # A write goes to the tilt command topic and is acknowledged by the echo.
        result = client.write({slats_target: pb.Value(int_value=-90)}, timeout=10).results[0]
        assert (result.code, result.message) == (0, "")
        assert devices.wait_received("vb/slats/tilt/set") == "0"
        wait_value(client, slats_current, -90, process=provider)
        result = client.write({wide_target: pb.Value(int_value=45)}, timeout=10).results[0]
        assert (result.code, result.message) == (0, "")
        assert json.loads(devices.wait_received("vb/wide/tilt/set")) == {"pct": 75}
        wait_value(client, wide_current, 45, process=provider)
        # The device tilting by itself is reported.
        devices.change("venetian", slats=75)
        wait_value(client, slats_current, 45, process=provider)
        assert "Traceback" not in provider.log()


def test_off_delay_turns_a_binary_sensor_off_after_its_last_on(homed, broker, fleet_of, processes):
    devices = fleet_of(PIR)
    provider = start_provider(homed, broker.url, processes)
    with homed.client() as client:
        found = wait_accessories(client, ["pir-01"], provider)
        motion = ids_of(found["pir-01"])[("pir-01", "MotionDetected")]
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            devices.change("pir", motion="ON")
            wait_value(client, motion, True, process=provider)
            # ON again before the delay ends: the delay starts again from it.
            time.sleep(0.5)
            again = time.monotonic()
            devices.change("pir", motion="ON")
            wait_value(client, motion, False, timeout=10, process=provider)
            assert time.monotonic() - again >= 1.0  # never before a full delay after the last ON
            changes = [e.value.value.bool_value for _, e in events.wait_for(
                lambda e: e.kind == pb.EVENT_VALUE_CHANGED and e.value.characteristic_id == motion, count=2)]
            assert changes == [True, False]  # one ON, one OFF: the second ON changed nothing
            # An OFF from the device itself ends the delay.
            devices.change("pir", motion="ON")
            wait_value(client, motion, True, process=provider)
            devices.change("pir", motion="OFF")
            wait_value(client, motion, False, process=provider)
        finally:
            events.close()
        assert "Traceback" not in provider.log()


def test_expire_after_makes_the_device_unreachable_until_its_next_state(homed, broker, fleet_of, processes):
    devices = fleet_of(ATTIC)
    provider = start_provider(homed, broker.url, processes)
    with homed.client() as client:
        # No state yet: unknown, so unavailable (as in Home Assistant): registered unreachable.
        found = wait_accessories(client, ["bt-attic"], provider, reachable=False)
        temp = ids_of(found["bt-attic"])[("bt-temp", "CurrentTemperature")]
        devices.change("attic", temp="18.5")
        wait_accessories(client, ["bt-attic"], provider, reachable=True)
        wait_value(client, temp, 18.5, process=provider)
        # No message for expire_after seconds: unreachable, and a fresh read says why.
        wait_accessories(client, ["bt-attic"], provider, reachable=False)
        code, message = value_of(client, temp, fresh=True)
        assert code == pb.UNAVAILABLE and "entity bt-temp: no state for 2 s (expire_after)" in message
        wait_log(provider, "device bt-attic, entity bt-temp: no state for 2 s (expire_after): unknown, so "
                           "unavailable")
        # A state again: reachable, with the new value.
        devices.change("attic", temp="19.0")
        wait_accessories(client, ["bt-attic"], provider, reachable=True)
        wait_value(client, temp, 19.0, process=provider)
        assert accessories(client)["bt-attic"].reachable
