"""The provider: the configured devices (device.py) on one side,
homed.aio.Provider on the other. The accessories registered last are kept in
the state directory, so that at start every device homed knows is registered
unreachable until it answers (a provider that connects makes its accessories
reachable, and a device that is off must not look on)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import tomllib
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import homed
import homed.aio
from homed import pb
from homed.refs import Ref

from .device import DeviceConfig, DeviceLink

log = logging.getLogger("homed-esphome")


@dataclass
class Settings:
    devices: List[DeviceConfig] = field(default_factory=list)
    socket_path: Optional[str] = None
    provider_id: str = "esphome"
    state_dir: Optional[str] = None
    write_timeout: float = 4.5
    keepalive: float = 5.0


def default_state_dir() -> str:
    return os.environ.get("STATE_DIRECTORY") or os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state"), "homed-esphome")


def read_credentials(path: str) -> Dict[str, Dict[str, str]]:
    """{device name: {"noise_psk": …, "password": …}} from lines `NAME = KEY`
    (the Noise PSK, base64, as in the device's `api: encryption: key:`) or
    `NAME.password = …`. The file must be the user's alone (mode 0600): keys
    are secrets, and a file others may read is refused rather than used."""
    mode = os.stat(path).st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise PermissionError(f"{path} is readable by others (mode {stat.S_IMODE(mode):04o}); chmod 600 it")
    out: Dict[str, Dict[str, str]] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, value = line.partition("=")
            if not sep or not name.strip() or not value.strip():
                raise ValueError(f"{path}:{number}: not NAME = KEY")
            name, value = name.strip(), value.strip().strip('"')
            field_name = "noise_psk"
            if name.endswith(".password"):
                name, field_name = name[: -len(".password")], "password"
            out.setdefault(name, {})[field_name] = value
    return out


def read_config(path: str, credentials: Optional[Dict[str, Dict[str, str]]] = None) -> List[DeviceConfig]:
    """The devices of a TOML file: `[[device]]` tables with `name`, `host`, and
    optionally `port` (6053) and `encryption = false` for plaintext (true by
    default when the credentials file has a key for the name)."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    credentials = credentials or {}
    devices: List[DeviceConfig] = []
    for index, entry in enumerate(data.get("device", []), 1):
        if not isinstance(entry, dict) or not entry.get("host"):
            raise ValueError(f"{path}: device {index} has no host")
        name = str(entry.get("name") or entry["host"])
        if any(d.name == name for d in devices):
            raise ValueError(f"{path}: two devices are called {name!r}")
        port = int(entry.get("port", 6053))
        if not 0 < port < 65536:
            raise ValueError(f"{path}: device {name!r}: port {port} is not a TCP port")
        secret = credentials.get(name, {})
        encryption = entry.get("encryption", "noise_psk" in secret)
        if encryption and "noise_psk" not in secret:
            raise ValueError(f"{path}: device {name!r} is encrypted, and the credentials file has no key for it")
        devices.append(DeviceConfig(name, str(entry["host"]), port, secret.get("noise_psk") if encryption else None,
                                    secret.get("password")))
    return devices


class EspHomeProvider:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.links = [DeviceLink(d, self, settings.write_timeout, settings.keepalive) for d in settings.devices]
        self.provider: Optional[homed.aio.Provider] = None
        self.stopping = asyncio.Event()
        self.refused_for_good: Optional[BaseException] = None
        self._state_dir = settings.state_dir or default_state_dir()
        self._cache_path = os.path.join(self._state_dir, "accessories.json")
        self._cache: Dict[str, dict] = self._load_cache()

    # -- the accessories registered last ---------------------------------------------------------

    def _load_cache(self) -> Dict[str, dict]:
        try:
            with open(self._cache_path, encoding="utf-8") as f:
                data = json.load(f)
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save_cache(self) -> None:
        try:
            os.makedirs(self._state_dir, exist_ok=True)
            tmp = self._cache_path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(self._cache, f, indent=1, sort_keys=True)
            os.replace(tmp, self._cache_path)
        except OSError as error:
            log.warning("cannot keep the accessories in %s: %s", self._cache_path, error)

    # -- running ---------------------------------------------------------------------------------

    async def run(self) -> None:
        configured = {link.config.name for link in self.links}
        cached = [dict(a, unreachable=True) for name, a in sorted(self._cache.items()) if name in configured]
        self.provider = homed.aio.Provider(self.settings.provider_id, cached, on_read=self.on_read,
                                           on_write=self.on_write, socket_path=self.settings.socket_path,
                                           client_name="homed-esphome")
        await self.provider.start()
        try:
            if not await self._wait_registered():
                return
            if not self.links:
                log.info("no devices configured")
            for link in self.links:
                link.start()
            await self.stopping.wait()
        finally:
            for link in self.links:
                await link.close()
            await self.provider.stop()

    async def _wait_registered(self) -> bool:
        if await self.provider.wait_registered_until(self.stopping):
            return True
        if self.provider.error is not None:
            self.refused_for_good = self.provider.error
            log.error("homed refused the provider: %s", self.provider.error)
        return False

    # -- what devices tell -----------------------------------------------------------------------

    async def register(self, link: DeviceLink, reachable: bool) -> bool:
        """Registers a device's accessory with its values and reachability in
        one call (the daemon publishes only what changed)."""
        accessory = link.map.with_values(link.states, reachable)
        try:
            await self.provider.update([accessory])
        except homed.HomedError as error:
            log.error("%s (%s): homed refused its accessory: %s", link.map.name, link.map.key, error)
            return False
        self._cache[link.config.name] = link.map.accessory
        self._save_cache()
        return True

    async def set_reachable(self, link: DeviceLink, reachable: bool) -> None:
        """As a registration, not a report: while homed is away it is kept for
        the next registration, so a device lost meanwhile is not registered as
        reachable when homed returns (the daemon publishes only the change)."""
        await self.register(link, reachable)

    async def report(self, link: DeviceLink, items) -> None:
        try:
            await self.provider.report(items)
        except homed.Unavailable:
            log.debug("%s: not connected to homed; values are given again at the next registration",
                      link.config.name)
        except homed.HomedError as error:
            log.warning("%s: homed refused a value in %s: %s", link.config.name,
                        ", ".join(f"{ref}={value!r}" for ref, value in items.items()), error)

    # -- homed's reads and writes ----------------------------------------------------------------

    def _group(self, pairs):
        groups: Dict[int, tuple] = {}
        missing: Dict[Ref, object] = {}
        for ref, value in pairs:
            ref = Ref(*ref)
            link = next((l for l in self.links if l.map is not None and l.map.key == ref.accessory_key), None)
            binding = link.map.bindings.get(ref) if link else None
            if binding is None:
                error = (homed.error_for(pb.UNAVAILABLE, f"{ref.accessory_key} has not connected yet") if link is None
                         else homed.error_for(pb.NOT_FOUND, f"{ref}: no such characteristic on the device"))
                missing[ref] = error
                continue
            groups.setdefault(id(link), (link, {}))[1][binding] = value
        return list(groups.values()), missing

    async def on_write(self, values, atomic):
        groups, errors = self._group(values.items())
        results = await asyncio.gather(*(link.write(items) for link, items in groups))
        for failed in results:
            for binding, error in failed.items():
                errors[binding.ref] = error
        return errors

    async def on_read(self, refs):
        groups, out = self._group((ref, None) for ref in refs)
        for link, items in groups:
            for binding, value in link.read(list(items)).items():
                out[binding.ref] = value
        return out
