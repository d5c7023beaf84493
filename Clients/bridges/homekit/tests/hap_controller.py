"""aiohomekit as the HomeKit controller of the tests, on loopback, with no mDNS:
it is given the bridge's host and port, as aiohomekit's own tests do. Its asyncio
loop runs on a thread of its own so that tests stay plain functions; every call
is bounded."""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Dict, List, Optional, Tuple
from unittest.mock import MagicMock

from aiohomekit.characteristic_cache import CharacteristicCacheMemory
from aiohomekit.controller.ip.controller import IpController
from aiohomekit.controller.ip.discovery import IpDiscovery
from aiohomekit.controller.ip.pairing import IpPairing
from aiohomekit.model.categories import Categories
from aiohomekit.model.feature_flags import FeatureFlags
from aiohomekit.model.status_flags import StatusFlags
from aiohomekit.zeroconf import HomeKitService
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

CALL_TIMEOUT = 20.0


def service(host: str, port: int) -> HomeKitService:
    """What mDNS would have told about an unpaired bridge at host:port."""
    return HomeKitService(name="homed Bridge", id="00:00:00:00:00:00", model="homed", feature_flags=FeatureFlags(0),
                          status_flags=StatusFlags.UNPAIRED, config_num=1, state_num=1, category=Categories.BRIDGE,
                          protocol_version="1.1", type="_hap._tcp.local.", address=host, addresses=[host], port=port)


class HapController:
    """One controller (one pairing identity, one connection)."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.controller = self.run(self._make())
        self.pairing: Optional[IpPairing] = None
        self.events: List[Dict[Tuple[int, int], dict]] = []
        self._cond = threading.Condition()

    async def _make(self):
        return IpController(char_cache=CharacteristicCacheMemory(), zeroconf_instance=MagicMock())

    def run(self, coro, timeout: float = CALL_TIMEOUT):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    # -- pairing -----------------------------------------------------------

    def start_pairing(self, host: str, port: int):
        """The first half of pair-setup (SRP start): returns finish(pin)."""
        async def start():
            discovery = IpDiscovery(self.controller, service(host, port))
            finish = await discovery.async_start_pairing("bridge")
            return discovery, finish
        discovery, finish = self.run(start())
        self._discovery = discovery
        return finish

    def pair(self, host: str, port: int, pin: str) -> IpPairing:
        finish = self.start_pairing(host, port)
        try:
            self.pairing = self.run(finish(pin))
        finally:
            self.run(self._discovery.close())
        self._listen()
        return self.pairing

    def pair_as_guest_of(self, admin: "HapController", host: str, port: int, permissions: str = "User") -> IpPairing:
        """Pairs this controller by the admin's AddPairing, as iOS shares a home."""
        key = ed25519.Ed25519PrivateKey.generate()
        ltsk = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                 serialization.NoEncryption()).hex()
        ltpk = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()
        pairing_id = str(uuid.uuid4())
        admin.run(admin.pairing.add_pairing(pairing_id, ltpk, permissions))
        data = {k: admin.pairing.pairing_data[k] for k in ("AccessoryPairingID", "AccessoryLTPK")}
        data.update({"iOSPairingId": pairing_id, "iOSDeviceLTSK": ltsk, "iOSDeviceLTPK": ltpk, "AccessoryIP": host,
                     "AccessoryIPs": [host], "AccessoryPort": port, "Connection": "IP"})
        self.pairing = self.run(self._load(data))
        self._listen()
        return self.pairing

    async def _load(self, data):
        return IpPairing(self.controller, data)

    @property
    def pairing_id(self) -> str:
        return self.pairing.pairing_data["iOSPairingId"]

    # -- the accessory database, reads, writes, events --------------------

    def accessories(self) -> list:
        return self.run(self.pairing.list_accessories_and_characteristics())

    def get(self, ids) -> dict:
        return self.run(self.pairing.get_characteristics(list(ids)))

    def put(self, items) -> dict:
        return self.run(self.pairing.put_characteristics(list(items)))

    def put_raw(self, body: dict):
        """A /characteristics PUT as given (aiohomekit's put_characteristics
        checks ids against its copy of the database first)."""
        return self.run(self.pairing.connection.put_json("/characteristics", body))

    def subscribe(self, ids) -> dict:
        return self.run(self.pairing.subscribe(list(ids)))

    def _listen(self):
        def on_event(event):
            with self._cond:
                self.events.append(dict(event))
                self._cond.notify_all()
        self.pairing.dispatcher_connect(on_event)

    def values_of(self, key) -> list:
        with self._cond:
            return [e[key]["value"] for e in self.events if key in e and "value" in e[key]]

    def wait_values(self, key, count: int = 1, timeout: float = 10.0) -> list:
        """The values of at least ``count`` events of characteristic ``key`` (aid, iid)."""
        with self._cond:
            ok = self._cond.wait_for(lambda: len([e for e in self.events if key in e and "value" in e[key]]) >= count,
                                     timeout)
            values = [e[key]["value"] for e in self.events if key in e and "value" in e[key]]
        if not ok:
            raise AssertionError(f"{len(values)} events of {key} within {timeout} s, expected {count}: {values}")
        return values

    def close(self):
        try:
            if self.pairing is not None:
                self.run(self.pairing.close(), timeout=5)
        except Exception:  # noqa: BLE001 - closing a connection already gone
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def find(accessories: list, aid: int, char_type: str) -> int:
    """The iid of the characteristic of type ``char_type`` (a short or full UUID) in accessory ``aid``."""
    full = char_type.upper() if "-" in char_type else f"{int(char_type, 16):08X}-0000-1000-8000-0026BB765291"
    for accessory in accessories:
        if accessory["aid"] == aid:
            for svc in accessory["services"]:
                for char in svc["characteristics"]:
                    if char["type"].upper() == full:
                        return char["iid"]
    raise AssertionError(f"no characteristic {char_type} in accessory {aid}")
