"""The provider: paired devices (device.py) on one side, homed.aio.Provider
on the other. It asks homed for its catalog (the mapping registers what homed
knows as catalog types, the rest as custom ones), registers every paired
device's accessories from the database last saved (unreachable until the
device answers), then follows each device. New and removed pairing files are
noticed while it runs (`pair` and `unpair` need no restart)."""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import homed
import homed.aio
from homed import pb
from homed.refs import Ref

from .catalog import Catalog
from .device import DeviceLink
from .mapping import Binding
from .pairing import Mdns, controller
from .store import Store

log = logging.getLogger("homed-homekit")


@dataclass
class Settings:
    state_dir: str
    socket_path: Optional[str] = None
    provider_id: str = "homekit"
    write_timeout: float = 4.5
    read_timeout: float = 4.5
    mdns: bool = True
    rescan: float = 2.0  # how often the pairing directory is looked at


class HomeKitProvider:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.store = Store(settings.state_dir)
        self.links: Dict[str, DeviceLink] = {}
        self.provider: Optional[homed.aio.Provider] = None
        self.catalog: Optional[Catalog] = None
        self.stopping = asyncio.Event()
        self._mdns = None
        self._controller = None
        self._seen: Optional[int] = None  # the pairing directory's mtime at the last look
        self.refused_for_good: Optional[BaseException] = None

    # -- running --------------------------------------------------------------------

    async def run(self) -> None:
        self.catalog = await self._read_catalog()
        if self.catalog is None:
            return
        self._controller = await self._make_controller()
        for record in self.store.load_all():
            self._add_link(record)
        if not self.links:
            log.info("no paired accessories yet: pair one with `homed-homekit-provider pair HOST:PORT`")
        accessories = [a for link in self.links.values() for a in link.map.accessories(link.values, False)]
        self.provider = homed.aio.Provider(self.settings.provider_id, accessories, on_read=self.on_read,
                                           on_write=self.on_write, socket_path=self.settings.socket_path,
                                           client_name="homed-homekit-provider")
        await self.provider.start()
        try:
            if not await self._wait_registered():
                return
            await self._remove_stale_keys()
            for link in self.links.values():
                link.start()
            while not self.stopping.is_set():
                try:
                    await asyncio.wait_for(self.stopping.wait(), self.settings.rescan)
                except asyncio.TimeoutError:
                    await self._rescan()
        finally:
            for link in list(self.links.values()):
                await link.close()
            await self.provider.stop()
            if self._mdns is not None:
                await self._mdns.close()

    async def _wait_registered(self) -> bool:
        if await self.provider.wait_registered_until(self.stopping):
            return True
        if self.provider.error is not None:
            self.refused_for_good = self.provider.error
            log.error("homed refused the provider: %s", self.provider.error)
        return False

    async def _read_catalog(self) -> Optional[Catalog]:
        """homed's catalog; waits (with a backoff) for homed to answer."""
        wait = 0.1
        while not self.stopping.is_set():
            try:
                async with homed.aio.connect(self.settings.socket_path, client_name="homed-homekit-provider",
                                             call_timeout=10) as client:
                    return Catalog(await client.call("ListTypes", pb.ListTypesRequest()))
            except (homed.HomedError, OSError) as error:
                log.info("homed not answering yet (%s); trying again", error)
            try:
                await asyncio.wait_for(self.stopping.wait(), wait)
            except asyncio.TimeoutError:
                wait = min(wait * 2, 5.0)
        return None

    async def _make_controller(self):
        """aiohomekit's controller; with zeroconf (mDNS) unless told not to: it
        follows the devices' addresses and configuration numbers (c#)."""
        if not self.settings.mdns:
            return controller()
        try:
            self._mdns = await Mdns().start()
            return self._mdns.controller
        except Exception as error:  # noqa: BLE001 - mDNS is a help, not a need
            log.warning("mDNS unavailable (%s): addresses and configuration changes are followed only on "
                        "reconnection", error)
            return controller()

    def _add_link(self, record) -> DeviceLink:
        link = DeviceLink(record, self.catalog, self.store, self._controller, self,
                          self.settings.write_timeout, self.settings.read_timeout)
        self._controller.pairings[record.device_id] = link.pairing  # zeroconf updates reach it
        self.links[record.device_id] = link
        log.info("%s: %d accessories", link.name, len(link.map.templates))
        return link

    async def _remove_stale_keys(self) -> None:
        """Keys homed knows from this provider whose device is no longer paired."""
        ours = {key for link in self.links.values() for key in link.map.keys}
        stale = sorted(set(self.provider.known_keys) - ours)
        if stale:
            log.info("removing %d accessories of devices no longer paired: %s", len(stale), ", ".join(stale))
            try:
                await self.provider.remove(stale)
            except homed.HomedError as error:
                log.error("removing %s failed: %s", ", ".join(stale), error)

    async def _rescan(self) -> None:
        """Pairings added or removed (by `pair` and `unpair`) since the last look
        (the files are read only when the directory changed)."""
        try:
            stamp = os.stat(self.store.directory).st_mtime_ns
        except FileNotFoundError:
            stamp = None
        if stamp is not None and stamp == self._seen:
            return
        self._seen = stamp
        records = {r.device_id: r for r in self.store.load_all()}
        for device_id in sorted(set(records) - set(self.links)):
            log.info("new pairing: %s", device_id)
            link = self._add_link(records[device_id])
            await self.register(link, reachable=False)
            link.start()
        for device_id in sorted(set(self.links) - set(records)):
            link = self.links.pop(device_id)
            self._controller.pairings.pop(device_id, None)
            log.info("%s was unpaired: removing its accessories", link.name)
            await link.close()
            try:
                await self.provider.remove(link.map.keys)
            except homed.HomedError as error:
                log.error("removing the accessories of %s failed: %s", link.name, error)

    # -- what devices tell ---------------------------------------------------------------

    async def register(self, link: DeviceLink, reachable: bool, changed: bool = False, gone=()) -> None:
        """Registers a device's accessories with the values known: reachability,
        values and layout in one call (the daemon publishes only what changed)."""
        if gone:
            log.info("%s: accessories gone from its database: %s", link.name, ", ".join(gone))
            try:
                await self.provider.remove(list(gone))
            except homed.HomedError as error:
                log.error("%s: removing %s failed: %s", link.name, ", ".join(gone), error)
        accessories = link.map.accessories(link.values, reachable)
        try:
            await self.provider.update(accessories)
        except homed.HomedError as error:
            log.error("%s: homed refused its accessories (%s); registering them one by one", link.name, error)
            for accessory in accessories:
                try:
                    await self.provider.update([accessory])
                except homed.HomedError as one:
                    log.error("%s: accessory %r (%s) not registered: homed refused it: %s", link.name,
                              accessory.name, accessory.key, one)
            return
        if changed:
            log.info("%s: accessory database changed; registered again", link.name)
        log.info("%s: %s", link.name, "reachable" if reachable else "unreachable")

    async def report(self, link: DeviceLink, items) -> None:
        try:
            await self.provider.report(items)
        except homed.Unavailable:
            log.debug("%s: not connected to homed; values are read again at the next registration", link.name)
        except homed.HomedError as error:
            log.warning("%s: homed refused a value in %s: %s", link.name,
                        ", ".join(f"{ref}={value!r}" for ref, value in items), error)

    # -- homed's reads and writes -----------------------------------------------------------

    def _group(self, refs) -> Tuple[Dict[str, Dict[Binding, object]], Dict[Ref, object]]:
        groups: Dict[str, Dict[Binding, object]] = {}
        missing: Dict[Ref, object] = {}
        for ref, value in refs:
            device_id = ref.accessory_key.rsplit("/", 1)[0]
            link = self.links.get(device_id)
            binding = link.map.by_ref.get(Ref(*ref)) if link else None
            if binding is None:
                missing[ref] = homed.error_for(pb.NOT_FOUND, f"{ref}: no such characteristic on a paired device")
                continue
            groups.setdefault(device_id, {})[binding] = value
        return groups, missing

    async def on_write(self, values, atomic):
        groups, errors = self._group(values.items())
        results = await asyncio.gather(*(self.links[d].write(items, atomic) for d, items in groups.items()))
        for failed in results:
            for binding, error in failed.items():
                errors[binding.ref] = error
        return errors

    async def on_read(self, refs):
        groups, out = self._group((ref, None) for ref in refs)
        results = await asyncio.gather(*(self.links[d].read(list(items)) for d, items in groups.items()))
        for answers in results:
            for binding, value in answers.items():
                out[binding.ref] = value
        return out
