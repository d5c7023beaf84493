"""A device with API encryption: the Noise PSK from the credentials file (mode
0600), the fake device as a real process doing ESPHome's Noise handshake
(noiseprotocol, as the devices' own library does it), and a wrong key."""

import base64

from .esp_helpers import (MAC, FakeDevice, ids_of, start_provider, value_of, wait_accessories, wait_log, wait_value,
                          write_config)
from homed import pb

KEY = base64.b64encode(bytes(range(32))).decode()
OTHER = base64.b64encode(bytes(range(1, 33))).decode()


def test_an_encrypted_device_with_its_key_from_the_credentials_file(homed, workdir, processes):
    device = FakeDevice(workdir, processes, noise_psk=KEY).start()
    config = write_config(workdir, [("secret-device", device.port)], credentials={"secret-device": KEY})
    provider = start_provider(homed, workdir, processes, config)
    with homed.client() as client:
        ids = ids_of(wait_accessories(client, [MAC], provider)[MAC])
        wait_value(client, ids[("light_rgbww_light", "Brightness")], 50, process=provider)
        result = client.write({ids[("switch_relay_1", "On")]: pb.Value(bool_value=True)}, timeout=10).results[0]
        assert (result.code, result.message) == (0, "")
        assert device.wait_command("SwitchCommandRequest") == {"key": 12345680, "state": True}
        assert value_of(client, ids[("switch_relay_1", "On")]) is True


def test_a_wrong_key_is_said_and_nothing_registered(homed, workdir, processes):
    device = FakeDevice(workdir, processes, noise_psk=KEY).start()
    config = write_config(workdir, [("secret-device", device.port)], credentials={"secret-device": OTHER})
    provider = start_provider(homed, workdir, processes, config)
    log = wait_log(provider, "not connected", count=2)
    assert "secret-device (127.0.0.1:%d): not connected: " % device.port in log
    assert "Invalid encryption key" in log
    with homed.client() as client:
        assert MAC not in {a.provider_key for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories}


def test_a_plaintext_device_configured_as_encrypted_is_not_connected_and_retried(homed, workdir, device, processes):
    config = write_config(workdir, [("test-device", device.port)], credentials={"test-device": KEY})
    provider = start_provider(homed, workdir, processes, config)
    log = wait_log(provider, "not connected", count=2)  # tried again, with the backoff
    assert "test-device (127.0.0.1:%d): not connected: " % device.port in log
    with homed.client() as client:
        assert MAC not in {a.provider_key for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories}
