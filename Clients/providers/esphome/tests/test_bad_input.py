"""Bad input from a device: one that drops the connection mid-handshake (the
fake device closes the socket once the client's Hello is in, unanswered, or
after half of its answer's frame). One log line naming the device and what
happened each try, tried again with the backoff, while another device of the
same provider keeps working; when it behaves again it is registered and
reachable as any. (A wrong Noise key: test_noise.py; an entity type the
mapping does not know: test_end_to_end.py, the left-out line.)"""

import pytest

from homed import pb

from .esp_helpers import (MAC, FakeDevice, accessories, definition, ids_of, start_provider, value_of,
                          wait_accessories, wait_log, wait_value, write_config)
from .test_noise import KEY

FLAKY_MAC = "11:22:33:44:55:66"


def flaky_definition():
    data = definition()
    data["device_info"].update(mac_address=FLAKY_MAC, friendly_name="Flaky Device", name="flaky")
    return data


def write(client, cid, value, timeout=10.0):
    result = client.write({cid: value}, timeout=timeout).results[0]
    return result.code, result.message


def dropped(flaky, how, timeout=10.0):
    return flaky.process.expect("dropped", timeout, where=lambda e: e["how"] == how)


def tries_of(log, name):
    return [line for line in log.splitlines() if line.startswith("INFO homed-esphome: " + name + " (")
            and "not connected" in line]


def test_a_device_that_drops_the_connection_mid_handshake(homed, workdir, device, processes):
    flaky = FakeDevice(workdir, processes, extra=["--drop", "hello"])
    flaky.starts = 100  # its own files in the work directory
    flaky.start(flaky_definition())
    config = write_config(workdir, [("test-device", device.port), ("flaky", flaky.port)])
    provider = start_provider(homed, workdir, processes, config)
    said = (f"INFO homed-esphome: flaky (127.0.0.1:{flaky.port}): not connected: it closed the connection during "
            f"the API's handshake (127.0.0.1: EOF received); trying again in ")
    with homed.client() as client:
        ids = ids_of(wait_accessories(client, [MAC], provider)[MAC])
        # Closed once the Hello is in: one line a try, naming the device and
        # what happened, and tried again with the backoff (0.5 s, then 1 s).
        dropped(flaky, "hello")
        log = wait_log(provider, said, count=2)
        tries = tries_of(log, "flaky")
        assert tries[:2] == [said + "0.5 s", said + "1.0 s"]
        assert "Traceback" not in log and "flaky" not in log.replace(said, "")
        # Meanwhile the other device keeps working: its values and its writes.
        temperature = ids[("sensor_living_room_temperature", "CurrentTemperature")]
        device.send({"state": "living_room_temperature", "fields": {"state": 22.5}})
        wait_value(client, temperature, pytest.approx(22.5), process=provider)
        relay = ids[("switch_relay_1", "On")]
        assert write(client, relay, pb.Value(bool_value=True)) == (0, "")
        assert device.wait_command("SwitchCommandRequest") == {"key": 12345680, "state": True}
        assert value_of(client, relay) is True
        assert FLAKY_MAC not in accessories(client)
        # Half of the HelloResponse's frame, then closed: said the same way.
        flaky.send({"drop": "frame"})
        dropped(flaky, "frame", timeout=15)
        wait_log(provider, said, count=len(tries) + 1)
        assert FLAKY_MAC not in accessories(client)
        assert accessories(client)[MAC].reachable is True
        # Behaving again: registered, reachable, at its next try.
        flaky.send({"drop": None})
        found = wait_accessories(client, [MAC, FLAKY_MAC], provider, timeout=20)
        flaky_ids = ids_of(found[FLAKY_MAC])
        wait_value(client, flaky_ids[("light_rgbww_light", "Brightness")], 50, process=provider)
        assert write(client, flaky_ids[("switch_relay_1", "On")], pb.Value(bool_value=True)) == (0, "")
        assert flaky.wait_command("SwitchCommandRequest") == {"key": 12345680, "state": True}
        # Lost, and dropping mid-handshake when the provider comes back:
        # unreachable, tried again, said; the other device stays reachable.
        before = len(tries_of(wait_log(provider, said), "flaky"))
        flaky.send({"drop": "frame", "close": True})
        wait_accessories(client, [FLAKY_MAC], provider, reachable=False)
        wait_log(provider, said, count=before + 1)
        assert accessories(client)[MAC].reachable is True
        assert write(client, relay, pb.Value(bool_value=False)) == (0, "")
        flaky.send({"drop": None})
        found = wait_accessories(client, [FLAKY_MAC, MAC], provider, timeout=20)
        assert ids_of(found[FLAKY_MAC]) == flaky_ids
        assert device.commands("SwitchCommandRequest")[-1] == {"key": 12345680}  # off is protobuf's default
        assert "Traceback" not in provider.log()


def test_an_encrypted_device_that_drops_the_connection_mid_handshake(homed, workdir, processes):
    flaky = FakeDevice(workdir, processes, noise_psk=KEY, extra=["--drop", "frame"]).start()
    config = write_config(workdir, [("secret-device", flaky.port)], credentials={"secret-device": KEY})
    provider = start_provider(homed, workdir, processes, config)
    said = (f"INFO homed-esphome: secret-device (127.0.0.1:{flaky.port}): not connected: it closed the connection "
            f"during the API's handshake (127.0.0.1: EOF received); trying again in ")
    dropped(flaky, "frame")  # half of Noise's server hello
    log = wait_log(provider, said, count=2)
    assert tries_of(log, "secret-device")[:2] == [said + "0.5 s", said + "1.0 s"]
    with homed.client() as client:
        assert MAC not in accessories(client)
        flaky.send({"drop": None})
        ids = ids_of(wait_accessories(client, [MAC], provider, timeout=20)[MAC])
        wait_value(client, ids[("light_rgbww_light", "Brightness")], 50, process=provider)
