"""Parity with Home Assistant's own MQTT platform tests: each scenario of
tests/recorded/ha_mqtt.json (generate.py replays tests/components/mqtt) is
announced as a discovery config on a real mosquitto, read by the provider as a
process into a real homed, and played message by message; what homed then
holds is compared with the state Home Assistant asserted, and each write with
the command Home Assistant published. Where homed chooses differently, the
difference is named in DIFFERENCES with its reason (the README's parity table
says the same), and the test fails if a named difference does not occur or one
not named does."""

import json
import threading

import paho.mqtt.client as mqtt
import pytest

from homed import pb
from homed_mqtt_devices.values import hs_to_xy, rgb_to_hs, xy_to_hs

from . import recorded
from .mqtt_helpers import accessories, start_provider, value_of, wait_for, wait_log

SCENARIOS = recorded._load("ha_mqtt.json")["scenarios"]

#: Differences homed makes on purpose: name -> why.
REASONS = {
    "no_restore": "homed restores no state at start: an optimistic entity has no value until it is written",
    "assumed_initial": "older Home Assistant showed an entity without a state as off / unlocked; homed has no "
                       "value until the device says one (current Home Assistant says unknown too)",
    "unknown_keeps_value": "a state of None / null says nothing in homed: the wire cannot take a value away, "
                           "so the last one stays",
    "brightness_assumed_full": "Home Assistant's JSON light takes ON without a brightness as full; homed keeps "
                               "no brightness until the light says one",
    "one_colour_mode": "homed writes the colour in the light's first mode of hs, xy, rgb; Home Assistant writes "
                       "every mode the config enables",
    "white_value": "white_value has no HAP counterpart: left out of the write",
    "jinja_statement": "homed reads templates without Jinja; a {% if %} template is refused, naming the key",
    "generic_binary_sensor": "a binary_sensor without a device class HomeKit has has no HAP service; it is "
                             "named in one info line and played again as a motion sensor",
    "generic_sensor": "a sensor without a device class HomeKit has has no HAP service; it is named in one info "
                      "line and played again as a temperature sensor in °C",
    "template_beyond_forms": "homed reads templates of a few forms without Jinja; a filter such as multiply, or "
                             "arithmetic ({{100-62}}), is refused, naming the key",
    "unconfirmed_write": "a write to a cover with a state topic waits for the device to say where it is; Home "
                         "Assistant's test device never answers, so homed's write fails at the echo timeout (the "
                         "command sent is Home Assistant's)",
    "colour_topics_not_mapped": "the default-schema light's rgb_, rgbw_, rgbww_, xy_ and white_ topics are not "
                                "mapped (hs_ is the colour homed reads and writes): what Home Assistant reads or "
                                "sends there, homed does not",
    "effect_not_mapped": "HomeKit has no light effects: effect_command_topic is not written",
    "brightness_before_colour_mode": "Home Assistant's default-schema light shows no brightness until its colour "
                                     "mode is known (a colour or colour temperature said); homed holds the "
                                     "brightness the light said",
    "tilt_open_close_values": "HomeKit tilts to an angle: open and close are 90° and -90°, sent as tilt_max and "
                              "tilt_min; tilt_opened_value and tilt_closed_value are not read",
}
#: Which differences each scenario shows; every other scenario agrees entirely.
DIFFERENCES = {
    "switch_state": {"unknown_keeps_value"},
    "switch_optimistic": {"no_restore"},
    "switch_json_template": {"unknown_keeps_value"},
    "binary_sensor_state": {"generic_binary_sensor", "unknown_keeps_value"},
    "binary_sensor_invalid_payload": {"generic_binary_sensor"},
    "binary_sensor_upper_template": {"generic_binary_sensor"},
    "binary_sensor_jinja_template": {"jinja_statement"},
    "binary_sensor_empty_template": {"jinja_statement"},
    "lock_state": {"assumed_initial"}, "lock_custom_states": {"assumed_initial"},
    "lock_json_template": {"assumed_initial"}, "lock_custom_states_json": {"assumed_initial"},
    "lock_optimistic": {"assumed_initial"}, "lock_explicit_optimistic": {"assumed_initial"},
    "light_json_onoff": {"assumed_initial"},
    "light_json_state": {"assumed_initial"},
    "light_json_optimistic": {"no_restore", "one_colour_mode", "white_value"},
    "light_json_hs_commands": {"assumed_initial", "white_value"},
    "light_json_rgb_commands": {"assumed_initial", "white_value"},
    "light_json_xy_commands": {"assumed_initial", "white_value"},
    "light_json_brightness_scale": {"assumed_initial", "brightness_assumed_full"},
    "light_json_invalid_values": {"assumed_initial"},
    "sensor_state": {"generic_sensor"}, "sensor_json_template": {"generic_sensor"},
    "sensor_expires": {"generic_sensor"}, "sensor_expires_availability": {"generic_sensor"},
    "cover_state_jinja_template": {"jinja_statement"},
    "cover_position_template": {"template_beyond_forms"},
    "cover_set_position_arithmetic": {"template_beyond_forms"},
    "cover_open_command": {"unconfirmed_write"}, "cover_close_command": {"unconfirmed_write"},
    "cover_set_position": {"unconfirmed_write"},
    "cover_tilt_open_close": {"unconfirmed_write"}, "cover_tilt_position": {"unconfirmed_write"},
    "cover_tilt_position_range": {"unconfirmed_write"},
    "cover_tilt_open_close_values": {"unconfirmed_write", "tilt_open_close_values"},
    "light_onoff": {"unknown_keeps_value"},
    "light_state": {"brightness_before_colour_mode", "colour_topics_not_mapped"},
    "light_state_templates": {"template_beyond_forms"},
    "light_on_command_brightness": {"colour_topics_not_mapped"},
    "light_on_command_brightness_scaled": {"colour_topics_not_mapped"},
    "light_effect": {"effect_not_mapped"},
    "light_color_temp_template": {"template_beyond_forms"},
    "light_brightness_template": {"template_beyond_forms"},
    "light_hs_template": {"template_beyond_forms"},
}
#: Configs homed refuses (or does not map): the one log line naming the entity and why.
REFUSED = {
    "light_json_no_command_topic": "refused: no command_topic, which a light needs; left out",
    "binary_sensor_invalid_class": "is a binary_sensor of device_class 'abc123' (no HAP sensor for it); not mapped",
    "binary_sensor_jinja_template": "refused: value_template '{%if is_state(entity_id,\"on\")-%}OFF",
    "binary_sensor_empty_template": "refused: value_template '{%if value == \"ABC\"%}ON{%endif%}'",
    "sensor_invalid_class": "is a sensor of device_class 'foobarnotreal' (no HAP sensor for it); not mapped",
    "cover_state_jinja_template": "refused: value_template '                    {% if (value | multiply(0.01)",
    "cover_position_template": "refused: value_template '{{ (value | multiply(0.01)) | int }}'",
    "cover_set_position_arithmetic": "refused: set_position_template '{{100-62}}'",
    "light_state_templates": "refused: hs_value_template '{{ value_json.hello | join(\",\") }}'",
    "light_color_temp_template": "refused: color_temp_command_template '{{ (1000 / value) | round(0) }}'",
    "light_brightness_template": "refused: brightness_command_template '{{ (1000 / value) | round(0) }}'",
    "light_hs_template": "refused: hs_command_template '{\"hue\": {{ hue | int }}, \"sat\": {{ sat | int}}}'",
}
#: The default-schema light's command topics homed writes.
LIGHT_TOPICS = ("command_topic", "brightness_command_topic", "hs_command_topic", "color_temp_command_topic")
#: Differences that are a template refused (Home Assistant read it).
TEMPLATE_REFUSALS = {"jinja_statement", "template_beyond_forms"}
#: Played in another form, and what the scenario's test checks instead.
PLAYED_AS = {"generic_binary_sensor", "generic_sensor"}
#: Home Assistant's attributes with no HAP counterpart (not compared); a HAP
#: characteristic has its one unit, and homed converts a sensor's into it.
NO_COUNTERPART = {"assumed_state", "supported_features", "effect", "white_value", "unit_of_measurement"}
#: A sensor's device class is its HAP service.
SERVICE_OF = {"motion": "MotionSensor", "temperature": "TemperatureSensor"}
#: The characteristic Home Assistant's state is, by platform.
STATE_OF = {"switch": ("On", {"on": True, "off": False}),
            "binary_sensor": ("MotionDetected", {"on": True, "off": False}),
            "lock": ("LockCurrentState", {"locked": 1, "unlocked": 0}),
            "light": ("On", {"on": True, "off": False}),
            "sensor": ("CurrentTemperature", {}),  # the number itself
            "cover": ("CurrentPosition", {"closed": 0})}  # open: anything above 0
#: Close enough: HAP's Brightness, Hue and Saturation are whole percent and degrees.
TOLERANCE = {"brightness": 1.5, "h": 1, "s": 1, "x": 0.01, "y": 0.01, "r": 3, "g": 3, "b": 3}


class Device:
    """The device of a scenario on the broker: publishes what Home Assistant's
    test fired, records what the provider publishes on its command topics."""

    def __init__(self, port, topics):
        self.received, self.cond = [], threading.Condition()
        self.client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id="ha-parity")
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        for topic in topics:
            info = self.client.subscribe(topic, qos=2)
            assert info[0] == mqtt.MQTT_ERR_SUCCESS

    def _on_message(self, client, userdata, message):
        with self.cond:
            self.received.append((message.topic, message.payload.decode(), message.qos))
            self.cond.notify_all()

    def publish(self, topic, payload, retain=False):
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(5)

    def next_command(self, count, timeout=10.0):
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.received) >= count, timeout), \
                f"no command #{count} within {timeout} s (got {self.received})"
            return self.received[count - 1]

    def stop(self):
        # Disconnecting first ends the network thread at once; stopping the loop
        # first waits out its select (a second).
        self.client.disconnect()
        self.client.loop_stop()


def close(expected, got, key=None):
    """Home Assistant's payload and homed's agree (numbers within TOLERANCE)."""
    if isinstance(expected, dict):
        return isinstance(got, dict) and set(expected) == set(got) and all(close(v, got[k], k)
                                                                            for k, v in expected.items())
    if isinstance(expected, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(expected) == len(got) and all(
            close(v, g, key) for v, g in zip(expected, got))
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        return isinstance(got, (int, float)) and abs(expected - got) <= TOLERANCE.get(key, 0)
    return expected == got


class Run:
    """One scenario played; `differences` the named ones it showed."""

    def __init__(self, name, client, device, provider, service):
        self.name, self.client, self.device, self.provider = name, client, device, provider
        self.scenario = SCENARIOS[name]
        self.ids = {c.type_name: c.id for c in service.characteristics}
        self.service_type = service.type_name
        self.differences, self.compared, self.commands = set(), 0, 0
        self.restored = False
        self.seen = {}  # characteristic -> a value homed has held

    def value(self, ctype):
        return value_of(self.client, self.ids[ctype])

    def expect(self, ctype, expected):
        wait_for(lambda: close(expected, self.value(ctype), "h"), 10,
                 f"{self.name}: {ctype} == {expected!r} (is {self.value(ctype)!r})", self.provider)
        self.seen[ctype] = expected
        self.compared += 1

    def reachable(self):
        return next(iter(accessories(self.client).values())).reachable

    def state(self, entity_state):
        ctype, table = STATE_OF[self.scenario["component"]]
        if entity_state == "unavailable":
            wait_for(lambda: not self.reachable(), 10, f"{self.name}: unreachable", self.provider)
            self.compared += 1
        elif entity_state == "unknown":
            if ctype in self.seen:
                assert self.value(ctype) == self.seen[ctype]
                self.differences.add("unknown_keeps_value")
            else:
                assert self.value(ctype) is None, f"{self.name}: {ctype} has a value before any state"
                self.compared += 1
        elif self.restored:
            assert self.value(ctype) is None
            self.differences.add("no_restore")
        elif ctype not in self.seen and not self.device.received and not self.played:
            assert self.value(ctype) is None, f"{self.name}: {ctype} has a value before any state"
            self.differences.add("assumed_initial")
        elif self.scenario["component"] == "cover" and entity_state == "open":
            wait_for(lambda: (self.value(ctype) or 0) > 0, 10, f"{self.name}: {ctype} above 0 (open)", self.provider)
            self.seen[ctype] = self.value(ctype)
            self.compared += 1
        elif self.scenario["component"] == "sensor":
            self.expect(ctype, float(entity_state))
        else:
            self.expect(ctype, table[entity_state])

    def attribute(self, name, value):
        if name in NO_COUNTERPART or (name == "device_class"
                                      and self.scenario["component"] not in ("binary_sensor", "sensor")):
            return
        if name == "device_class":
            assert self.service_type == SERVICE_OF[value]
            self.compared += 1
            return
        if value is None or value == "unknown":  # the older cover's tilt said "unknown" for none
            ctype = {"brightness": "Brightness", "color_temp": "ColorTemperature", "current_position":
                     "CurrentPosition", "current_tilt_position": "CurrentHorizontalTiltAngle"}.get(name, "Hue")
            if ctype in self.ids and ctype not in self.seen:
                if name == "brightness" and self.default_light() and self.played \
                        and self.played[-1][0] == self.scenario["config"].get("brightness_state_topic"):
                    wait_for(lambda: self.value(ctype) is not None, 10, f"{self.name}: a brightness", self.provider)
                    self.differences.add("brightness_before_colour_mode")
                    return
                assert self.value(ctype) is None
                self.compared += 1
            return
        if self.default_light() and name in ("rgb_color", "rgbw_color", "rgbww_color", "xy_color"):
            self.differences.add("colour_topics_not_mapped")  # the topic it came on is not read
            return
        if self.restored:
            self.differences.add("no_restore")
            return
        if name == "current_position":
            self.expect("CurrentPosition", value)
        elif name == "current_tilt_position":  # a percentage: 0 is -90°, 100 is 90°
            self.expect("CurrentHorizontalTiltAngle", value * 1.8 - 90)
        elif name == "brightness":
            if self.last_message_lacks("brightness"):
                assert self.value("Brightness") == self.seen.get("Brightness")
                self.differences.add("brightness_assumed_full")
                return
            self.expect("Brightness", round(value * 100 / 255))
        elif name == "color_temp":
            self.expect("ColorTemperature", value)
        elif name == "hs_color":
            self.expect("Hue", value[0])
            self.expect("Saturation", value[1])
        elif name == "rgb_color":  # at full brightness, as Home Assistant gives it
            hue, sat = rgb_to_hs(*value)
            self.expect("Hue", round(hue) % 360)
            self.expect("Saturation", round(sat))
        elif name == "xy_color":
            # Home Assistant's xy of the colour homed holds (hue, saturation) is the xy asserted,
            # once the provider has read the message that set it (values arrive one by one).
            def xy_agrees():
                hue, saturation = self.value("Hue"), self.value("Saturation")
                return hue is not None and saturation is not None and close(
                    list(value), list(hs_to_xy(hue, saturation)), "x")
            try:
                wait_for(xy_agrees, 10, f"{self.name}: xy {value}", self.provider)
                self.compared += 1
            except AssertionError:
                self.differences.add("xy_conversion")

    def last_message_lacks(self, key):
        """The last JSON state played (none: the state is what was written) lacks `key`."""
        return not self.default_light() and bool(self.played) and key not in json.loads(self.played[-1][1])

    def default_light(self):
        return self.scenario["component"] == "light" and self.scenario["config"].get("schema") != "json"

    def asked(self, service, args):
        """The HAP write that asks what Home Assistant's service call asked."""
        if service in ("lock", "unlock"):
            return {"LockTargetState": pb.Value(int_value=1 if service == "lock" else 0)}
        cover = {"open_cover": ("TargetPosition", 100), "close_cover": ("TargetPosition", 0),
                 "set_cover_position": ("TargetPosition", args.get("position")),
                 "open_cover_tilt": ("TargetHorizontalTiltAngle", 90),
                 "close_cover_tilt": ("TargetHorizontalTiltAngle", -90),
                 "set_cover_tilt_position": ("TargetHorizontalTiltAngle",
                                             round(args.get("tilt_position", 0) * 1.8 - 90))}
        if service in cover:
            return {cover[service][0]: pb.Value(int_value=cover[service][1])}
        if service == "stop_cover":
            return {"HoldPosition": pb.Value(bool_value=True)}
        if service == "turn_off":
            return {"On": pb.Value(bool_value=False)}
        values = {"On": pb.Value(bool_value=True)}
        if "brightness" in args:
            values["Brightness"] = pb.Value(int_value=round(args["brightness"] * 100 / 255))
        colour = args.get("hs_color") or (xy_to_hs(*args["xy_color"]) if "xy_color" in args else None) \
            or (rgb_to_hs(*args["rgb_color"]) if "rgb_color" in args else None)
        if self.default_light():
            if "effect" in args:
                self.differences.add("effect_not_mapped")
            if {"rgbw_color", "rgbww_color", "white"} & set(args) or (colour and "Hue" not in self.ids):
                self.differences.add("colour_topics_not_mapped")
                colour = None
            if "color_temp" in args:
                values["ColorTemperature"] = pb.Value(int_value=args["color_temp"])
        if colour:
            values["Hue"], values["Saturation"] = (pb.Value(float_value=round(c)) for c in colour)
        return values

    def write(self, service, args):
        values = {self.ids[k]: v for k, v in self.asked(service, args).items()}
        results = self.client.write(values, timeout=15).results
        if any(r.code != 0 and "did not echo" in r.message for r in results):
            self.differences.add("unconfirmed_write")
        else:
            assert [(r.code, r.message) for r in results] == [(0, "")] * len(values), (service, args)
        self.restored = False

    def command(self, topic, payload, qos, as_json):
        self.commands += 1
        got_topic, got, got_qos = self.device.next_command(self.commands)
        assert (got_topic, got_qos) == (topic, qos), (self.name, got_topic, got_qos)
        if isinstance(payload, (int, float)) and not isinstance(payload, bool):
            payload = str(payload)  # Home Assistant's client sends a number as its text
        config = self.scenario["config"]
        ends = {str(config.get("tilt_opened_value")): config.get("tilt_max", 100),
                str(config.get("tilt_closed_value")): config.get("tilt_min", 0)}
        if topic == config.get("tilt_command_topic") and "tilt_opened_value" in config and payload in ends:
            assert got == str(ends[payload]), (self.name, got, payload)  # the end of the tilt's range
            self.differences.add("tilt_open_close_values")
            return
        assert (json.loads(got) == payload) if as_json else self.same_command(topic, payload, got), \
            (self.name, got, payload)
        self.compared += 1

    def same_command(self, topic, expected, got):
        """A default-schema light's command: a brightness within a whole HAP
        percent of the light's scale, a hue and saturation within a degree and a
        percent; anything else as it is."""
        config = self.scenario["config"]
        if expected == got or not self.default_light():
            return expected == got
        try:
            numbers = [float(x) for x in expected.split(",")], [float(x) for x in got.split(",")]
        except ValueError:
            return False
        if topic == config.get("brightness_command_topic"):
            slack = float(config.get("brightness_scale", 255)) / 100
        elif topic == config.get("hs_command_topic"):
            slack = 1
        else:
            slack = 0
        return len(numbers[0]) == len(numbers[1]) and all(abs(a - b) <= slack for a, b in zip(*numbers))

    def light_calls(self, asks, calls, ordered):
        """The commands of one service call to a default-schema light: those on
        the topics homed writes, in order where Home Assistant's test says so."""
        config = self.scenario["config"]
        for service, args in asks[:-1]:  # a turn_off whose command the test did not assert: played all the same
            assert (service, args) == ("turn_off", {}), (self.name, service, args)
            self.write(service, args)
            self.commands += 1
            assert self.device.next_command(self.commands)[0] == config["command_topic"], self.device.received
        service, args = asks[-1]
        mapped = {config.get(k) for k in LIGHT_TOPICS} - {None}
        for topic, _ in calls:
            if topic not in mapped:
                self.differences.add("effect_not_mapped" if topic == config.get("effect_command_topic")
                                     else "colour_topics_not_mapped")
        expected = [(t, p) for t, p in calls if t in mapped]
        self.write(service, args)
        got = []
        for _ in expected:
            self.commands += 1
            got.append(self.device.next_command(self.commands)[:2])
        if not ordered:
            expected, got = sorted(expected), sorted(got)
        assert [t for t, _ in got] == [t for t, _ in expected], (self.name, got, expected)
        for (topic, payload), (_, text) in zip(expected, got):
            assert self.same_command(topic, payload, text), (self.name, topic, text, payload)
            self.compared += 1

    def commands_any_order(self, asks, calls):
        expected = []
        for (service, args), (topic, payload) in zip(asks, calls):
            payload = dict(payload)
            if "white_value" in args:
                payload.pop("white_value")
                self.differences.add("white_value")
            self.write(service, args)
            self.commands += 1
            got_topic, got, _ = self.device.next_command(self.commands)
            got = json.loads(got)
            colour = payload.get("color", {})
            if len(colour) > 3 and set(got.get("color", {})) < set(colour):
                # Every mode in Home Assistant's; homed's one mode must agree with its part.
                payload["color"] = {k: colour[k] for k in got["color"]}
                self.differences.add("one_colour_mode")
            expected.append(payload)
            assert got_topic == topic, (self.name, got_topic)
            if ("xy_color" in args or "x" in payload.get("color", {})) and not close(payload, got):
                self.differences.add("xy_conversion")  # the colour asked in xy, converted as homed converts
                continue
            assert close(payload, got), (self.name, args, got, payload)
            self.compared += 1

    def play(self):
        steps, index, asks = self.scenario["steps"], 0, []
        self.played = []
        for step in steps:
            kind = step[0]
            if kind == "message":
                self.device.publish(step[1], step[2])
                self.played.append((step[1], step[2]))
            elif kind == "restored":
                self.restored = True
            elif kind == "state":
                self.state(step[2])
            elif kind == "state_not":
                assert step[2] == "unavailable"
                wait_for(self.reachable, 10, f"{self.name}: reachable", self.provider)
                self.compared += 1
            elif kind == "attribute":
                self.attribute(step[2], step[3])
            elif kind == "asked":
                asks.append((step[1], step[2]))
            elif kind in ("command", "command_json"):
                self.write(*asks.pop())
                self.command(step[1], step[2], step[3], kind == "command_json")
            elif kind in ("commands_any_order", "commands_in_order") and self.default_light():
                self.light_calls(asks, step[1], kind == "commands_in_order")
                asks = []
            elif kind == "commands_any_order":
                self.commands_any_order(asks, step[1])
                asks = []
            elif kind == "logged":
                topic, payload = self.played[-1]
                # Home Assistant's warning is its own words; homed's line names the topic and the payload.
                wait_log(self.provider, f"{topic}: device {self.name_key}, entity {self.name_key}: state ")
                template = self.scenario["config"].get("value_template", "")
                rendered = payload.upper() if "| upper" in template else payload
                wait_log(self.provider, f"{rendered!r} is none of")
                self.compared += 1


def announce(device, name, config):
    device.publish(f"homeassistant/{SCENARIOS[name]['component']}/{name}/config", json.dumps(config), retain=True)


def start(homed, broker, processes, name, config):
    topics = [v for k, v in config.items() if k.endswith("command_topic") or k == "set_position_topic"]
    device = Device(broker.port, topics)
    announce(device, name, config)
    provider = start_provider(homed, broker.url, processes, "--no-shelly-discovery", "--no-tasmota")
    return device, provider


@pytest.fixture
def devices():
    started = []
    yield started
    for device in started:
        device.stop()


def played_config(name):
    """The scenario's config; a binary_sensor without a device class HAP has, as
    a motion sensor; a sensor without one, as a temperature sensor in °C."""
    config = dict(SCENARIOS[name]["config"])
    if SCENARIOS[name]["component"] == "binary_sensor" and "device_class" not in config:
        config["device_class"] = "motion"
    if SCENARIOS[name]["component"] == "sensor" and "device_class" not in config:
        config["device_class"] = "temperature"
        config.pop("unit_of_measurement", None)  # "fav unit" is no temperature's
    return config


@pytest.mark.parametrize("name", sorted(set(SCENARIOS) - set(REFUSED)))
def test_homed_holds_what_home_assistant_asserted(homed, broker, processes, devices, name):
    config = played_config(name)
    device, provider = start(homed, broker, processes, name, config)
    devices.append(device)
    client = homed.client()
    with client:
        found = wait_for(lambda: accessories(client), 15, "the scenario's accessory", provider)
        (key, accessory), = found.items()
        run = Run(name, client, device, provider, accessory.services[1])
        run.name_key = key
        run.play()
        assert run.differences == DIFFERENCES.get(name, set()) - PLAYED_AS, \
            f"{name}: {sorted(run.differences)} (named: {sorted(DIFFERENCES.get(name, ()))})"
        assert run.compared + len(run.differences) > 0


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_config_homed_refuses_is_one_line_naming_it(homed, broker, processes, devices, name):
    device, provider = start(homed, broker, processes, name, SCENARIOS[name]["config"])
    devices.append(device)
    topic = f"homeassistant/{SCENARIOS[name]['component']}/{name}/config"
    log = wait_log(provider, REFUSED[name])
    line, = [line for line in log.splitlines() if REFUSED[name] in line]
    assert f"{topic}: " in line and name in line
    with homed.client() as client:
        assert accessories(client) == {}
    # What Home Assistant did with it: the same (no entity), or, for a template, read it.
    ha_refused = ["state", f"{SCENARIOS[name]['component']}.test", None] in SCENARIOS[name]["steps"]
    assert ha_refused == (not DIFFERENCES.get(name, set()) & TEMPLATE_REFUSALS)


@pytest.mark.parametrize("name", sorted(n for n, s in SCENARIOS.items() if s["component"] in ("binary_sensor", "sensor")
                                        and "device_class" not in s["config"] and n not in REFUSED))
def test_a_generic_sensor_is_named_and_not_mapped(homed, broker, processes, devices, name):
    component = SCENARIOS[name]["component"]
    assert f"generic_{component}" in DIFFERENCES[name]
    device, provider = start(homed, broker, processes, name, SCENARIOS[name]["config"])
    devices.append(device)
    unit = SCENARIOS[name]["config"].get("unit_of_measurement")
    wait_log(provider, f"homeassistant/{component}/{name}/config: {component} {component}/{name} (unique_id "
                       f"{component}/{name}) is a {component} of device_class None"
                       + (f" ({unit})" if unit else "") + " (no HAP sensor for it); not mapped")


def test_every_difference_has_its_reason_and_every_scenario_is_played():
    named = set().union(*DIFFERENCES.values())
    assert named <= set(REASONS) and set(REASONS) <= named
    assert set(DIFFERENCES) <= set(SCENARIOS) and set(REFUSED) <= set(SCENARIOS)
    assert len(SCENARIOS) >= 65
