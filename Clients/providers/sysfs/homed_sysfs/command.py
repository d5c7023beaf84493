"""homed-sysfs: what this Linux machine has in sysfs, as homed accessories.

    homed-sysfs [--socket PATH] [--sysfs-root /sys] [--poll-interval 5]

- /sys/class/thermal/thermal_zone*/temp (millidegrees Celsius): a TemperatureSensor
  accessory per zone, named after the zone's `type`.
- /sys/class/hwmon/hwmon*/temp*_input (millidegrees): an accessory per chip (named
  after its `name`), a TemperatureSensor service per input (service key "temp1",
  …, named after `temp1_label` when there is one).
- /sys/class/power_supply/* of type Battery: a BatteryService (BatteryLevel from
  `capacity`, ChargingState from `status`, StatusLowBattery from `capacity_level`,
  else capacity below --low-battery).
- /sys/class/leds/*: a Lightbulb (On, and Brightness as a percentage of
  `max_brightness`), writable when this process may write `brightness`. A write
  the kernel refuses (EACCES, EPERM, EINVAL, …) fails that write alone, with
  PERMISSION_DENIED or the like and a message naming the file.

Keys are the devices' sysfs paths as under /sys ("/sys/class/leds/input3::capslock"),
whatever --sysfs-root is; the provider id is "sysfs". Values are polled every
--poll-interval seconds and only changes are reported; a device whose files vanish
becomes unreachable, and devices that appear are added.
"""

from __future__ import annotations

import argparse
import glob
import json
import logging
import os
import sys
import threading
from typing import Dict, List, Mapping, Optional


from homed import HomedError
from homed.provider import Provider, Ref, run_until_signalled

log = logging.getLogger("homed-sysfs")

PROVIDER_ID = "sysfs"
NAME_LIMIT = 64  # bytes, the daemon's limit for names
KEY_PREFIX = "/sys"


def read_text(path: str) -> str:
    with open(path, "r") as f:
        return f.read(4096).strip()


def read_int(path: str) -> int:
    return int(read_text(path))


def optional_text(path: str, default: str = "") -> str:
    try:
        return read_text(path)
    except (OSError, ValueError):
        return default


def clip_name(name: str) -> str:
    """A name the daemon takes: at most 64 bytes of UTF-8, not blank."""
    name = " ".join(name.split()) or "sysfs"
    data = name.encode()
    if len(data) <= NAME_LIMIT:
        return name
    return data[:NAME_LIMIT].decode(errors="ignore").rstrip()


def celsius(millidegrees: int) -> float:
    """Millidegrees as °C to 0.1 (the catalog's step), within the catalog's range."""
    value = round(millidegrees / 1000.0, 1)
    if not -273.1 <= value <= 1000:
        raise ValueError(f"{value} °C is outside -273.1 … 1000")
    return value


class Device:
    """One accessory: its sysfs directory, what it registers, and its values."""

    kind = ""

    def __init__(self, root: str, path: str):
        self.root = root
        self.path = path  # the real directory, under root
        self.key = KEY_PREFIX + "/" + os.path.relpath(path, root)

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def shown(self, name: str) -> str:
        """A file as it is named in messages: under /sys."""
        return self.key + "/" + name

    def accessory(self, values: Mapping[Ref, object]) -> dict:
        raise NotImplementedError

    def read(self) -> Dict[Ref, object]:
        """Every value, from the files. Raises OSError when the device is gone."""
        raise NotImplementedError

    def write(self, values: Mapping[Ref, object], atomic: bool) -> Dict[Ref, BaseException]:
        """Applies writes; returns the ones that failed, with why."""
        raise PermissionError(f"{self.key} takes no writes")

    def snapshot(self):
        """What restore() needs to undo a write (an atomic batch that failed later)."""
        return None

    def restore(self, snapshot) -> None:
        pass

    def signature(self):
        """What the registration depends on besides values: a change re-registers."""
        return json.dumps(self.accessory({}), sort_keys=True)

    @staticmethod
    def characteristic(ctype: str, values: Mapping[Ref, object], ref: Ref, **extra) -> dict:
        entry = {"type": ctype, **extra}
        if ref in values:
            entry["value"] = values[ref]
        return entry


class ThermalZone(Device):
    kind = "thermal"

    def __init__(self, root, path):
        super().__init__(root, path)
        self.ref = Ref(self.key, "TemperatureSensor", "CurrentTemperature")

    def accessory(self, values):
        zone = os.path.basename(self.path)
        kind = optional_text(self.file("type"), zone)
        return {"key": self.key, "name": clip_name(f"{kind} ({zone})"), "category": "SENSOR",
                "manufacturer": "Linux thermal", "model": kind, "serial_number": zone,
                "services": [{"type": "TemperatureSensor",
                              "characteristics": [self.characteristic("CurrentTemperature", values, self.ref)]}]}

    def read(self):
        return {self.ref: celsius(read_int(self.file("temp")))}


class HwmonChip(Device):
    kind = "hwmon"

    def inputs(self) -> List[str]:
        """temp1, temp2, …: the chip's temperature inputs, in number order."""
        names = [os.path.basename(p)[:-len("_input")] for p in glob.glob(self.file("temp*_input"))]
        return sorted(names, key=lambda n: (len(n), n))

    def accessory(self, values):
        chip = optional_text(self.file("name"), os.path.basename(self.path))
        services = []
        for sensor in self.inputs():
            label = optional_text(self.file(f"{sensor}_label"), sensor)
            ref = Ref(self.key, sensor, "CurrentTemperature")
            services.append({"type": "TemperatureSensor", "key": sensor, "name": clip_name(f"{chip} {label}"),
                             "characteristics": [self.characteristic("CurrentTemperature", values, ref)]})
        if services:
            services[0]["primary"] = True
        return {"key": self.key, "name": clip_name(chip), "category": "SENSOR", "manufacturer": "Linux hwmon",
                "model": chip, "serial_number": os.path.basename(self.path), "services": services}

    def read(self):
        if not os.path.isdir(self.path):
            raise FileNotFoundError(f"{self.key} is gone")
        values = {}
        for sensor in self.inputs():
            try:
                values[Ref(self.key, sensor, "CurrentTemperature")] = celsius(read_int(self.file(f"{sensor}_input")))
            except (OSError, ValueError) as error:  # one input that cannot be read now (ENODATA, …)
                log.debug("%s: %s", self.shown(f"{sensor}_input"), error)
        if not values and self.inputs():
            raise FileNotFoundError(f"no temperature of {self.key} can be read")
        return values


class Battery(Device):
    kind = "battery"
    CHARGING = {"charging": 1}
    LOW_LEVELS = ("low", "critical")

    def __init__(self, root, path, low_battery: int):
        super().__init__(root, path)
        self.low_battery = low_battery
        self.level = Ref(self.key, "BatteryService", "BatteryLevel")
        self.charging = Ref(self.key, "BatteryService", "ChargingState")
        self.low = Ref(self.key, "BatteryService", "StatusLowBattery")

    def accessory(self, values):
        name = os.path.basename(self.path)
        return {"key": self.key, "name": clip_name(f"Battery {name}"), "category": "OTHER",
                "manufacturer": clip_name(optional_text(self.file("manufacturer"), "unknown")),
                "model": clip_name(optional_text(self.file("model_name"), "battery")),
                "serial_number": clip_name(optional_text(self.file("serial_number"), name)),
                "services": [{"type": "BatteryService", "primary": True, "characteristics": [
                    self.characteristic("BatteryLevel", values, self.level),
                    self.characteristic("ChargingState", values, self.charging),
                    self.characteristic("StatusLowBattery", values, self.low)]}]}

    def read(self):
        capacity = max(0, min(100, read_int(self.file("capacity"))))
        status = optional_text(self.file("status"), "Unknown").lower()
        if os.path.exists(self.file("status")):
            charging = self.CHARGING.get(status, 0)
        else:
            charging = 2  # NotChargeable
        level = optional_text(self.file("capacity_level")).lower()
        if level in self.LOW_LEVELS:
            low = 1
        elif level in ("normal", "high", "full"):
            low = 0
        else:  # no capacity_level, or "Unknown"
            low = 1 if capacity < self.low_battery else 0
        return {self.level: capacity, self.charging: charging, self.low: low}


class Led(Device):
    kind = "led"

    def __init__(self, root, path):
        super().__init__(root, path)
        self.on = Ref(self.key, "Lightbulb", "On")
        self.brightness = Ref(self.key, "Lightbulb", "Brightness")
        self.max = max(1, read_int(self.file("max_brightness")))
        self.last_on = self.max  # the brightness On restores
        self.lock = threading.Lock()

    @property
    def writable(self) -> bool:
        return os.access(self.file("brightness"), os.W_OK)

    def accessory(self, values):
        extra = {} if self.writable else {
            "properties": {"readable": True, "supports_event_notification": True}}
        return {"key": self.key, "name": clip_name(f"LED {os.path.basename(self.path)}"), "category": "LIGHTBULB",
                "manufacturer": "Linux leds", "model": clip_name(optional_text(self.file("device/name"), "led")),
                "serial_number": clip_name(os.path.basename(self.path)),
                "services": [{"type": "Lightbulb", "primary": True, "characteristics": [
                    self.characteristic("On", values, self.on, **extra),
                    self.characteristic("Brightness", values, self.brightness, **extra)]}]}

    def percent(self, raw: int) -> int:
        return max(0, min(100, round(raw * 100 / self.max)))

    def raw(self, percent: int) -> int:
        raw = round(percent * self.max / 100)
        return max(1 if percent > 0 else 0, min(self.max, raw))

    def read(self):
        raw = read_int(self.file("brightness"))
        if raw > 0:
            self.last_on = raw
        return {self.on: raw > 0, self.brightness: self.percent(raw)}

    def snapshot(self):
        try:
            return read_int(self.file("brightness"))
        except (OSError, ValueError):
            return None

    def restore(self, snapshot) -> None:
        if snapshot is None:
            return
        try:
            with open(self.file("brightness"), "w") as f:
                f.write(f"{snapshot}\n")
        except OSError as error:
            log.warning("%s: could not undo a write: %s", self.key, error)

    def write(self, values, atomic):
        with self.lock:
            target = None
            if values.get(self.on) is False:
                target = 0
            elif self.brightness in values:
                target = self.raw(int(values[self.brightness]))
            elif values.get(self.on) is True:
                try:
                    current = read_int(self.file("brightness"))
                except (OSError, ValueError):
                    current = 0
                target = current if current > 0 else self.last_on
            if target is None:
                return {}
            path = self.file("brightness")
            try:
                with open(path, "w") as f:
                    f.write(f"{target}\n")
            except OSError as error:
                reason = error.strerror or str(error)
                failure = type(error)(error.errno, f"cannot write {target} to {self.shown('brightness')}: {reason}")
                return {ref: failure for ref in values}
            if target > 0:
                self.last_on = target
            return {}


#: What discover() looks for, as the log says it when it finds nothing.
LOOKED_FOR = ("thermal zones (class/thermal/thermal_zone*/temp), hwmon temperature sensors "
              "(class/hwmon/hwmon*/temp*_input), batteries (class/power_supply/*/type = Battery, with capacity) "
              "and LEDs (class/leds/*/brightness and max_brightness)")


def discover(root: str, low_battery: int = 10) -> List[Device]:
    """Every device under root (a sysfs tree), in a stable order."""
    devices: List[Device] = []
    for zone in sorted(glob.glob(os.path.join(root, "class", "thermal", "thermal_zone*"))):
        if os.path.isfile(os.path.join(zone, "temp")):
            devices.append(ThermalZone(root, zone))
    for chip in sorted(glob.glob(os.path.join(root, "class", "hwmon", "hwmon*"))):
        if glob.glob(os.path.join(chip, "temp*_input")):
            devices.append(HwmonChip(root, chip))
    for supply in sorted(glob.glob(os.path.join(root, "class", "power_supply", "*"))):
        if optional_text(os.path.join(supply, "type")).lower() == "battery" and \
                os.path.isfile(os.path.join(supply, "capacity")):
            devices.append(Battery(root, supply, low_battery))
    for led in sorted(glob.glob(os.path.join(root, "class", "leds", "*"))):
        if os.path.isfile(os.path.join(led, "brightness")) and os.path.isfile(os.path.join(led, "max_brightness")):
            try:
                devices.append(Led(root, led))
            except (OSError, ValueError) as error:
                log.warning("%s: skipped: %s", led, error)
    return devices


class SysfsProvider:
    """The devices, the homed provider serving them, and the poller."""

    def __init__(self, root: str = "/sys", socket_path: Optional[str] = None, poll_interval: float = 5.0,
                 provider_id: str = PROVIDER_ID, low_battery: int = 10):
        self.root = root
        self.poll_interval = poll_interval
        self.low_battery = low_battery
        self.devices: Dict[str, Device] = {}
        self.signatures: Dict[str, str] = {}
        self.unreachable: set = set()
        self.registrations = 0  # the provider's registrations when last polled
        self.last: Dict[Ref, object] = {}  # the values the daemon has from us
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.stopping = threading.Event()
        accessories = []
        for device in discover(root, low_battery):
            values = self._safe_read(device)
            accessories.append(device.accessory(values or {}))
            self.devices[device.key] = device
            self.signatures[device.key] = device.signature()
            self.last.update(values or {})
        self.provider = Provider(provider_id, accessories, on_read=self.on_read, on_write=self.on_write,
                                 socket_path=socket_path, client_name=f"homed-sysfs ({provider_id})")
        self.poller = threading.Thread(target=self._poll_loop, name="sysfs-poll", daemon=True)

    @staticmethod
    def _safe_read(device: Device) -> Optional[Dict[Ref, object]]:
        try:
            return device.read()
        except (OSError, ValueError) as error:
            log.info("%s: %s", device.key, error)
            return None

    # -- the daemon's requests -------------------------------------------------

    def on_read(self, refs: List[Ref]) -> Dict[Ref, object]:
        out: Dict[Ref, object] = {}
        by_key: Dict[str, List[Ref]] = {}
        for ref in refs:
            by_key.setdefault(ref.accessory_key, []).append(ref)
        for key, wanted in by_key.items():
            device = self.devices.get(key)
            if device is None:
                continue
            try:
                values = device.read()
            except (OSError, ValueError) as error:
                for ref in wanted:
                    out[ref] = error
                continue
            for ref in wanted:
                if ref in values:
                    out[ref] = values[ref]
        with self.lock:
            self.last.update({ref: value for ref, value in out.items() if not isinstance(value, BaseException)})
        return out

    def on_write(self, values: Dict[Ref, object], atomic: bool):
        failed: Dict[Ref, BaseException] = {}
        by_key: Dict[str, Dict[Ref, object]] = {}
        for ref, value in values.items():
            by_key.setdefault(ref.accessory_key, {})[ref] = value
        applied = []  # (device, snapshot): what an atomic batch undoes when a later write fails
        for key, writes in by_key.items():
            device = self.devices.get(key)
            if device is None:
                failed.update({ref: FileNotFoundError(f"{key} is gone") for ref in writes})
            else:
                snapshot = device.snapshot() if atomic else None
                try:
                    errors = device.write(writes, atomic)
                except OSError as error:
                    errors = {ref: error for ref in writes}
                failed.update(errors)
                if not errors:
                    applied.append((device, snapshot))
            if atomic and failed:
                break
        if atomic and failed:
            for device, snapshot in reversed(applied):
                device.restore(snapshot)
            raise next(iter(failed.values()))  # the whole batch fails with it; nothing stays applied
        with self.lock:  # the daemon applies these once we confirm
            self.last.update({ref: value for ref, value in values.items() if ref not in failed})
        self.wake.set()  # report what follows from them (On after a Brightness) soon
        return failed

    # -- polling ------------------------------------------------------------------

    def poll_once(self) -> None:
        """Reads every device, reports what changed, notes devices gone or new."""
        changes: Dict[Ref, object] = {}
        if self.provider.registrations != self.registrations:
            # Registered again (a reconnection): every accessory was declared
            # reachable, so say again which ones are not.
            self.registrations = self.provider.registrations
            self.unreachable.clear()
        for device in discover(self.root, self.low_battery):
            known = self.devices.get(device.key)
            if known is None or self.signatures.get(device.key) != device.signature():
                values = self._safe_read(device)
                if values is None:
                    continue
                try:
                    self.provider.update([device.accessory(values)])
                except HomedError as error:
                    log.warning("%s: not registered: %s", device.key, error)
                    continue
                self.devices[device.key] = device
                self.signatures[device.key] = device.signature()
                self.unreachable.discard(device.key)
                with self.lock:
                    self.last.update(values)
                log.info("%s: %s", device.key, "registered" if known is None else "registered again")
        for key, device in list(self.devices.items()):
            values = self._safe_read(device)
            if values is None:
                if key not in self.unreachable and self.provider.connected:
                    try:
                        self.provider.set_reachable(key, False)
                        self.unreachable.add(key)
                    except HomedError as error:
                        log.debug("%s: %s", key, error)
                continue
            if key in self.unreachable:
                try:
                    self.provider.set_reachable(key, True)
                    self.unreachable.discard(key)
                except HomedError:
                    continue
            with self.lock:
                for ref, value in values.items():
                    if self.last.get(ref) != value or type(self.last.get(ref)) is not type(value):
                        changes[ref] = value
        if changes and self.provider.connected:
            try:
                self.provider.report(changes)
                with self.lock:
                    self.last.update(changes)
            except HomedError as error:
                log.info("report: %s", error)

    def _poll_loop(self) -> None:
        while not self.stopping.is_set():
            self.wake.wait(self.poll_interval)
            self.wake.clear()
            if self.stopping.is_set():
                return
            try:
                self.poll_once()
            except Exception:  # noqa: BLE001 - the poller must go on
                log.exception("poll failed")

    # -- running ------------------------------------------------------------------

    def run(self) -> None:
        """Serves until stop() (or a signal); raises what the daemon refused for good."""
        self.poller.start()
        try:
            self.provider.run()
        finally:
            self.stopping.set()
            self.wake.set()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        self.provider.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Exposes this machine's sysfs sensors, batteries and LEDs to homed.")
    parser.add_argument("--socket", help="homed's socket (default: $HOMED_SOCKET, else the usual places)")
    parser.add_argument("--sysfs-root", default="/sys", help="where sysfs is mounted (default: /sys)")
    parser.add_argument("--poll-interval", type=float, default=5.0, metavar="SECONDS",
                        help="seconds between two readings of every device (default: 5)")
    parser.add_argument("--provider-id", default=PROVIDER_ID, help="the provider id (default: sysfs)")
    parser.add_argument("--low-battery", type=int, default=10, metavar="PERCENT",
                        help="a battery below this is low, when it has no capacity_level (default: 10)")
    parser.add_argument("--list", action="store_true", help="print the accessories as JSON and exit")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper()),
                        format="%(levelname)s %(name)s: %(message)s")
    if args.poll_interval <= 0:
        parser.error("--poll-interval must be above 0")

    if args.list:
        out = []
        for device in discover(args.sysfs_root, args.low_battery):
            values = SysfsProvider._safe_read(device) or {}
            out.append(device.accessory(values))
        if not out:
            log.warning("no devices under %s: looked for %s", args.sysfs_root, LOOKED_FOR)
        return print_json(out)

    provider = SysfsProvider(args.sysfs_root, args.socket, args.poll_interval, args.provider_id, args.low_battery)
    if provider.devices:
        log.info("%d devices under %s", len(provider.devices), args.sysfs_root)
    else:
        log.warning("no devices under %s: looked for %s; serving none (a battery or sensor that appears "
                    "later is not picked up until the provider restarts)", args.sysfs_root, LOOKED_FOR)

    def stop():
        provider.stopping.set()
        provider.provider.stop()

    return run_until_signalled(provider.run, stop, args.provider_id, log)


def print_json(value) -> int:
    """Prints `value` as JSON; a reader that went away early (`--list | head`) is
    an ordinary end, not a BrokenPipeError."""
    try:
        json.dump(value, sys.stdout, indent=2)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # Python would report the failed flush of stdout at exit: point it at /dev/null.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
