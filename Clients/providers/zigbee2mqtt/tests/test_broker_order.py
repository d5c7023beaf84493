"""The order of what the provider sends the broker when it connects."""

from types import SimpleNamespace

from homed_z2m import service


class RecordingClient:
    """Stands in for paho's client in `_on_connect`: records each subscription
    with whether homed's reads and writes could publish at that moment."""

    def __init__(self, provider):
        self.provider = provider
        self.subscribed = []

    def subscribe(self, topic, qos=0):
        self.subscribed.append((topic, self.provider.broker_connected))


def test_the_subscription_is_sent_before_a_read_or_write_may_publish():
    provider = service.Zigbee2MqttProvider(service.Settings("mqtt://127.0.0.1:1", socket_path="/nonexistent"))
    client = RecordingClient(provider)
    provider._on_connect(client, None, None, SimpleNamespace(is_failure=False))
    # A /get or /set queued before the subscription: the device's answer could
    # reach the broker before the provider is subscribed to it, and be lost.
    assert client.subscribed == [("zigbee2mqtt/#", False)]
    assert provider.broker_connected and provider.reread
