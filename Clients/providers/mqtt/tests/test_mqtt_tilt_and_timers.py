"""Cover tilt, a binary_sensor's off_delay and expire_after, end to end: the
provider as a real process between a real mosquitto and a real homed, the
devices played by a paho client publishing what their firmware would."""

import json
import threading
import time

import paho.mqtt.client as mqtt
import pytest

from homed import pb
from homed_testkit import EventLog

from mqtt_helpers import accessories, ids_of, start_provider, value_of, wait_accessories, wait_for, wait_log, \
    wait_value

P = "homeassistant"


class Devices:
    """A paho client in the devices' role: retained configs and states, and the
    commands it received."""

    def __init__(self, port):
        self.handlers = {}
        self.client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id="tilt-devices")
        self.received = []
        self.cond = threading.Condition()
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port, keepalive=10)
        self.client.loop_start()

    def _on_message(self, client, userdata, message):
        with self.cond:
            self.received.append((message.topic, message.payload.decode()))
            self.cond.notify_all()
        handler = self.handlers.get(message.topic)
        if handler:
            handler(message.payload.decode())

    def listen(self, topic, handler=None):
        self.handlers[topic] = handler
        self.client.subscribe(topic, qos=1)

    def publish(self, topic, payload, retain=False):
        if not isinstance(payload, (str, bytes)):
            payload = json.dumps(payload)
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        if threading.current_thread() is not getattr(self.client, "_thread", None):
            info.wait_for_publish(5)  # never on paho's own thread (an echo), which does the publishing

    def wait_received(self, topic, timeout=5.0):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i, (t, payload) in enumerate(self.received):
                    if t == topic:
                        del self.received[i]
                        return payload
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"nothing on {topic} within {timeout} s; got {self.received}")
                self.cond.wait(remaining)

    def stop(self):
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def devices(broker):
    d = Devices(broker.port)
    try:
        yield d
    finally:
        d.stop()


BLIND = {"dev": {"ids": ["venetian-01"], "name": "Office blind", "mf": "Acme", "mdl": "VB-2"}}


def test_a_covers_tilt_is_read_and_written_as_the_horizontal_tilt_angle(homed, broker, devices, processes):
    # Two covers of one device: Home Assistant's default tilt range (0–100, the
    # value itself as the command) and a 0–180 one written as a percentage.
    tilt = {"t": 50}
    wide = {"t": 45}

    def on_tilt(payload):
        tilt["t"] = int(payload)
        devices.publish("vb/slats/tilt", payload, retain=True)

    def on_wide(payload):
        wide["t"] = round(json.loads(payload)["pct"] * 180 / 100)
        devices.publish("vb/wide/state", {"tilt": wide["t"]}, retain=True)

    devices.listen("vb/slats/tilt/set", on_tilt)
    devices.listen("vb/wide/tilt/set", on_wide)
    devices.publish(f"{P}/cover/vb/slats/config", dict(
        BLIND, name="Slats", uniq_id="vb-slats", cmd_t="vb/slats/set", pos_t="vb/slats/pos",
        tilt_cmd_t="vb/slats/tilt/set", tilt_status_t="vb/slats/tilt"), retain=True)
    devices.publish(f"{P}/cover/vb/wide/config", dict(
        BLIND, name="Wide", uniq_id="vb-wide", cmd_t="vb/wide/set", tilt_cmd_t="vb/wide/tilt/set",
        tilt_status_t="vb/wide/state", tilt_status_tpl="{{ value_json.tilt }}", tilt_min=0, tilt_max=180,
        tilt_cmd_tpl='{"pct": {{ tilt_position }}}'), retain=True)
    devices.publish("vb/slats/pos", "100", retain=True)
    devices.publish("vb/slats/tilt", "50", retain=True)
    devices.publish("vb/wide/state", {"tilt": 45}, retain=True)
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
        devices.publish("vb/slats/tilt", "75", retain=True)
        wait_value(client, slats_current, 45, process=provider)
        assert "Traceback" not in provider.log()


def test_off_delay_turns_a_binary_sensor_off_after_its_last_on(homed, broker, devices, processes):
    # A PIR that only says ON (as many do): the provider turns it off, as Home Assistant does.
    devices.publish(f"{P}/binary_sensor/pir/config", {
        "name": "Hall PIR", "uniq_id": "pir-01", "stat_t": "pir/motion", "dev_cla": "motion", "off_dly": 1,
        "dev": {"ids": ["pir-01"], "name": "Hall PIR"}}, retain=True)
    provider = start_provider(homed, broker.url, processes)
    with homed.client() as client:
        found = wait_accessories(client, ["pir-01"], provider)
        motion = ids_of(found["pir-01"])[("pir-01", "MotionDetected")]
        events = EventLog(homed.socket_path)
        events.wait_subscribed()
        try:
            devices.publish("pir/motion", "ON")
            wait_value(client, motion, True, process=provider)
            # ON again before the delay ends: the delay starts again from it.
            time.sleep(0.5)
            again = time.monotonic()
            devices.publish("pir/motion", "ON")
            wait_value(client, motion, False, timeout=10, process=provider)
            assert time.monotonic() - again >= 1.0  # never before a full delay after the last ON
            changes = [e.value.value.bool_value for _, e in events.wait_for(
                lambda e: e.kind == pb.EVENT_VALUE_CHANGED and e.value.characteristic_id == motion, count=2)]
            assert changes == [True, False]  # one ON, one OFF: the second ON changed nothing
            # An OFF from the device itself ends the delay: no second OFF later.
            devices.publish("pir/motion", "ON")
            wait_value(client, motion, True, process=provider)
            devices.publish("pir/motion", "OFF")
            wait_value(client, motion, False, process=provider)
        finally:
            events.close()
        assert "Traceback" not in provider.log()


def test_expire_after_makes_the_device_unreachable_until_its_next_state(homed, broker, devices, processes):
    devices.publish(f"{P}/sensor/bt/temp/config", {
        "name": "Attic temperature", "uniq_id": "bt-temp", "stat_t": "bt/attic/temp", "dev_cla": "temperature",
        "unit_of_meas": "°C", "exp_aft": 2, "dev": {"ids": ["bt-attic"], "name": "Attic sensor"}}, retain=True)
    provider = start_provider(homed, broker.url, processes)
    with homed.client() as client:
        # No state yet: unknown, so unavailable (as in Home Assistant): registered unreachable.
        found = wait_accessories(client, ["bt-attic"], provider, reachable=False)
        temp = ids_of(found["bt-attic"])[("bt-temp", "CurrentTemperature")]
        devices.publish("bt/attic/temp", "18.5")
        wait_accessories(client, ["bt-attic"], provider, reachable=True)
        wait_value(client, temp, 18.5, process=provider)
        # No message for expire_after seconds: unreachable, and a fresh read says why.
        wait_accessories(client, ["bt-attic"], provider, reachable=False)
        code, message = value_of(client, temp, fresh=True)
        assert code == pb.UNAVAILABLE and "entity bt-temp: no state for 2 s (expire_after)" in message
        wait_log(provider, "device bt-attic, entity bt-temp: no state for 2 s (expire_after): unknown, so unavailable")
        # A state again: reachable, with the new value.
        devices.publish("bt/attic/temp", "19.0")
        wait_accessories(client, ["bt-attic"], provider, reachable=True)
        wait_value(client, temp, 19.0, process=provider)
        assert accessories(client)["bt-attic"].reachable
