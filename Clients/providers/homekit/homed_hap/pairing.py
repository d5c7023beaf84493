"""Pairing, unpairing and discovery with aiohomekit over IP.

A pairing is saved only once it works: pair-setup with the setup code, then a
pair-verify and a read of the accessory database on the new pairing, then the
file (store.py). A wrong code, an accessory that goes away half-way or a
database that cannot be read leave no file; a pairing the accessory made but
that cannot be used is removed from the accessory again (best effort)."""

from __future__ import annotations

import asyncio
import logging
from typing import List, Optional

from aiohomekit.characteristic_cache import CharacteristicCacheMemory
from aiohomekit.controller.ip.controller import IpController
from aiohomekit.controller.ip.discovery import IpDiscovery
from aiohomekit.controller.ip.pairing import IpPairing
from aiohomekit.exceptions import (AccessoryDisconnectedError, AlreadyPairedError, AuthenticationError, BusyError,
                                   MalformedPinError, MaxPeersError, MaxTriesError, UnavailableError)
from aiohomekit.model.categories import Categories
from aiohomekit.model.feature_flags import FeatureFlags
from aiohomekit.model.status_flags import StatusFlags
from aiohomekit.utils import check_pin_format
from aiohomekit.zeroconf import HomeKitService

from .store import Record, Store

log = logging.getLogger("homed-homekit.pairing")


class PairingFailed(Exception):
    """A pairing that did not happen, with the sentence a person needs."""


def controller() -> IpController:
    """An aiohomekit IP controller with no zeroconf (pairing by host and port
    needs none; the service gives it one to follow address and c# changes)."""
    return IpController(char_cache=CharacteristicCacheMemory(), zeroconf_instance=_NoZeroconf())


class _NoZeroconf:
    zeroconf = None


def parse_address(text: str):
    """HOST:PORT (IPv6 as [addr]:port) → (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"{text!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


def _description(host: str, port: int) -> HomeKitService:
    # What zeroconf would have told: only the address matters for pair-setup
    # over IP (feature flags 0: no MFi authentication, as HAP-IP accessories
    # without an Apple authentication chip pair).
    return HomeKitService(name=f"{host}:{port}", id="", model="", feature_flags=FeatureFlags(0),
                          status_flags=StatusFlags.UNPAIRED, config_num=0, state_num=0, category=Categories.OTHER,
                          protocol_version="1.1", type="_hap._tcp.local.", address=host, addresses=[host], port=port)


def explain(error: BaseException, where: str) -> str:
    """The sentence for a failed pair-setup."""
    if isinstance(error, AuthenticationError):
        return f"{where} refused the setup code: it is not this accessory's code (nothing was paired)"
    if isinstance(error, MaxTriesError):
        return f"{where} refuses pairing after too many wrong setup codes; restart the accessory and try again"
    if isinstance(error, (UnavailableError, AlreadyPairedError)):
        return (f"{where} is already paired with another controller; remove it there (or reset the accessory) "
                f"and try again")
    if isinstance(error, MaxPeersError):
        return f"{where} cannot take another controller (it has as many pairings as it can hold)"
    if isinstance(error, BusyError):
        return f"{where} is pairing with another controller right now; try again in a minute"
    if isinstance(error, MalformedPinError):
        return f"the setup code must be 8 digits as XXX-XX-XXX: {error}"
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)):
        return f"{where} did not answer in time (nothing was paired)"
    if isinstance(error, (AccessoryDisconnectedError, ConnectionError, OSError)):
        return f"cannot reach {where}, or it went away during pairing: {error} (nothing was paired)"
    return f"pairing with {where} failed: {type(error).__name__}: {error} (nothing was paired)"


async def pair(host: str, port: int, code: str, store: Store, timeout: float = 30.0) -> Record:
    """Pairs with the accessory at host:port with its setup code and saves the
    pairing. Raises PairingFailed, leaving nothing paired."""
    where = f"the accessory at {host}:{port}"
    try:
        check_pin_format(code)
    except MalformedPinError as error:
        raise PairingFailed(explain(error, where)) from None
    await _reachable(host, port, min(timeout, 10.0), where)
    ctrl = controller()
    discovery = IpDiscovery(ctrl, _description(host, port))
    try:
        finish = await asyncio.wait_for(discovery.async_start_pairing("homed"), timeout)
        pairing = await asyncio.wait_for(finish(code), timeout)
    except Exception as error:  # noqa: BLE001 - every failure is a sentence for the user
        raise PairingFailed(explain(error, where)) from None
    finally:
        await discovery.close()
    data = dict(pairing.pairing_data)
    device_id = str(data["AccessoryPairingID"]).lower()
    try:
        database = await asyncio.wait_for(pairing.list_accessories_and_characteristics(), timeout)
        record = Record(device_id, data, database)
        if store.load(device_id) is not None:
            log.info("replacing the earlier pairing with %s", device_id)
        store.save(record)
    except Exception as error:  # noqa: BLE001
        await _forget(pairing, data, where)
        raise PairingFailed(f"{where} ({device_id}) was paired but then {explain(error, 'it')}; "
                            f"the pairing was removed again") from None
    finally:
        await pairing.close()
    return record


async def _reachable(host: str, port: int, timeout: float, where: str) -> None:
    """Fails at once when nothing listens there (aiohomekit would retry with a
    backoff until the timeout, saying only that it timed out)."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except Exception as error:  # noqa: BLE001
        raise PairingFailed(f"cannot reach {where}: {getattr(error, 'strerror', None) or error or 'timed out'} "
                            f"(nothing was paired)") from None
    writer.close()


async def _forget(pairing: IpPairing, data: dict, where: str) -> None:
    try:
        await asyncio.wait_for(pairing.remove_pairing(data["iOSPairingId"]), 10)
    except Exception as error:  # noqa: BLE001 - best effort: say what is left
        log.error("%s may still hold the unusable pairing %s (%s); reset the accessory if it refuses pairing",
                  where, data.get("iOSPairingId"), error)


async def unpair(record: Record, store: Store, timeout: float = 15.0) -> Optional[str]:
    """Removes the pairing from the accessory, then the file. Returns a warning
    when the accessory could not be told (the file is removed all the same)."""
    where = f"the accessory {record.device_id} at {record.address}"
    warning = None
    try:
        host, port = str(record.pairing.get("AccessoryIP")), int(record.pairing.get("AccessoryPort"))
        await _reachable(host, port, min(timeout, 5.0), where)
    except (PairingFailed, TypeError, ValueError) as error:
        warning = f"{error}; it may still list this controller: reset it before pairing it again"
    if warning is None:
        pairing = IpPairing(controller(), record.pairing)
        try:
            await asyncio.wait_for(pairing.remove_pairing(record.pairing["iOSPairingId"]), timeout)
        except Exception as error:  # noqa: BLE001
            warning = (f"{where} could not be told ({explain(error, 'it')}); it may still list this controller: "
                       f"reset it before pairing it again")
        finally:
            await pairing.close()
    store.remove(record.device_id)
    return warning


class Mdns:
    """aiohomekit's IP controller on zeroconf: a browser of _hap._tcp (which
    aiohomekit expects its caller to run) and the controller following it."""

    def __init__(self):
        self.zeroconf = None
        self.browser = None
        self.controller = None

    async def start(self) -> "Mdns":
        from aiohomekit.zeroconf import HAP_TYPE_TCP, ZeroconfServiceListener
        from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf
        try:
            self.zeroconf = AsyncZeroconf()
            self.browser = AsyncServiceBrowser(self.zeroconf.zeroconf, [HAP_TYPE_TCP],
                                               listener=ZeroconfServiceListener())
            self.controller = IpController(char_cache=CharacteristicCacheMemory(), zeroconf_instance=self.zeroconf)
            await self.controller.async_start()
        except BaseException:
            await self.close()
            raise
        return self

    async def close(self) -> None:
        if self.controller is not None and hasattr(self.controller, "_browser"):
            await self.controller.async_stop()
        if self.browser is not None:
            await self.browser.async_cancel()
        if self.zeroconf is not None:
            await self.zeroconf.async_close()


async def discover(seconds: float) -> List[HomeKitService]:
    """HAP-IP accessories that zeroconf (mDNS) sees within `seconds`."""
    mdns = await Mdns().start()
    try:
        await asyncio.sleep(seconds)
        return [d.description for d in mdns.controller.discoveries.values()]
    finally:
        await mdns.close()
