"""Device-based discovery (`--discovery device`): one retained config per
accessory at `homeassistant/device/<node>/a<id>/config`, each entity a
component of it; components removed the documented way (`p` alone), devices
removed by an empty config; a switch of form leaves no config of the other."""

import json

from homed_testkit.providers import wait_log

from . import ha_checker
from .ha_peer import read_retained
from .home_source import ACCESSORIES, EXPECTED, Devices, accessory_ids, make_home, object_id, start_bridge


def setup(homed, broker, ha, processes, *extra):
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    bridge = start_bridge(homed, broker.url, processes, *extra)
    ha.wait(lambda: len(ha.configs()) >= len(EXPECTED), "every entity, discovered")
    wait_log(bridge, "home loaded")
    ha.wait_payload("homed/bridge/state", b"online")
    with homed.client() as client:
        found = accessory_ids(client, "devices")
    return devices, bridge, found


def device_topic(accessory):
    return f"homeassistant/device/homed/a{accessory.id}/config"


def test_every_accessory_is_one_device_config_with_its_entities_as_components(homed, broker, ha, processes):
    devices, bridge, found = setup(homed, broker, ha, processes, "--discovery", "device")
    try:
        expected = {(component, object_id(found[key], service)) for component, key, service in EXPECTED}
        assert set(ha.configs()) == expected
        by_device = ha.device_configs()
        # One per exported accessory (the fan exports nothing; the zigbee2mqtt one is not here)
        assert set(by_device) == {f"a{found[key].id}" for _, key, _ in EXPECTED}
        for obj, config in by_device.items():
            assert ha_checker.device_problems(config) == [], (obj, config)
            assert config["dev"]["identifiers"] == [f"homed_{obj[1:]}"]
            assert config["o"]["name"] == "homed-mqtt"
            assert config["availability"] == [{"topic": "homed/bridge/state"},
                                              {"topic": f"homed/{obj[1:]}/availability"}]
        # No config of the single-entity form beside them.
        retained = read_retained(broker.port, "homeassistant/#")
        assert all(topic.startswith("homeassistant/device/homed/") for topic in retained)
        sensor = by_device[f"a{found['climate-sensor'].id}"]
        assert len(sensor["cmps"]) == 5 and {c["p"] for c in sensor["cmps"].values()} == {"sensor", "binary_sensor"}
        # States and commands as in the other form.
        plug_obj = object_id(found["plug"], "Outlet")
        ha.publish(f"homed/{plug_obj}/set", "ON")
        ha.wait_payload(f"homed/{plug_obj}/state", {"state": "ON"})
        assert "Traceback" not in bridge.log()
    finally:
        devices.stop()


def test_a_removed_service_is_a_component_with_its_platform_alone_and_a_removed_accessory_an_empty_config(
        homed, broker, ha, processes):
    devices, bridge, found = setup(homed, broker, ha, processes, "--discovery", "device")
    try:
        sensor = found["climate-sensor"]
        light_obj = object_id(sensor, "LightSensor")
        changed = json.loads(json.dumps(next(a for a in ACCESSORIES if a["key"] == "climate-sensor")))
        changed["services"] = [s for s in changed["services"] if s["type"] != "LightSensor"]
        devices.provider.update([changed])
        topic = device_topic(sensor)
        ha.wait(lambda: ha_checker.removed(ha.json(topic) or {}) == {light_obj: "sensor"},
                "the light sensor removed from the device")
        config = ha.json(topic)
        assert ha_checker.device_problems(config) == []
        assert len(ha_checker.expand(config)) == 4  # the other entities stay
        ha.wait_payload(f"homed/{light_obj}/state", b"")
        # An accessory removed: its device config emptied, with its states and availability.
        lamp = found["lamp"]
        devices.provider.remove(["lamp"])
        ha.wait_payload(device_topic(lamp), b"")
        ha.wait_payload(f"homed/{object_id(lamp, 'Lightbulb')}/state", b"")
        ha.wait_payload(f"homed/{lamp.id}/availability", b"")
        # The bridge stopped, a service removed meanwhile: started again, the
        # device it held on the broker says so the same way.
        bridge.kill()
        humidity_obj = object_id(sensor, "HumiditySensor")
        changed["services"] = [s for s in changed["services"] if s["type"] != "HumiditySensor"]
        devices.provider.update([changed])
        start_bridge(homed, broker.url, processes, "--discovery", "device", log_name="bridge-2.log")
        # A bridge's start (a Python process, the broker's retained configs, GetHome)
        # on a busy machine: waited for as long as that takes.
        ha.wait(lambda: ha_checker.removed(ha.json(topic) or {}) == {humidity_obj: "sensor"},
                "the humidity sensor removed from the device after a restart", timeout=30.0)
        ha.wait_payload(f"homed/{humidity_obj}/state", b"")
        assert len(ha_checker.expand(ha.json(topic))) == 3
        retained = read_retained(broker.port, "homeassistant/#")
        assert device_topic(lamp) not in retained
        assert len(retained) == len({key for _, key, _ in EXPECTED}) - 1
    finally:
        devices.stop()


def test_switching_the_form_removes_every_config_of_the_other(homed, broker, ha, processes):
    devices, bridge, found = setup(homed, broker, ha, processes)
    try:
        entity_topics = set(read_retained(broker.port, "homeassistant/#"))
        assert len(entity_topics) == len(EXPECTED)
        bridge.kill()
        bridge = start_bridge(homed, broker.url, processes, "--discovery", "device", log_name="bridge-2.log")
        accessories = {found[key].id for _, key, _ in EXPECTED}
        ha.wait(lambda: len(ha.device_configs()) == len(accessories), "every device config")
        ha.wait(lambda: all(not ha.retained.get(t) for t in entity_topics), "every entity config emptied")
        retained = read_retained(broker.port, "#")
        assert {t for t in retained if t.startswith("homeassistant/")} == {
            f"homeassistant/device/homed/a{aid}/config" for aid in accessories}
        # The states the entities share across forms are kept.
        assert json.loads(retained[f"homed/{object_id(found['lamp'], 'Lightbulb')}/state"])["state"] == "OFF"
        # And back: the device configs emptied, one per entity again.
        bridge.kill()
        start_bridge(homed, broker.url, processes, log_name="bridge-3.log")
        ha.wait(lambda: not ha.device_configs() and len(ha.configs()) == len(EXPECTED), "entity configs again")
        assert {t for t in read_retained(broker.port, "homeassistant/#")} == entity_topics
    finally:
        devices.stop()
