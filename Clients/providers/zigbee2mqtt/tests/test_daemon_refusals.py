"""What the daemon refuses of what devices bring, pinned: the provider keeps a
refused accessory out and registers the others; a device's values the daemon
keeps, a name with "/" it refuses. Runs the provider in this process (to give it
an accessory the mapping never makes) against a real homed and a real
mosquitto."""

import logging
import threading

import pytest

from . import devices
from homed import pb
from homed_z2m import service
from homed_z2m.mapping import map_device
from .test_end_to_end import SUPPORTED
from .z2m_helpers import accessories, value_of, wait_accessories, wait_for

CT_BULB = devices.ieee(1)
REFUSAL = ('accessory 1 (key "0x00124b0000000001"), service 1 ("Lightbulb"), characteristic 4 ("CurrentTemperature"): '
           "service type Lightbulb has no characteristic CurrentTemperature; it has ActiveTransitionCount, Brightness, "
           "ColorTemperature, Hue, Name, On, Saturation, SupportedTransitionConfiguration, TransitionControl (a "
           "characteristic of your own needs a full UUID outside the catalog)")


def with_a_refused_characteristic(device):
    """One bulb as no mapping would make it: a CurrentTemperature in its Lightbulb."""
    dm = map_device(device)
    if dm.ieee == CT_BULB:
        dm.accessory["services"][0]["characteristics"].append({"type": "CurrentTemperature"})
    return dm


@pytest.fixture
def in_process(homed, coordinator, monkeypatch):
    monkeypatch.setattr(service, "map_device", with_a_refused_characteristic)
    provider = service.Zigbee2MqttProvider(service.Settings(f"mqtt://127.0.0.1:{coordinator.port}",
                                                            socket_path=homed.socket_path))
    thread = threading.Thread(target=provider.run, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        provider.stop()
        thread.join(10)


def test_a_refused_accessory_is_left_out_and_the_others_registered(homed, in_process, caplog):
    """One accessory the daemon refuses fails the whole registration call, naming
    it by position: the provider leaves that one out and registers the others."""
    caplog.set_level(logging.INFO, logger="homed-zigbee2mqtt")
    with homed.client() as client:
        others = SUPPORTED - {CT_BULB}
        wait_accessories(client, others, None)
        assert CT_BULB not in accessories(client)
        wait_for(lambda: any("homed refused its registration" in r.getMessage() for r in caplog.records),
                 what="the refusal in the log")
        refusal = next(r.getMessage() for r in caplog.records if "homed refused its registration" in r.getMessage())
        assert refusal == f"device 'kitchen/ceiling' ({CT_BULB}): homed refused its registration: {REFUSAL}; " \
                          "registering the others"
        assert in_process.refused.keys() == {CT_BULB}


def test_device_values_are_kept_and_names_still_refused(homed):
    """A device's values are facts to the daemon: a humidity off the step is
    rounded to it and 0 lux under the catalog's minimum is kept; a name with "/"
    is still refused, so the provider fits names itself."""
    from homed.provider import Provider
    from homed import HomedError
    kept = {
        "humidity": ({"type": "HumiditySensor", "characteristics": [{"type": "CurrentRelativeHumidity",
                                                                     "value": 51.92}]}, "Bedroom climate",
                     ("HumiditySensor", "CurrentRelativeHumidity"), 52.0),
        "lux": ({"type": "LightSensor", "characteristics": [{"type": "CurrentAmbientLightLevel", "value": 0.0}]},
                "Hall motion", ("LightSensor", "CurrentAmbientLightLevel"), 0.0),
    }
    with homed.client() as client:
        for key, (svc, name, (service_type, characteristic), expected) in kept.items():
            provider = Provider(f"probe-{key}", [{"key": key, "name": name, "category": "SENSOR",
                                                  "services": [svc]}],
                                socket_path=homed.socket_path, takeover_wait=0.1)
            thread = threading.Thread(target=provider.run, daemon=True)
            thread.start()
            try:
                assert provider.wait_registered(timeout=10)
                cid = provider.id_of((key, service_type, characteristic))
                assert cid is not None
                assert value_of(client, cid) == expected
                if key == "humidity":
                    # Reported off the step twice: kept rounded, and said once in homed's log.
                    for reading in (48.37, 48.81):
                        provider.report({(key, service_type, characteristic): reading})
                    assert value_of(client, cid) == 49.0
                    said = f"characteristic {cid}: the device reported 48.37; kept 48"
                    assert homed.log().count(f"characteristic {cid}: the device reported") == 1, homed.log()
                    assert said in homed.log()
            finally:
                provider.stop()
                thread.join(10)
    provider = Provider("probe-slash", [{"key": "slash", "name": "kitchen/ceiling", "category": "SWITCH",
                                         "services": [{"type": "Switch", "characteristics": [
                                             {"type": "On", "value": True}]}]}],
                        socket_path=homed.socket_path, takeover_wait=0.1)
    with pytest.raises(HomedError) as caught:
        provider.run()
    assert caught.value.code == pb.INVALID_ARGUMENT
    assert 'the accessory name "kitchen/ceiling" has a "/" at position 8' in caught.value.message
