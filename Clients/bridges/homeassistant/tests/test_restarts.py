"""Restarts of each side: the bridge, homed, mosquitto. Nothing is lost (a change
made while one was away is on the broker after) and nothing stale is left."""

import json
import os

from homed.provider import Ref
from homed_testkit.providers import wait_for, wait_log

from .ha_peer import read_retained
from .home_source import ACCESSORIES, EXPECTED, Devices, accessory_ids, make_home, object_id, start_bridge


def setup(homed, broker, ha, processes):
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    bridge = start_bridge(homed, broker.url, processes)
    ha.wait(lambda: len(ha.configs()) >= len(EXPECTED), "every discovery config")
    ha.wait_payload("homed/bridge/state", b"online")  # following homed's events
    with homed.client() as client:
        found = accessory_ids(client, "devices")
    return devices, bridge, found


def test_the_bridge_killed_and_restarted_publishes_what_changed_and_removes_what_went(homed, broker, ha,
                                                                                      processes):
    devices, bridge, found = setup(homed, broker, ha, processes)
    try:
        lamp_state = f"homed/{object_id(found['lamp'], 'Lightbulb')}/state"
        leak_config = f"homeassistant/binary_sensor/homed/{object_id(found['leak'], 'LeakSensor')}/config"
        leak_state = f"homed/{object_id(found['leak'], 'LeakSensor')}/state"
        ha.wait_payload(lamp_state, {"state": "OFF"})
        bridge.kill()
        ha.wait_payload("homed/bridge/state", b"offline")  # its last will: every entity unavailable
        # While it is away: a device changes, an accessory goes.
        devices.report("lamp", "Lightbulb", "On", True)
        devices.provider.remove(["leak"])
        bridge = start_bridge(homed, broker.url, processes, log_name="bridge-2.log")
        ha.wait_payload(lamp_state, {"state": "ON"})
        ha.wait_payload(leak_config, b"")
        ha.wait_payload(leak_state, b"")
        ha.wait_payload(f"homed/{found['leak'].id}/availability", b"")
        ha.wait_payload("homed/bridge/state", b"online")
        log = wait_log(bridge, f"{leak_config}: no such entity in homed now; its config removed")
        assert "Traceback" not in log
        retained = read_retained(broker.port, "#")
        assert leak_config not in retained and leak_state not in retained
        assert f"homed/{found['leak'].id}/availability" not in retained
        assert json.loads(retained[lamp_state])["state"] == "ON"
        assert len([t for t in retained if t.startswith("homeassistant/")]) == len(EXPECTED) - 1
    finally:
        devices.stop()


def test_homed_restarted_on_its_database_resumes_with_nothing_lost(stored_homed, broker, ha, processes):
    homed = stored_homed
    devices, bridge, found = setup(homed, broker, ha, processes)
    try:
        lamp_state = f"homed/{object_id(found['lamp'], 'Lightbulb')}/state"
        plug_state = f"homed/{object_id(found['plug'], 'Outlet')}/state"
        ha.wait_payload(lamp_state, {"state": "OFF", "brightness": 102})
        homed.kill()
        # homed gone: the bridge says its entities are not live, and a command is dropped, said so.
        ha.wait_payload("homed/bridge/state", b"offline")
        plug_set = f"homed/{object_id(found['plug'], 'Outlet')}/set"
        ha.publish(plug_set, "ON")
        wait_log(bridge, f"{plug_set}: entity 'Kettle Plug' (accessory {found['plug'].id}) switch "
                         f"{object_id(found['plug'], 'Outlet')}: the write could not reach homed")
        # The device changes while homed is away (nobody is told); homed re-reads it on return.
        with devices.lock:
            devices.values[Ref("lamp", "Lightbulb", "On")] = True
            devices.values[Ref("lamp", "Lightbulb", "Brightness")] = 70
        homed.start()
        ha.wait_payload(lamp_state, {"state": "ON", "brightness": 178}, timeout=20)
        ha.wait_payload("homed/bridge/state", b"online")
        # Resumed or resynced (as homed's journal allows), nothing was lost.
        assert "lost homed" in bridge.log()
        # Changes and commands after the restart flow as before.
        devices.report("plug", "Outlet", "On", True)
        ha.wait_payload(plug_state, {"state": "ON"})
        ha.publish(f"homed/{object_id(found['lamp'], 'Lightbulb')}/set", '{"state": "OFF"}')
        ha.wait_payload(lamp_state, {"state": "OFF"})
        retained = read_retained(broker.port, "homeassistant/#")
        assert len(retained) == len(EXPECTED)  # the same entities: ids survive homed's restart
        assert "Traceback" not in bridge.log()
    finally:
        devices.stop()


def test_a_new_homed_resyncs_and_leaves_nothing_stale(homed, broker, ha, processes):
    """homed started again with nothing (in memory): a new journal, so a RESYNC;
    the provider registers again, and the broker ends up with exactly its entities."""
    devices, bridge, found = setup(homed, broker, ha, processes)
    try:
        old_configs = set(read_retained(broker.port, "homeassistant/#"))
        homed.kill()
        ha.wait_payload("homed/bridge/state", b"offline")
        with devices.lock:
            devices.values[Ref("lamp", "Lightbulb", "On")] = True
        # A new, empty homed; make the first accessory id differ from before, so
        # that every entity's object id changes and the old ones must go.
        homed.start()
        with homed.client() as client:
            make_home(client, rooms=("Hall",))
        log = wait_log(bridge, "homed resync")
        with homed.client() as client:
            def registered():
                found = accessory_ids(client, "devices")
                return found if len(found) == len(ACCESSORIES) else None
            now = wait_for(registered, 15, "the provider registered again in the new homed", bridge)
        lamp_state = f"homed/{object_id(now['lamp'], 'Lightbulb')}/state"
        ha.wait_payload(lamp_state, {"state": "ON"})
        ha.wait_payload("homed/bridge/state", b"online")

        def settled():
            configs = read_retained(broker.port, "homeassistant/#")
            return configs if len(configs) == len(EXPECTED) else None
        configs = wait_for(settled, 15, f"exactly {len(EXPECTED)} configs", bridge)
        expected = {f"homeassistant/{component}/homed/{object_id(now[key], service)}/config"
                    for component, key, service in EXPECTED}
        assert set(configs) == expected  # the old ids' configs are gone
        assert old_configs != expected  # (they were other topics: homed gave new ids)
        assert "Traceback" not in log
    finally:
        devices.stop()


def test_mosquitto_killed_and_restarted_gets_every_retained_message_again(homed, broker, ha, processes):
    devices, bridge, found = setup(homed, broker, ha, processes)
    try:
        lamp_state = f"homed/{object_id(found['lamp'], 'Lightbulb')}/state"
        ha.wait_payload(lamp_state, {"state": "OFF"})
        broker.kill()  # without persistence: every retained message is lost
        wait_log(bridge, "lost the broker")
        devices.report("lamp", "Lightbulb", "On", True)  # a change while the broker is away
        broker.start()
        wait_log(bridge, "connected to the broker", count=2)

        def republished():
            retained = read_retained(broker.port, "#")
            configs = [t for t in retained if t.startswith("homeassistant/")]
            return (retained, configs) if len(configs) >= len(EXPECTED) and lamp_state in retained else None
        retained, configs = wait_for(republished, 15, "every config and state on the restarted broker", bridge)
        assert len(configs) == len(EXPECTED)
        assert json.loads(retained[lamp_state])["state"] == "ON"
        assert retained["homed/bridge/state"] == b"online"
        assert retained[f"homed/{found['lamp'].id}/availability"] == b"online"
    finally:
        devices.stop()


def test_a_dropped_connection_resumes_and_delivers_what_happened_meanwhile(homed, broker, ha, processes):
    """homed lives on while the bridge's connection is down: the subscription
    resumes from the cursor (no resync), and a button press made meanwhile — which
    no snapshot could bring back — still reaches Home Assistant, once."""
    from .socket_proxy import SocketProxy
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    proxy = SocketProxy(os.path.join(homed.directory, "proxy.sock"), homed.socket_path).start()
    try:
        bridge = start_bridge(homed, broker.url, processes, "--socket", proxy.path)
        ha.wait(lambda: len(ha.configs()) >= len(EXPECTED), "every discovery config")
        ha.wait_payload("homed/bridge/state", b"online")
        with homed.client() as client:
            found = accessory_ids(client, "devices")
        remote_state = f"homed/{object_id(found['remote'], 'StatelessProgrammableSwitch')}/state"
        lamp_state = f"homed/{object_id(found['lamp'], 'Lightbulb')}/state"
        proxy.cut()
        wait_log(bridge, "lost homed")
        mark = ha.mark()
        devices.report("remote", "StatelessProgrammableSwitch", "ProgrammableSwitchEvent", 0)
        devices.report("lamp", "Lightbulb", "Brightness", 10)
        proxy.restore()
        ha.wait_payload(lamp_state, {"brightness": 26})
        ha.wait(lambda: ha.since(mark, remote_state), "the press made while the connection was down")
        assert ha.since(mark, remote_state) == [(remote_state, b'{"event_type":"single"}', False)]
        log = bridge.log()
        assert "homed resync" not in log and log.count("home loaded") == 1  # resumed, not reloaded
    finally:
        proxy.close()
        devices.stop()


def test_a_stopped_bridge_says_offline_and_exits_0(homed, broker, ha, processes):
    devices, bridge, found = setup(homed, broker, ha, processes)
    try:
        bridge.proc.terminate()  # SIGTERM, as systemd stops it
        assert bridge.proc.wait(10) == 0
        # A clean disconnect sends no last will: the bridge said it itself.
        ha.wait_payload("homed/bridge/state", b"offline")
        assert "stopped" in bridge.log()
        # Its configs stay (Home Assistant keeps the entities, unavailable).
        assert len(read_retained(broker.port, "homeassistant/#")) == len(EXPECTED)
    finally:
        devices.stop()


def test_each_config_is_published_once_per_start(homed, broker, ha, processes):
    """Every config once at each start of the bridge, not twice (the home loaded
    and the broker connected each publishing all), also when the broker holds a
    retained `homeassistant/status online` (Home Assistant's birth message
    published with retain): that is no Home Assistant coming online now."""
    ha.publish("homeassistant/status", "online", retain=True)
    devices, bridge, found = setup(homed, broker, ha, processes)
    try:
        topics = {f"homeassistant/{component}/homed/{object_id(found[key], service)}/config"
                  for component, key, service in EXPECTED}
        lamp_state = f"homed/{object_id(found['lamp'], 'Lightbulb')}/state"

        def published_after_a_change(value, runs):
            # A change published after everything the start published (one thread
            # publishes both, in order): then every config was published as often
            # as it will be.
            devices.report("lamp", "Lightbulb", "Brightness", value)
            ha.wait_payload(lamp_state, {"brightness": round(value * 255 / 100)})
            counts = {topic: ha.count(topic) for topic in topics}
            assert counts == {topic: runs for topic in topics}, counts
        published_after_a_change(60, 1)
        bridge.kill()
        ha.wait_payload("homed/bridge/state", b"offline")
        bridge = start_bridge(homed, broker.url, processes, log_name="bridge-2.log")
        ha.wait_payload("homed/bridge/state", b"online")
        published_after_a_change(80, 2)
        assert "Home Assistant is online" not in bridge.log()
    finally:
        devices.stop()
