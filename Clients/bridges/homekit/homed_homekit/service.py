"""The bridge as a service: follows homed with a subscription resumed across
connections and keeps the HAP bridges (bridge.py) showing what homed has.

- The moment a connection ends (homed stopped, killed, crashed: the socket's
  EOF or reset; or three heartbeats missed), every accessory answers No
  Response until homed answers again.

- homed's home is a replica (``homed.home.Home``) kept by the subscription across
  connections. On the first stream message, after a lost connection, a RESYNC (a
  restarted homed) and a layout event, the home is read again (GetHome) and the
  bridges rebuilt from the replica; value and reachability events at or below the
  home's sequence number are already in it and are skipped, the later ones applied
  in order. So a restart of homed loses no value and leaves none stale.
- A controller's write is a homed write on the subscription's own connection
  (its client name, "homekit-bridge", is the origin homed records); reads of
  characteristics homed does not stream are asked of homed's cache.
- The subscription leaves out the events of the bridge's own writes
  (``exclude_own``): each is applied from homed's answer instead (driver.py),
  which spares homed an event and the bridge its handling on every write.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import homed
import homed.aio
from homed import pb
from homed.home import Home

from . import hapmodel as hm
from .exposure import Exposure
from .bridge import HapBridge
from .driver import NoAdvertiser
from .ids import HOMEKIT_MAX_PER_BRIDGE, IdTable
from .state import StateDir

log = logging.getLogger("homed-homekit")

KINDS = [pb.EVENT_VALUE_CHANGED, pb.EVENT_REACHABILITY_CHANGED, pb.EVENT_LAYOUT_CHANGED]
WRITE_TIMEOUT = 8.0   # under iOS's 10 s for a HAP request
READ_TIMEOUT = 5.0
START_WITHOUT_HOMED_AFTER = 10.0
HEARTBEAT_MS = 5000     # a quiet home still sends something: a failed read of the home is retried,
STALL_AFTER = 3 * HEARTBEAT_MS / 1000  # and a homed that sends nothing for three heartbeats is lost
CONNECT_TIMEOUT = 10.0
FIRST_BACKOFF = 0.1
MAX_BACKOFF = 2.0


@dataclass
class Settings:
    state_dir: str
    socket: Optional[str] = None
    name: str = "homed Bridge"
    address: Optional[str] = None           # advertised and listened on; None: the host's address
    port: int = 51827                       # bridge N listens on port + N
    advertise: bool = True
    exposure: Exposure = field(default_factory=Exposure)
    max_per_bridge: int = HOMEKIT_MAX_PER_BRIDGE
    start_unfilled_after: float = START_WITHOUT_HOMED_AFTER
    client_name: str = "homekit-bridge"


class HomekitBridgeService:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.state = StateDir(settings.state_dir)
        self.ids = IdTable(self.state.load("ids.json"), settings.max_per_bridge)
        self.bridges: Dict[int, HapBridge] = {}
        self.home = Home()  # homed's home, kept across connections
        self.client: Optional[homed.aio.Client] = None
        self.stopping: Optional[asyncio.Event] = None
        self.advertiser = None
        self.rebuilds = 0
        self.needs_rebuild = False
        self.followed = False
        self.connections = 0

    # -- lifecycle ---------------------------------------------------------

    async def run(self) -> None:
        self.stopping = asyncio.Event()
        if self.settings.advertise:
            from zeroconf.asyncio import AsyncZeroconf
            self.advertiser = AsyncZeroconf()
        else:
            self.advertiser = NoAdvertiser()
        try:
            follow = asyncio.ensure_future(self._follow_forever())
            stop = asyncio.ensure_future(self.stopping.wait())
            unfilled = asyncio.ensure_future(self._start_unfilled(self.settings.start_unfilled_after))
            try:
                await asyncio.wait({follow, stop}, return_when=asyncio.FIRST_COMPLETED)
                if follow.done():
                    follow.result()  # a failure of the bridge itself: the unit restarts it
            finally:
                for task in (follow, stop, unfilled):
                    task.cancel()
                await asyncio.gather(follow, stop, unfilled, return_exceptions=True)
        finally:
            for bridge in list(self.bridges.values()):
                await bridge.stop()
            if not isinstance(self.advertiser, NoAdvertiser):
                await self.advertiser.async_close()

    def stop(self) -> None:
        if self.stopping is not None:
            self.stopping.set()

    def _make_bridge(self, index: int) -> HapBridge:
        s = self.settings
        name = s.name if index == 0 else f"{s.name} {index + 1}"
        bridge = HapBridge(index, name, s.address, s.port + index, self.state.bridge_setup(index),
                           self.state.bridge_state_file(index), self.advertiser, self._write, self._read)
        self.bridges[index] = bridge
        return bridge

    async def _start(self, bridge: HapBridge) -> None:
        try:
            await bridge.start()
        except OSError as error:
            log.error("HomeKit bridge %r cannot listen on %s port %d: %s", bridge.bridge.display_name,
                      bridge.driver.state.address, bridge.driver.state.port, error.strerror or error)
            self.bridges.pop(bridge.index, None)  # made again, and started, on the next try
            raise
        log.info("HomeKit bridge %r listening on port %d (configuration %d, %s)", bridge.bridge.display_name,
                 bridge.driver.state.port, bridge.config_number, "paired" if bridge.driver.state.paired else
                 "not paired: see `homed-homekit pairing` for its setup code")

    async def _start_unfilled(self, delay: float) -> None:
        """A bridge is started with its accessories, so that no controller sees
        it empty under the configuration number of a full one; if homed does not
        answer for a while, bridge 0 starts all the same (pairing needs it), and
        the configuration number changes when the accessories come."""
        await asyncio.sleep(delay)
        if 0 not in self.bridges:
            log.warning("homed has not answered within %.0f s: the bridge starts without accessories", delay)
            await self._start(self._make_bridge(0))

    # -- following homed ---------------------------------------------------

    async def _follow_forever(self) -> None:
        """One connection at a time, each resuming from where the last stood
        (the replica's cursor), made again whenever one ends: homed not running yet, a
        restart, a crash. The end of a connection is seen at once (the socket's
        EOF or reset ends the stream; a homed that stops answering misses its
        heartbeats), and at once every accessory answers No Response: a resuming
        subscription would hide the loss behind its own reconnections, and the
        bridge would go on answering with the last values of a homed that is gone."""
        backoff, said = FIRST_BACKOFF, None
        while True:
            try:
                await self._follow_connection()
                error = "homed ended the stream"
            except (homed.HomedError, OSError) as failure:
                error = str(failure)  # TimeoutError too (an OSError): no heartbeat for STALL_AFTER s
            lost = self._lose_homed()
            if self.followed:
                backoff, said = FIRST_BACKOFF, None
                self.followed = False
            if error != said:
                log.warning("cannot follow homed (%s): trying again; meanwhile HomeKit shows No Response%s", error,
                            f" for its {lost} accessories" if lost else "")
                said = error
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)

    def _lose_homed(self) -> int:
        """homed is gone (or not there yet): nothing is known of the devices
        until it answers again, so every accessory answers No Response (never
        faked as reachable with the last values), and the home is read again
        on the next connection's first message. Returns how many accessories."""
        self.client = None
        count = 0
        for bridge in self.bridges.values():
            for accessory in bridge.by_homed.values():
                accessory.reachable = False
                count += 1
        self.needs_rebuild = True
        return count

    async def _follow_connection(self) -> None:
        """One connection's subscription, until it ends (returns) or fails
        (raises): resumed from where the replica stands, as
        ``homed.aio.resuming_subscription`` does across its connections."""
        client = await homed.aio.Client.connect(self.settings.socket, self.settings.client_name,
                                                timeout=CONNECT_TIMEOUT)
        try:
            request = self.home.resume(pb.SubscribeRequest(
                filter=pb.SubscriptionFilter(kinds=KINDS), queue_limit=16384, heartbeat_ms=HEARTBEAT_MS,
                exclude_own=True))
            stream = client.subscribe(request)
            self.connections += 1
            log.info("following homed (connection %d)", self.connections)
            try:
                while True:
                    message = await stream.get(timeout=STALL_AFTER)
                    if message is None:
                        return
                    await self._handle(client, message)
            finally:
                stream.cancel()
        finally:
            await client.close()

    async def _handle(self, client, message) -> None:
        self.followed = True
        self.client = client
        changes = self.home.apply(message)
        if changes.resync:
            log.info("homed could not resume the stream (%s): reading the home again", message.marker.reason)
        if self.home.needs_load or self.needs_rebuild:
            try:
                await self.rebuild()
            except homed.HomedError as error:
                # The connection went while reading the home, say: the stream
                # ends, and the home is read again on the next one's first
                # message (a heartbeat at the latest).
                log.warning("reading the home failed (%s): again on homed's next message", error)
                self.needs_rebuild = True
                return
        for event in changes.events:
            if event.seq <= self.home.loaded_seq:
                continue  # in the home read since
            if event.kind == pb.EVENT_VALUE_CHANGED:
                self._apply_value(event.value, event.seq)
            elif event.kind == pb.EVENT_REACHABILITY_CHANGED:
                self._apply_reachability(event.reachability)

    async def rebuild(self) -> None:
        home = self.home
        home.load(await self.client.get_home())
        rooms = {room.id: room.name for room in home.rooms.values()}
        accessories = [a for h in home.ordered_homes() for a in h.accessories]
        exposure = self.settings.exposure
        specs = [hm.accessory_spec(a) for a in accessories if exposure.shows(a, rooms.get(a.room_id, ""))]
        gone = self.ids.forget_except(a.id for a in accessories)
        placements = self.ids.place(specs)
        if self.ids.changed:
            self.state.save("ids.json", self.ids.to_dict())
            self.ids.changed = False
        by_bridge: Dict[int, List] = {index: [] for index in self.ids.bridges()}
        for spec in specs:
            placement = placements[spec.homed_id]
            by_bridge.setdefault(placement.bridge, []).append((spec, placement))
        for index in sorted(by_bridge):
            entries = by_bridge[index]
            bridge = self.bridges.get(index)
            if bridge is None:
                if not entries and index != 0:
                    continue
                bridge = self._make_bridge(index)
                bridge.set_accessories(entries)
                await self._start(bridge)
            elif bridge.set_accessories(entries):
                log.info("HomeKit bridge %d now shows %d accessories (configuration %d)", index, len(entries),
                         bridge.config_number)
        for bridge in self.bridges.values():
            bridge.driver.home_seq = home.loaded_seq
        self.needs_rebuild = False
        self.rebuilds += 1
        looped = sum(1 for a in accessories if exposure.from_excluded_provider(a) and a.category != pb.CATEGORY_BRIDGE
                     and not exposure.shows(a, rooms.get(a.room_id, "")))
        log.info("home read at seq %d: %d of %d accessories shown%s%s", home.loaded_seq, len(specs), len(accessories),
                 f"; {looped} of providers {', '.join(sorted(exposure.exclude_providers))} left out (HomeKit has "
                 f"them already; [expose] exclude_providers)" if looped else "",
                 f"; {len(gone)} gone from homed" if gone else "")

    def _apply_value(self, change, seq: int) -> None:
        for bridge in self.bridges.values():
            char = bridge.chars.get(change.characteristic_id)
            if char is not None:
                bridge.apply(change.characteristic_id, hm.to_hap(change.value, char.properties["Format"]), seq)
                return

    def _apply_reachability(self, change) -> None:
        for bridge in self.bridges.values():
            accessory = bridge.set_reachable(change.accessory_id, change.reachable)
            if accessory is not None:
                log.info("%s is %s", accessory.spec.name,
                         "reachable again" if change.reachable else "unreachable: HomeKit shows No Response")
                return

    # -- what controllers ask ------------------------------------------------

    async def _write(self, items: List[Tuple[int, object]]) -> List[Tuple[int, str]]:
        client = self.client
        if client is None:
            return [(pb.UNAVAILABLE, "homed is not connected", 0)] * len(items)
        response = await client.write(dict(items), timeout=WRITE_TIMEOUT)
        written = dict(items)
        for r in response.results:
            if r.code == pb.OK:
                # The subscription leaves out our own writes: the replica takes them from here.
                self.home.written(r.characteristic_id, written[r.characteristic_id], r.seq)
        by_id = {r.characteristic_id: (r.code, r.message, r.seq) for r in response.results}
        return [by_id.get(homed_id, (pb.INTERNAL, "no result", 0)) for homed_id, _ in items]

    async def _read(self, homed_ids: List[int]) -> Dict[int, Tuple[int, object]]:
        client = self.client
        if client is None:
            return {}
        response = await client.read(homed_ids, timeout=READ_TIMEOUT)
        answers = {}
        for read in response.reads:
            char = self.home.characteristics.get(read.characteristic_id)
            fmt = hm.FORMATS.get(char.metadata.format, "data") if char is not None else "data"
            answers[read.characteristic_id] = (read.code, hm.to_hap(read.value, fmt) if read.code == 0 else None)
        return answers
