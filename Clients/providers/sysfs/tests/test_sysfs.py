"""homed-sysfs as a real process against a real homed and a fake sysfs tree.

    python3 -m pytest -q Clients/providers/sysfs        # from the repository root

The daemon is $HOMED_BIN (default .build/debug/homed; skipped when absent). Run as
root, the provider process loses CAP_DAC_OVERRIDE, so file modes bind it as they
bind a user and a read-only brightness file gives a real EACCES.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from homed import pb
from homed_testkit import EventLog, ProviderProcess, die_with_parent_as_a_user, is_reachability, is_value, plain
from homed_testkit import installed_program

PROGRAM = installed_program("homed-sysfs")

KBD = "/sys/class/leds/tpacpi::kbd_backlight"
CAPS = "/sys/class/leds/input3::capslock"
POWER = "/sys/class/leds/power::led"
ZONE0, ZONE1 = "/sys/class/thermal/thermal_zone0", "/sys/class/thermal/thermal_zone1"
CHIP = "/sys/class/hwmon/hwmon0"
BATTERY = "/sys/class/power_supply/BAT0"
KEYS = {ZONE0, ZONE1, CHIP, BATTERY, KBD, CAPS, POWER}


def put(path, text, mode=None):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".new")
    tmp.write_text(f"{text}\n")
    os.replace(tmp, path)  # a reader sees the old or the new content, never half
    if mode is not None:
        os.chmod(path, mode)


def build_tree(root):
    """A small machine: two thermal zones, a hwmon chip with two inputs (and one
    without any), a battery and a mains supply, three LEDs (one read-only, one
    reached through a symlink as in the real /sys/class)."""
    c = Path(root) / "class"
    put(c / "thermal/thermal_zone0/type", "x86_pkg_temp")
    put(c / "thermal/thermal_zone0/temp", "45000")
    put(c / "thermal/thermal_zone1/type", "acpitz")
    put(c / "thermal/thermal_zone1/temp", "27800")
    put(c / "hwmon/hwmon0/name", "coretemp")
    put(c / "hwmon/hwmon0/temp1_input", "41000")
    put(c / "hwmon/hwmon0/temp1_label", "Package id 0")
    put(c / "hwmon/hwmon0/temp2_input", "39000")
    put(c / "hwmon/hwmon1/name", "nvme-fan")  # no temperature: not an accessory
    put(c / "hwmon/hwmon1/fan1_input", "1200")
    put(c / "power_supply/BAT0/type", "Battery")
    put(c / "power_supply/BAT0/capacity", "76")
    put(c / "power_supply/BAT0/status", "Discharging")
    put(c / "power_supply/BAT0/capacity_level", "Normal")
    put(c / "power_supply/BAT0/manufacturer", "ACME")
    put(c / "power_supply/BAT0/model_name", "B-1")
    put(c / "power_supply/AC/type", "Mains")  # not a battery
    put(c / "power_supply/AC/online", "1")
    put(c / "leds/tpacpi::kbd_backlight/brightness", "1", 0o666)
    put(c / "leds/tpacpi::kbd_backlight/max_brightness", "2", 0o444)
    put(Path(root) / "devices/platform/i8042/input3::capslock/brightness", "0", 0o666)
    put(Path(root) / "devices/platform/i8042/input3::capslock/max_brightness", "1", 0o444)
    os.symlink("../../devices/platform/i8042/input3::capslock", c / "leds/input3::capslock")
    put(c / "leds/power::led/brightness", "255", 0o444)  # this process may not write it
    put(c / "leds/power::led/max_brightness", "255", 0o444)


@pytest.fixture
def tree(homed):
    root = os.path.join(homed.directory, "sys")
    build_tree(root)
    return root


def start_sysfs(homed, processes, root, poll=0.2):
    argv = [sys.executable, PROGRAM, "--socket", homed.socket_path, "--sysfs-root", root,
            "--poll-interval", str(poll), "--log-level", "debug"]
    process = ProviderProcess(argv, os.path.join(homed.directory, "sysfs.log"), preexec_fn=die_with_parent_as_a_user)
    processes.append(process)
    return process.start()


def wait_accessories(client, keys, process, timeout=10.0):
    """{key: Accessory} of the sysfs provider, once every key in `keys` is there and reachable."""
    deadline = time.monotonic() + timeout
    while True:
        accessories = {a.provider_key: a for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories
                       if a.provider == "sysfs"}
        if set(keys) <= set(accessories) and all(accessories[k].reachable for k in keys):
            return accessories
        if process.proc.poll() is not None:
            raise AssertionError(f"homed-sysfs exited with {process.proc.returncode}\n{process.log()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"only {sorted(accessories)} within {timeout} s\n{process.log()}")
        time.sleep(0.05)


def ids_of(accessory):
    """{(service key or type name, characteristic type name): id}."""
    return {(s.provider_key or s.type_name, c.type_name): c.id for s in accessory.services for c in s.characteristics}


def values_of(client, accessory):
    ids = ids_of(accessory)
    reads = client.read(list(ids.values())).reads
    by_id = {r.characteristic_id: plain(r.value) for r in reads}
    return {name: by_id[cid] for name, cid in ids.items() if name[0] != "AccessoryInformation"}


def test_list_shows_what_a_fake_tree_has(tmp_path):
    build_tree(tmp_path)
    out = subprocess.run([sys.executable, PROGRAM, "--sysfs-root", str(tmp_path), "--list"], capture_output=True,
                         text=True, timeout=30, preexec_fn=die_with_parent_as_a_user)
    assert out.returncode == 0, out.stderr
    accessories = {a["key"]: a for a in json.loads(out.stdout)}
    assert set(accessories) == KEYS
    zone = accessories[ZONE0]
    assert zone["name"] == "x86_pkg_temp (thermal_zone0)" and zone["category"] == "SENSOR"
    assert zone["services"][0]["characteristics"] == [{"type": "CurrentTemperature", "value": 45.0}]
    chip = accessories[CHIP]
    assert [(s["key"], s["name"]) for s in chip["services"]] == [("temp1", "coretemp Package id 0"),
                                                                 ("temp2", "coretemp temp2")]
    assert [s["characteristics"][0]["value"] for s in chip["services"]] == [41.0, 39.0]
    battery = accessories[BATTERY]["services"][0]
    assert battery["type"] == "BatteryService"
    assert [(c["type"], c["value"]) for c in battery["characteristics"]] == [
        ("BatteryLevel", 76), ("ChargingState", 0), ("StatusLowBattery", 0)]
    kbd = accessories[KBD]["services"][0]["characteristics"]
    assert [(c["type"], c["value"]) for c in kbd] == [("On", True), ("Brightness", 50)]
    assert all("properties" not in c for c in kbd)  # writable: the catalog's permissions
    power = accessories[POWER]["services"][0]["characteristics"]
    assert all(c["properties"] == {"readable": True, "supports_event_notification": True} for c in power)


def test_the_tree_appears_in_homed_and_follows_the_files(homed, tree, processes):
    process = start_sysfs(homed, processes, tree)
    with homed.client("sysfs-test") as client:
        accessories = wait_accessories(client, KEYS, process)
        assert values_of(client, accessories[ZONE0]) == {("TemperatureSensor", "CurrentTemperature"): 45.0}
        assert values_of(client, accessories[CHIP]) == {("temp1", "CurrentTemperature"): 41.0,
                                                        ("temp2", "CurrentTemperature"): 39.0}
        assert values_of(client, accessories[BATTERY]) == {
            ("BatteryService", "BatteryLevel"): 76, ("BatteryService", "ChargingState"): 0,
            ("BatteryService", "StatusLowBattery"): 0}
        assert values_of(client, accessories[KBD]) == {("Lightbulb", "On"): True, ("Lightbulb", "Brightness"): 50}
        assert values_of(client, accessories[CAPS]) == {("Lightbulb", "On"): False, ("Lightbulb", "Brightness"): 0}
        info = accessories[BATTERY]
        assert (info.name, info.manufacturer, info.model) == ("Battery BAT0", "ACME", "B-1")

        zone, battery, kbd, caps, power = (ids_of(accessories[k]) for k in (ZONE0, BATTERY, KBD, CAPS, POWER))
        temperature = zone["TemperatureSensor", "CurrentTemperature"]
        level, charging, low = (battery["BatteryService", n] for n in
                                ("BatteryLevel", "ChargingState", "StatusLowBattery"))
        events = EventLog(homed.socket_path, pb.SubscribeRequest(filter=pb.SubscriptionFilter(
            accessory_ids=[accessories[k].id for k in KEYS],
            kinds=[pb.EVENT_VALUE_CHANGED, pb.EVENT_REACHABILITY_CHANGED])))
        try:
            events.wait_subscribed()
            # A device changes: its file does, and the change is published, as the provider's.
            put(Path(tree) / "class/thermal/thermal_zone0/temp", "47560")
            (_, event), = events.wait_for(is_value(temperature), timeout=3)
            assert plain(event.value.value) == 47.6
            assert (event.origin.kind, event.origin.name) == (pb.ORIGIN_PROVIDER, "sysfs")
            put(Path(tree) / "class/power_supply/BAT0/capacity", "4")
            put(Path(tree) / "class/power_supply/BAT0/capacity_level", "Critical")
            put(Path(tree) / "class/power_supply/BAT0/status", "Charging")
            for cid, value in ((level, 4), (low, 1), (charging, 1)):
                (_, event), = events.wait_for(is_value(cid), timeout=3)
                assert plain(event.value.value) == value

            # Writes reach the LED's file, and are acknowledged once it was written.
            result = client.write({kbd["Lightbulb", "Brightness"]: pb.Value(int_value=100)}, timeout=5).results[0]
            assert result.code == pb.OK, result.message
            assert (Path(tree) / "class/leds/tpacpi::kbd_backlight/brightness").read_text().strip() == "2"
            result = client.write({kbd["Lightbulb", "On"]: pb.Value(bool_value=False)}, timeout=5).results[0]
            assert result.code == pb.OK, result.message
            assert (Path(tree) / "class/leds/tpacpi::kbd_backlight/brightness").read_text().strip() == "0"
            result = client.write({caps["Lightbulb", "On"]: pb.Value(bool_value=True)}, timeout=5).results[0]
            assert result.code == pb.OK, result.message
            assert (Path(tree) / "devices/platform/i8042/input3::capslock/brightness").read_text().strip() == "1"
            # What follows from a write (Brightness 100 once the capslock LED is on) is reported too.
            brightness = caps["Lightbulb", "Brightness"]
            (_, event), = events.wait_for(is_value(brightness), timeout=3)
            assert plain(event.value.value) == 100

            # A LED this process may not write is registered read-only: homed refuses the write.
            result = client.write({power["Lightbulb", "On"]: pb.Value(bool_value=False)}, timeout=5).results[0]
            assert result.code == pb.INVALID_ARGUMENT
            assert (Path(tree) / "class/leds/power::led/brightness").read_text().strip() == "255"

            # A device that goes away is unreachable, and reachable again when it is back,
            # with the value it has then; a new one appears.
            shutil.rmtree(Path(tree) / "class/thermal/thermal_zone1")
            events.wait_for(is_reachability(accessories[ZONE1].id, False), timeout=3)
            put(Path(tree) / "class/thermal/thermal_zone1/type", "acpitz")
            put(Path(tree) / "class/thermal/thermal_zone1/temp", "30100")
            events.wait_for(is_reachability(accessories[ZONE1].id, True), timeout=3)
            zone1 = ids_of(accessories[ZONE1])["TemperatureSensor", "CurrentTemperature"]
            (_, event), = events.wait_for(is_value(zone1), timeout=3)
            assert plain(event.value.value) == 30.1
            put(Path(tree) / "class/leds/new::led/brightness", "0", 0o666)
            put(Path(tree) / "class/leds/new::led/max_brightness", "1")
            wait_accessories(client, ["/sys/class/leds/new::led"], process, timeout=3)

            # A LED that may no longer be written is registered again, read-only (same ids).
            os.chmod(Path(tree) / "class/leds/tpacpi::kbd_backlight/brightness", 0o444)
            deadline = time.monotonic() + 3
            while True:
                now = wait_accessories(client, [KBD], process)[KBD]
                on = [c for s in now.services for c in s.characteristics if c.type_name == "On"][0]
                if not on.properties.writable:
                    break
                assert time.monotonic() < deadline, "the LED is still writable in homed"
                time.sleep(0.05)
            assert ids_of(now) == kbd
        finally:
            events.close()
        assert process.proc.poll() is None, process.log()

        # SIGTERM: a clean exit, and its accessories unreachable at once.
        process.proc.terminate()
        assert process.proc.wait(5) == 0
        deadline = time.monotonic() + 2
        while any(a.reachable for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories
                  if a.provider == "sysfs"):
            assert time.monotonic() < deadline, "accessories still reachable after the provider stopped"
            time.sleep(0.05)


def test_fresh_reads_read_the_files_and_a_refused_write_says_why(homed, tree, processes):
    # Polls so rarely that only a fresh read (or a write) can see a change.
    process = start_sysfs(homed, processes, tree, poll=60)
    with homed.client("sysfs-test") as client:
        accessories = wait_accessories(client, KEYS, process)
        chip, kbd = ids_of(accessories[CHIP]), ids_of(accessories[KBD])
        temp2 = chip["temp2", "CurrentTemperature"]
        put(Path(tree) / "class/hwmon/hwmon0/temp2_input", "52340")
        assert plain(client.read([temp2]).reads[0].value) == 39.0  # the cache has not seen it
        fresh = client.read([temp2], fresh=True, timeout=5).reads[0]
        assert fresh.code == pb.OK and plain(fresh.value) == 52.3
        assert plain(client.read([temp2]).reads[0].value) == 52.3

        # The file was writable when registered; now the kernel refuses the write:
        # that write fails, with the error and the file named, and nothing changes.
        brightness = Path(tree) / "class/leds/tpacpi::kbd_backlight/brightness"
        os.chmod(brightness, 0o444)
        result = client.write({kbd["Lightbulb", "Brightness"]: pb.Value(int_value=100)}, timeout=5).results[0]
        assert result.code == pb.PERMISSION_DENIED, result
        assert result.message == f"cannot write 2 to {KBD}/brightness: Permission denied"
        assert brightness.read_text().strip() == "1"
        assert plain(client.read([kbd["Lightbulb", "Brightness"]]).reads[0].value) == 50
        assert process.proc.poll() is None, process.log()


def test_a_provider_id_in_use_is_refused_with_exit_status_2(homed, tree, processes):
    first = start_sysfs(homed, processes, tree, poll=60)
    with homed.client("sysfs-test") as client:
        wait_accessories(client, KEYS, first)
    second = subprocess.run([sys.executable, PROGRAM, "--socket", homed.socket_path, "--sysfs-root", tree],
                            capture_output=True, text=True, timeout=30, preexec_fn=die_with_parent_as_a_user)
    assert second.returncode == 2, second.stderr
    assert "already connected" in second.stderr
    # The first one serves on, untouched.
    assert first.proc.poll() is None
    with homed.client("sysfs-test") as client:
        info = {p.provider_id: p for p in client.call("ListProviders", pb.ListProvidersRequest()).providers}
        assert info["sysfs"].connected and len(info["sysfs"].accessory_ids) == len(KEYS)



@pytest.mark.skipif(os.geteuid() != 0, reason="a socket root may not open needs root without CAP_DAC_OVERRIDE")
def test_a_socket_it_may_not_open_ends_it_with_status_2_saying_how_to_join(tmp_path):
    """The provider as root without CAP_DAC_OVERRIDE (so modes bind it), before a
    socket whose owner bits are empty and whose group it is not in: told how to
    join the group, once, with exit status 2 (no retrying)."""
    from homed_testkit import HomedProcess, require_binary
    import grp
    group = grp.getgrgid(65534).gr_name
    daemon = HomedProcess(require_binary(), str(tmp_path), in_memory=True,
                          extra_args=["--socket-mode", "0060", "--socket-group", "65534"])
    try:
        daemon.start()
        run = subprocess.run([sys.executable, PROGRAM, "--socket", daemon.socket_path, "--sysfs-root", str(tmp_path)],
                             capture_output=True, text=True, timeout=30, preexec_fn=die_with_parent_as_a_user)
    finally:
        daemon.kill()
    assert run.returncode == 2, run.stderr
    assert f"permission denied on {daemon.socket_path} (mode 0060, owner root, group {group}): you (root, uid 0) " \
           f"may not open homed's socket; join group {group}: `sudo usermod -aG {group} root`" in run.stderr, run.stderr
    assert run.stderr.count("permission denied") == 1 and "Traceback" not in run.stderr

def test_list_into_a_reader_that_goes_away_and_an_empty_tree(tmp_path):
    build_tree(tmp_path / "full")
    piped = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} {PROGRAM} --sysfs-root "
                            f"{tmp_path / 'full'} --list | head -c 1"], capture_output=True, text=True, timeout=30)
    assert piped.returncode == 0 and piped.stdout == "[", piped.stderr
    assert piped.stderr == ""  # no BrokenPipeError
    (tmp_path / "empty").mkdir()
    empty = subprocess.run([sys.executable, PROGRAM, "--sysfs-root", str(tmp_path / "empty"), "--list"],
                           capture_output=True, text=True, timeout=30)
    assert empty.returncode == 0 and json.loads(empty.stdout) == []
    assert f"no devices under {tmp_path / 'empty'}: looked for thermal zones (class/thermal/thermal_zone*/temp)" \
        in empty.stderr, empty.stderr
