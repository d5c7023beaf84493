"""A device that has said nothing since it was registered: homed holds no value
for it (no made-up 0 or Closed), homectl says so in `get` and `accessories`,
`watch` prints nothing of it until the first report, and a write still works."""

import os

from homed import pb
from homed_testkit import ProviderProcess, homectl, homectl_binary

from . import devices
from .test_end_to_end import SUPPORTED
from .z2m_helpers import ids_of, start_provider, wait_accessories, wait_for, wait_value


def watching(homed, pid):
    with homed.client() as client:
        stats = client.call("GetStats", pb.GetStatsRequest())
    return any(c.pid == pid and len(c.subscriptions) > 0 for c in stats.connections)


def test_a_device_that_said_nothing_has_no_value_yet(homed, broker, coordinator, processes, workdir):
    # Neither the contact nor the porch light answers /get, and nothing is retained.
    coordinator.states["Window contact"] = {}
    coordinator.states["Porch light"] = {}
    watch = ProviderProcess([homectl_binary(), "watch", "--json", "--accessory", "Window contact",
                             "--accessory", "Porch light"], os.path.join(workdir, "watch.log"),
                            env=dict(os.environ, HOMED_SOCKET=homed.socket_path))
    processes.append(watch)
    provider = start_provider(homed, broker.url, processes)
    with homed.client() as client:
        found = wait_accessories(client, SUPPORTED, provider)
        contact = ids_of(found[devices.ieee(15)])
        porch = ids_of(found[devices.ieee(5)])
        state, battery = contact[("contact", "ContactSensorState")], contact[("battery", "BatteryLevel")]
        # Registered without values; homed's read of them is answered "has not reported … yet".
        for read in client.read([state, battery, porch[("light", "On")]]).reads:
            assert (read.code, read.HasField("value"), read.last_updated_ms) == (0, False, 0), read
        got = homectl(homed, "get", "Window contact/ContactSensorState", "Window contact/BatteryLevel")
        assert got.returncode == 0, got.stderr
        assert [line.split()[-3:] for line in got.stdout.splitlines()] == [["no", "value", "yet"]] * 2, got.stdout
        listed = homectl(homed, "accessories")
        row = next(line for line in listed.stdout.splitlines() if "Window contact" in line)
        assert "no value yet" in row, listed.stdout
        watch.start()
        wait_for(lambda: watching(homed, watch.pid), 15, "homectl watch's subscription", watch)
        # A write needs no value first: it goes to the device, and its echo is the value.
        assert client.write({porch[("light", "On")]: pb.Value(bool_value=True)}, timeout=10).results[0].code == 0
        assert coordinator.wait_received("zigbee2mqtt/Porch light/set") == {"state": "ON"}
        # The first report: Zigbee2MQTT's contact true is closed (value_on false), contact detected.
        coordinator.change("Window contact", {"contact": True, "battery": 90})
        wait_value(client, state, 0, process=provider)
        wait_value(client, battery, 90, process=provider)
        lines = wait_for(lambda: [e for e in watch.history if e.get("kind") == "value"][:3] if len(
            [e for e in watch.history if e.get("kind") == "value"]) >= 3 else None, 10, "three value lines", watch)
        assert [(e["accessory"], e["characteristic"], e["value"]) for e in lines] == [
            ("Porch light", "On", True), ("Window contact", "ContactSensorState", 0),
            ("Window contact", "BatteryLevel", 90)]
        got = homectl(homed, "get", "Window contact/ContactSensorState")
        assert "no value yet" not in got.stdout and got.stdout.split()[-1] != "yet"
