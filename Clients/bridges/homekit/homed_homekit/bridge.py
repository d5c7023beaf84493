"""One HAP bridge: its driver (driver.py), the homed accessories behind it
(accessories.py), and homed's ids to HAP objects. A layout change rebuilds what
changed and moves the configuration number; values are applied as they come."""

from __future__ import annotations

import asyncio
from typing import Dict, Optional

from pyhap.accessory import Bridge
from pyhap.characteristic import Characteristic

from . import hapmodel as hm
from .accessories import EVENT_UUIDS, HomedAccessory
from .driver import BridgeDriver, Reader, Writer


class HapBridge:
    """One HAP bridge: its driver, its accessories, homed ids to HAP objects."""

    def __init__(self, index: int, name: str, address: str, port: int, setup: dict, state_file: str,
                 advertiser, writer: Writer, reader: Reader, listen_address: Optional[str] = None):
        self.index = index
        self.driver = BridgeDriver(writer=writer, reader=reader, address=address, port=port,
                                   listen_address=listen_address, persist_file=state_file,
                                   pincode=setup["pincode"].encode(), loop=asyncio.get_running_loop(),
                                   async_zeroconf_instance=advertiser)
        self.driver.state.setup_id = setup["setup_id"]  # HAP-python makes a new one each start otherwise
        self.bridge = Bridge(self.driver, name)
        self.bridge.set_info_service(manufacturer="homed", model="homed HomeKit bridge",
                                     serial_number=f"homed-bridge-{index}")
        self.driver.add_accessory(self.bridge)
        self.by_homed: Dict[int, HomedAccessory] = {}   # homed accessory id -> accessory
        self.chars: Dict[int, Characteristic] = {}       # homed characteristic id -> characteristic
        self.owners: Dict[int, HomedAccessory] = {}      # homed characteristic id -> its accessory
        self.started = False

    @property
    def config_number(self) -> int:
        return self.driver.state.config_version

    async def start(self) -> None:
        await self.driver.async_start()
        self.started = True

    async def stop(self) -> None:
        if self.started:
            self.started = False
            await self.driver.async_stop()

    def set_accessories(self, entries) -> bool:
        """Makes the bridge show exactly ``entries`` ([(AccessorySpec, Placement)]).
        An accessory whose structure is unchanged is kept as it is; the others are
        built again, and a controller subscribed to one of their values that
        changed gets it. Returns whether the configuration number changed."""
        new: Dict[int, HomedAccessory] = {}
        for spec, placement in entries:
            old = self.by_homed.get(spec.homed_id)
            if old is not None and old.aid == placement.aid and old.spec.signature() == spec.signature():
                old.spec = spec
                old.reachable = spec.reachable
                for c in (c for s in spec.services for c in s.chars):
                    # A snapshot's value of a button is its last press, not a new one.
                    if c.type in hm.EVENT_TYPES:
                        continue
                    if c.value is not None:
                        old.apply(c.homed_id, c.value)
                    elif "pr" in c.perms:
                        old.unreported.add(c.homed_id)  # dropped by homed (a narrower range): read again
                new[spec.homed_id] = old
                continue
            accessory = HomedAccessory(self.driver, spec, placement)
            if old is not None and old.aid == placement.aid:
                for homed_id, char in accessory.chars.items():
                    before = old.chars.get(homed_id)
                    if (before is not None and before.value != char.value and char.value is not None
                            and char.type_id not in EVENT_UUIDS):
                        char.notify()
            new[spec.homed_id] = accessory
        self.by_homed = new
        self.bridge.accessories = {acc.aid: acc for acc in new.values()}
        self.chars = {hid: char for acc in new.values() for hid, char in acc.chars.items()}
        self.owners = {hid: acc for acc in new.values() for hid in acc.chars}
        # The configuration number follows the structure (HAP-python hashes the
        # accessory database without values), so a controller fetches it again.
        if self.driver.state.set_accessories_hash(self.driver.accessories_hash):
            self.driver.persist()
            if self.started:
                self.driver.async_update_advertisement()
            return True
        return False

    def apply(self, homed_char_id: int, value, seq: int = 0) -> None:
        owner = self.owners.get(homed_char_id)
        if owner is not None:
            self.driver.applied_seq[homed_char_id] = seq
            owner.apply(homed_char_id, value, sender=self.driver.writer_of(self.chars[homed_char_id], value))

    def set_reachable(self, homed_accessory_id: int, reachable: bool) -> Optional[HomedAccessory]:
        accessory = self.by_homed.get(homed_accessory_id)
        if accessory is not None:
            accessory.reachable = reachable
        return accessory
