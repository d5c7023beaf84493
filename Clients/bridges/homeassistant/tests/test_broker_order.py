"""The order of what the bridge sends the broker when it connects."""

from types import SimpleNamespace

from homed_ha.config import Settings
from homed_ha.service import Bridge


class RecordingClient:
    """Stands in for paho's client in `_on_connect`: records each subscription
    with whether the bridge could publish at that moment."""

    def __init__(self, bridge):
        self.bridge = bridge
        self.subscribed = []

    def subscribe(self, topic, qos=0):
        self.subscribed.append((topic, self.bridge.mqtt_connected))


def test_every_subscription_is_sent_before_the_bridge_may_publish():
    bridge = Bridge(Settings(discovery="device"))
    client = RecordingClient(bridge)
    bridge._on_connect(client, None, None, SimpleNamespace(is_failure=False))
    assert [topic for topic, _ in client.subscribed] == bridge.topics.subscriptions()
    # A publication queued before a subscription would replace the retained
    # config an earlier run left before the bridge could read it.
    assert [could_publish for _, could_publish in client.subscribed] == [False] * len(client.subscribed)
    assert bridge.mqtt_connected and bridge.republish.is_set()
