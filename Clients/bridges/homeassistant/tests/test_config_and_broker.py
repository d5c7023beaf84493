"""What the people who run the bridge set: a config file (filters, topics), a
credentials file; and brokers that refuse it, are not there yet, or hold
garbage on its topics."""

import os

from homed_testkit.mqtt_broker import Mosquitto, free_port
from homed_testkit.providers import wait_log

from .ha_peer import HomeAssistantPeer, read_retained
from .home_source import FROM_MQTT, Devices, accessory_ids, make_home, object_id, start_bridge


def sources(homed):
    with homed.client() as client:
        make_home(client)
    return Devices(homed.socket_path).start(), Devices(homed.socket_path, "zigbee2mqtt", FROM_MQTT).start()


def test_a_config_file_chooses_topics_and_what_is_exported(homed, broker, workdir, processes):
    devices, zigbee = sources(homed)
    try:
        # Garbage kept by the broker: on our node's config topic (removed), on another node's (left alone).
        peer = HomeAssistantPeer(broker.port, prefix="ha", base="house").start()
        peer.publish("ha/light/house-1/a999_s1/config", b"\x00garbage", retain=True)
        peer.publish("ha/light/other/a1_s1/config", b'{"x": 1}', retain=True)
        config = os.path.join(workdir, "homed-mqtt.ini")
        with open(config, "w") as f:
            f.write("[mqtt]\ndiscovery_prefix = ha\nbase_topic = house\nnode_id = house-1\n"
                    "[export]\nexclude_providers =\ninclude_rooms = Kitchen\n"
                    "exclude_accessories = Motion, Leak, Smoke, CO, Presence, Door Contact, Remote, Climate Sensor, "
                    "Lamp, Blinds, Back Door Lock, Radiator\n")
        with homed.client() as client:
            found = accessory_ids(client)
        # A command someone published retained: not done at each start of the bridge.
        plug_set = f"house/{object_id(found['plug'], 'Outlet')}/set"
        peer.publish(plug_set, b"ON", retain=True)
        bridge = start_bridge(homed, broker.url, processes, "--config", config)
        expected = {("switch", object_id(found["plug"], "Outlet")), ("switch", object_id(found["0x00124b0001"],
                                                                                          "Outlet"))}
        peer.wait(lambda: set(peer.configs()) >= expected, "the two plugs' configs")
        log = wait_log(bridge, "ha/light/house-1/a999_s1/config: retained garbage on our config topic")
        peer.wait_payload("ha/light/house-1/a999_s1/config", b"")
        wait_log(bridge, f"{plug_set}: retained command b'ON' ignored")
        peer.publish(plug_set, b"", retain=True)
        retained = read_retained(broker.port, "ha/#")
        assert set(retained) == {f"ha/switch/house-1/{obj}/config" for _, obj in expected} | {
            "ha/light/other/a1_s1/config"}
        # Fan Switch is in the Garage: not among the rooms to export; Motion is excluded by name.
        assert f"accessory 'Fan Switch' ({found['fan-switch'].id}) not exported: its room 'Garage'" in log
        assert f"accessory 'Motion' ({found['motion'].id}) not exported: it is excluded by name or id" in log
        plug = peer.configs()[("switch", object_id(found["plug"], "Outlet"))]
        assert plug["command_topic"].startswith("house/") and plug["unique_id"].startswith("house-1_")
        peer.wait_payload("house/bridge/state", b"online")
        assert devices.writes == [] and zigbee.writes == []
        peer.stop()
    finally:
        zigbee.stop()
        devices.stop()


def test_credentials_come_from_a_file_and_a_refusal_is_logged(homed, workdir, processes):
    broker = Mosquitto.with_password(workdir, "homed", "s3cret pass").start()
    devices = None
    try:
        devices, zigbee = sources(homed)
        zigbee.stop()
        anonymous = start_bridge(homed, broker.url, processes)
        wait_log(anonymous, f"broker 127.0.0.1:{broker.port} refused the connection: Not authorized")
        anonymous.kill()
        secrets = os.path.join(workdir, "bridge-credentials")
        with open(secrets, "w") as f:
            f.write("# the broker's account\nusername = homed\npassword = s3cret pass\n")
        bridge = start_bridge(homed, broker.url, processes, "--credentials", secrets, log_name="bridge-2.log")
        wait_log(bridge, f"connected to the broker 127.0.0.1:{broker.port}")
        with open(f"/proc/{bridge.pid}/cmdline", "rb") as f:
            assert b"s3cret" not in f.read()
    finally:
        if devices:
            devices.stop()
        broker.kill()


def test_a_broker_that_is_not_there_yet(homed, workdir, processes):
    devices, zigbee = sources(homed)
    broker = Mosquitto(workdir, free_port())
    try:
        bridge = start_bridge(homed, broker.url, processes)
        wait_log(bridge, f"cannot connect to the broker 127.0.0.1:{broker.port} (trying again")
        broker.start()
        wait_log(bridge, f"connected to the broker 127.0.0.1:{broker.port}", timeout=15)
        peer = HomeAssistantPeer(broker.port).start()
        peer.wait(lambda: len(peer.configs()) > 10, "the configs")
        peer.stop()
    finally:
        zigbee.stop()
        devices.stop()
        broker.kill()


def test_a_wrong_config_file_exits_2_naming_the_key(homed, workdir, processes):
    config = os.path.join(workdir, "bad.ini")
    with open(config, "w") as f:
        f.write("[export]\ninclude_room = Kitchen\n")
    bridge = start_bridge(homed, "mqtt://127.0.0.1:1", processes, "--config", config)
    assert bridge.proc.wait(10) == 2
    wait_log(bridge, "bad.ini: [export] has no key 'include_room' (known: exclude_providers, include_rooms")
