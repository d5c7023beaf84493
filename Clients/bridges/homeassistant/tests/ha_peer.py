"""Home Assistant as the broker sees it: a paho client subscribed to the
discovery prefix and the bridge's base topic, recording every message, able to
announce itself (`homeassistant/status`) and to send commands. Waits are
bounded and say what they waited for."""

import json
import threading
import time

import paho.mqtt.client as mqtt

from . import ha_checker


class HomeAssistantPeer:
    def __init__(self, port, prefix="homeassistant", base="homed"):
        self.port, self.prefix, self.base = port, prefix, base
        self.cond = threading.Condition()
        self.retained = {}  # topic -> last payload (b"" removed)
        self.history = []  # (topic, payload, retain flag), in order
        self.connected = threading.Event()
        self.client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2,
                                  client_id=f"ha-peer-{id(self)}")
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message

    def start(self):
        self.client.connect("127.0.0.1", self.port, keepalive=10)
        self.client.loop_start()
        if not self.connected.wait(10):
            raise AssertionError("the Home Assistant peer did not connect to mosquitto")
        return self

    def stop(self):
        self.client.disconnect()
        self.client.loop_stop()

    def reconnect(self):
        """After the broker restarted: a fresh session (paho reconnects by itself, waits for it)."""
        self.connected.clear()
        deadline = time.monotonic() + 15
        while not self.connected.wait(0.2):
            if time.monotonic() > deadline:
                raise AssertionError("the Home Assistant peer did not reconnect to mosquitto")

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        if reason.is_failure:
            return
        client.subscribe([(f"{self.prefix}/#", 1), (f"{self.base}/#", 1)])
        self.connected.set()

    def _on_message(self, client, userdata, message):
        with self.cond:
            self.retained[message.topic] = message.payload
            self.history.append((message.topic, message.payload, message.retain))
            self.cond.notify_all()

    # -- what the broker holds -------------------------------------------------

    def configs(self):
        """{(component, object id): config} of every non-empty config seen last;
        a device-based config's components as the entities they describe."""
        found = {}
        for (component, object_id), config in self._configs().items():
            if component == "device":
                found.update(ha_checker.expand(config))
            else:
                found[(component, object_id)] = config
        return found

    def device_configs(self):
        """{object id: config} of the device-based configs seen last."""
        return {object_id: config for (component, object_id), config in self._configs().items()
                if component == "device"}

    def _configs(self):
        with self.cond:
            found = {}
            for topic, payload in self.retained.items():
                parts = topic.split("/")
                if topic.startswith(self.prefix + "/") and len(parts) == 5 and parts[4] == "config" and payload:
                    try:
                        found[(parts[1], parts[3])] = json.loads(payload)
                    except ValueError:  # garbage a test put there
                        continue
            return found

    def json(self, topic):
        with self.cond:
            payload = self.retained.get(topic)
        return None if not payload else json.loads(payload)

    def wait(self, condition, what, timeout=10.0):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                result = condition()
                if result:
                    return result
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"{what} not within {timeout} s; last messages: {self.history[-8:]}")
                self.cond.wait(min(remaining, 0.2))

    def wait_payload(self, topic, expected, timeout=10.0):
        """The topic's last message is `expected` (bytes), or a JSON object that
        contains every key of `expected` (a dict)."""
        def ok():
            payload = self.retained.get(topic)
            if isinstance(expected, dict):
                try:
                    got = json.loads(payload) if payload else None
                except ValueError:
                    return False
                return isinstance(got, dict) and all(got.get(k) == v for k, v in expected.items())
            return payload == expected
        return self.wait(ok, f"{topic} = {expected!r}", timeout)

    def count(self, topic, payload=None):
        with self.cond:
            return sum(1 for t, p, _ in self.history if t == topic and (payload is None or p == payload))

    def mark(self):
        with self.cond:
            return len(self.history)

    def since(self, mark, topic=None):
        with self.cond:
            return [(t, p, r) for t, p, r in self.history[mark:] if topic is None or t == topic]

    def publish(self, topic, payload, retain=False):
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(5)


def read_retained(port, topics_filter, timeout=10.0):
    """A fresh subscriber's view of the broker: {topic: payload} of the retained
    messages under the filter (what a Home Assistant starting now would get).
    Complete once a marker published after the subscription came back: mosquitto
    sends a subscription's retained messages before anything published later."""
    got = {}
    subscribed, done = threading.Event(), threading.Event()
    marker = f"homed-test/marker/{id(got)}"
    client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2)

    def on_connect(c, u, f, r, p=None):
        c.subscribe([(topics_filter, 1), (marker, 1)])

    def on_subscribe(c, u, mid, reasons, p=None):
        subscribed.set()

    def on_message(c, u, m):
        if m.topic == marker:
            done.set()
        elif m.retain:
            got[m.topic] = m.payload

    client.on_connect, client.on_message, client.on_subscribe = on_connect, on_message, on_subscribe
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        if not subscribed.wait(timeout):
            raise AssertionError("the fresh subscriber did not subscribe")
        client.publish(marker, b"end", qos=1)
        if not done.wait(timeout):
            raise AssertionError("the fresh subscriber's marker did not come back")
        return {t: p for t, p in got.items() if p}
    finally:
        client.disconnect()
        client.loop_stop()
