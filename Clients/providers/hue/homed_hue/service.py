"""The provider: the bridge (bridge.py) on one side, homed.aio.Provider on the
other. It reads every resource, registers one accessory per Hue device, then
follows the bridge's event stream: values and presses reported, reachability
from zigbee_connectivity, writes answered once the bridge's event confirms
them. When the bridge goes away every accessory is unreachable; it connects
again with a backoff and reads everything again."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import aiohttp

import homed
import homed.aio
from homed import pb

from .bridge import Bridge, BridgeError, Unauthorized
from .keyfile import Pairing
from .mapping import MISSING, BridgeMap, map_bridge, press_of, reachable_of, service_groups
from .resources import Resources, merge, read_event, wrong_types
from .writes import Confirmations, changes, light_body

log = logging.getLogger("homed-hue")

MIN_BACKOFF, MAX_BACKOFF = 0.5, 10.0


@dataclass
class Settings:
    pairing: Pairing
    ssl_check: object  # what aiohttp's ssl= takes (bridge.tls)
    socket_path: Optional[str] = None
    provider_id: str = "hue"
    write_timeout: float = 4.5  # under homed's 5 s
    probe_interval: float = 30.0  # how often a silent bridge is asked whether it still answers
    refused_retry: float = 10.0  # a refused key is asked once more after this long before giving up


class HueProvider:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.stopping = asyncio.Event()
        self.resources = Resources()
        self.map: Optional[BridgeMap] = None
        self.bridge: Optional[Bridge] = None
        self.connected = False
        self.confirmations = Confirmations()
        self._waiters: Dict[int, asyncio.Future] = {}
        self._logged: Set[str] = set()
        self._cleaned = False
        self._probe_failed: Optional[BaseException] = None
        self.provider: Optional[homed.aio.Provider] = None
        self.refused_for_good: Optional[BaseException] = None
        self.key_revoked: Optional[Unauthorized] = None  # the bridge refused the key twice: the provider ends
        self._stream = None
        self._followed = False
        self._unknown_logged: Set[str] = set()

    @property
    def address(self) -> str:
        return self.settings.pairing.address

    # -- running --------------------------------------------------------------------

    async def run(self) -> None:
        self.provider = homed.aio.Provider(self.settings.provider_id, [], on_read=self.on_read,
                                           on_write=self.on_write, socket_path=self.settings.socket_path,
                                           client_name="homed-hue")
        await self.provider.start()
        try:
            if not await self._wait_registered():
                return
            backoff = MIN_BACKOFF
            refused = False
            while not self.stopping.is_set():
                self._followed = False
                try:
                    await self._follow_bridge()
                    log.warning("bridge %s: the event stream ended; connecting again", self.address)
                    backoff = MIN_BACKOFF
                except Unauthorized as error:
                    # A key deleted on the bridge never comes back by itself;
                    # asked once more (not trusting a single answer), then the end.
                    if self._followed:
                        refused = False  # it was taken since the last refusal
                    if refused or self.settings.refused_retry <= 0:
                        self.key_revoked = error
                        await self._bridge_lost()
                        return
                    refused = True
                    log.error("bridge %s: %s; asking once more in %g s, then giving up (a key revoked on the bridge "
                              "does not come back)", self.address, error, self.settings.refused_retry)
                    await self._bridge_lost()
                    try:
                        await asyncio.wait_for(self.stopping.wait(), self.settings.refused_retry)
                    except asyncio.TimeoutError:
                        pass
                    continue
                except aiohttp.ServerFingerprintMismatch:
                    # Another device at the bridge's address, or a bridge reset: never send it the key.
                    log.error("bridge %s: its certificate is not the one pinned at pairing; pair again if the "
                              "bridge was replaced", self.address)
                    backoff = MAX_BACKOFF
                except (aiohttp.ClientError, asyncio.TimeoutError, OSError, BridgeError) as error:
                    log.warning("bridge %s: %s; trying again in %.1f s", self.address,
                                str(error) or type(error).__name__, backoff)
                await self._bridge_lost()
                try:
                    await asyncio.wait_for(self.stopping.wait(), backoff)
                except asyncio.TimeoutError:
                    pass
                backoff = min(backoff * 2, MAX_BACKOFF)
        finally:
            await self.provider.stop()

    async def _wait_registered(self) -> bool:
        if await self.provider.wait_registered_until(self.stopping):
            return True
        if self.provider.error is not None:
            self.refused_for_good = self.provider.error
            log.error("homed refused the provider: %s", self.provider.error)
        return False

    async def _follow_bridge(self) -> None:
        async with Bridge(self.address, self.settings.pairing.application_key, self.settings.ssl_check) as bridge:
            # The stream first, then the resources: nothing that changes
            # between the two is missed (its events are applied on top).
            stream = await bridge.open_events()
            events = bridge.events(stream)
            try:
                self.resources = Resources(await bridge.resources())
                self.bridge = bridge
                self._stream = stream
                self.connected = True
                self._followed = True
                await self._register_all()
                log.info("bridge %s: %d accessories registered; following its events", self.address,
                         len(self.map.devices))
                watchdog = asyncio.get_running_loop().create_task(self._probe(bridge, stream))
                try:
                    async for event_id, data in events:
                        await self.on_message(event_id, data)
                except aiohttp.ClientError:
                    if self._probe_failed is not None:  # the watchdog closed the stream: say why
                        raise self._probe_failed from None
                    raise
                finally:
                    watchdog.cancel()
                if self._probe_failed is not None:
                    raise self._probe_failed
            finally:
                self.connected = False
                self.bridge = None
                self._stream = None
                await events.aclose()

    async def _update(self, accessories) -> None:
        # homed.aio.Provider registers these again after a restart of homed;
        # the values it then asks for are read from the resources (on_read).
        await self.provider.update(accessories)

    async def _probe(self, bridge: Bridge, stream) -> None:
        """Ends the event stream when the bridge stops answering: a bridge
        unplugged or hung sends no FIN, and its stream would just stay silent."""
        self._probe_failed = None
        interval = self.settings.probe_interval
        while True:
            await asyncio.sleep(interval)
            try:
                await bridge.probe(timeout=min(10.0, interval))
            except Unauthorized as error:
                # An open stream may go on after the key was deleted: the probe says so.
                self._probe_failed = error
                stream.close()
                return
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError, BridgeError) as error:
                self._probe_failed = BridgeError(f"it stopped answering ({str(error) or type(error).__name__})")
                stream.close()
                return

    async def _bridge_lost(self) -> None:
        for future in self._waiters.values():
            if not future.done():
                future.set_exception(homed.error_for(pb.UNAVAILABLE, f"the bridge at {self.address} went away "
                                                     "before confirming the write"))
        if self.map is not None:
            try:
                await self._update(self.map.accessories(self.resources, bridge_up=False))
            except homed.HomedError as error:
                log.debug("marking the accessories unreachable: %s", error)

    # -- registering ----------------------------------------------------------------

    async def _register_all(self) -> None:
        previous = set(self.map.devices) if self.map else set()
        self.map = map_bridge(self.resources)
        self._log_left_out()
        accessories = self.map.accessories(self.resources)
        try:
            await self._update(accessories)
        except homed.HomedError as error:
            # One accessory homed refuses must not hide the others.
            log.error("homed refused the accessories (%s); registering them one by one", error)
            for accessory in accessories:
                try:
                    await self._update([accessory])
                except homed.HomedError as one:
                    log.error("%s (%s): not registered: homed refused it: %s", accessory["name"], accessory["key"],
                              one)
        await self._sync_groups()
        gone = sorted(previous - set(self.map.devices))
        if not self._cleaned:
            gone = sorted(set(self.provider.known_keys) - set(self.map.devices))
            self._cleaned = True
        if gone:
            log.info("removing %d accessories of devices the bridge no longer has: %s", len(gone), ", ".join(gone))
            try:
                await self.provider.remove(gone)
            except homed.HomedError as error:
                log.error("removing %s failed: %s", ", ".join(gone), error)

    async def _sync_groups(self) -> None:
        """Each Hue room's and zone's lights as a homed service group of that
        name in the accessories' home: made when missing, and the lights it
        lacks added. Nothing is removed: a user's additions stay, and a group
        the user deleted is made again only with a new name."""
        wanted = service_groups(self.resources, self.map)
        if not wanted:
            return
        try:
            async with homed.aio.connect(self.settings.socket_path, client_name="homed-hue",
                                         call_timeout=10) as client:
                home_response = await client.get_home()
                for home in home_response.homes:
                    services = {(a.provider_key, s.provider_key): s.id for a in home.accessories
                                if a.provider == self.settings.provider_id for s in a.services}
                    if not services:
                        continue
                    existing = {g.name.casefold(): g for g in home.service_groups}
                    for name, members in wanted.items():
                        ids = [services[m] for m in members if m in services]
                        if not ids:
                            continue
                        group = existing.get(name.casefold())
                        if group is None:
                            made = await client.call("ChangeLayout", pb.LayoutRequest(
                                add_service_group=pb.AddServiceGroup(home_id=home.id, name=name)))
                            group_id, have = made.created_id, set()
                            log.info("service group %r made for the Hue room or zone of that name", name)
                        else:
                            group_id, have = group.id, set(group.service_ids)
                        for service_id in ids:
                            if service_id not in have:
                                await client.call("ChangeLayout", pb.LayoutRequest(
                                    add_service_to_group=pb.GroupService(group_id=group_id, service_id=service_id)))
        except (homed.HomedError, OSError) as error:
            log.warning("the Hue rooms' and zones' service groups: %s", error)

    def _log_left_out(self) -> None:
        """One line per device with something left out, once (not again at each reconnection)."""
        lines = []
        for name, device_id, why in self.map.left_out:
            lines.append(f"{name or '?'} ({device_id}): not registered: {why}")
        for device in self.map.devices.values():
            if device.unknown:
                lines.append(f"{device.name} ({device.device_id}): registered without "
                             f"{', '.join(device.unknown)}: resource types this mapping does not know or cannot read")
        for line in lines:
            if line not in self._logged:
                log.warning("%s", line)
                self._logged.add(line)

    # -- the bridge's events ----------------------------------------------------------

    def _describe(self, rid: str) -> str:
        """A resource as a log line names it: its type, id and device's name."""
        resource = self.resources.get(rid) or {}
        owner = resource.get("owner") if isinstance(resource.get("owner"), dict) else {}
        device = self.map.devices.get(owner.get("rid")) if self.map else None
        name = device.name if device else ((self.resources.get(owner.get("rid")) or {}).get("metadata") or {}).get("name")
        return f"{resource.get('type', 'resource')} {rid}" + (f" ({name})" if name else "")

    def _check(self, kind: str, item: dict) -> Optional[str]:
        """What is wrong with one event item (its resource named), or None."""
        rid = item["id"]
        current = self.resources.get(rid)
        if kind != "update":
            return None
        if current is None:
            if rid in self._unknown_logged:
                log.debug("bridge %s: another update of the unknown resource %s dropped", self.address, rid)
                return ""
            self._unknown_logged.add(rid)
            return f"the update of {item.get('type', 'resource')} {rid} dropped: the bridge did not list that " \
                   f"resource (later updates of it dropped without a line)"
        wrong = wrong_types(current, item)
        if not wrong and self.map is not None:
            trial = copy.deepcopy(current)
            merge(trial, item)
            for binding in self.map.by_rid.get(rid, ()):
                if binding.event:
                    continue
                try:
                    binding.decode(current)
                except (KeyError, TypeError, ValueError, AttributeError):
                    continue  # unreadable before: not this event's doing
                try:
                    binding.decode(trial)
                except (KeyError, TypeError, ValueError, AttributeError) as error:
                    wrong.append(f"its {binding.ref.characteristic} cannot be read from it "
                                 f"({type(error).__name__}: {error})")
        if wrong:
            return f"the update of {self._describe(rid)} dropped: {'; '.join(wrong)}"
        return None

    async def on_message(self, event_id: Optional[str], data: str) -> None:
        """One server-sent event: what of it is wrong is said in one line and
        left out (the whole event when nothing of it can be read); the rest applied."""
        where = f"bridge {self.address}: event {event_id or '(no id)'}"
        try:
            payload = json.loads(data)
        except ValueError as error:
            shown = data if len(data) <= 60 else data[:57] + "..."
            log.warning("%s dropped: not JSON (%s): %r", where, error, shown)
            return
        if not isinstance(payload, list):
            log.warning("%s dropped: %s", where, read_event(payload)[1][0])
            return
        pairs, problems = read_event(payload)
        good = []
        for kind, item in pairs:
            problem = self._check(kind, item)
            if problem is None:
                good.append((kind, item))
            elif problem:
                problems.append(problem)
        if problems:
            log.warning("%s: %s%s", where, "; ".join(problems), "; the rest applied" if good else "")
        if good:
            await self.on_events(good)

    async def on_events(self, pairs: List[Tuple[str, dict]]) -> None:
        """Checked (kind, item) pairs applied and reported."""
        values: List[Tuple[object, object]] = []
        reach: Dict[str, bool] = {}
        relayout = False
        for kind, item in pairs:
            rid = item["id"]
            self.resources.apply(kind, item)
            if kind in ("add", "delete"):
                relayout = True
                continue
            if kind != "update":
                continue
            for pending in self.confirmations.observe(rid, item):
                future = self._waiters.pop(id(pending), None)
                if future is not None and not future.done():
                    future.set_result(None)
            if self.map is None:
                continue
            device_id = self.map.connectivity.get(rid)
            if device_id is not None:
                reach[device_id] = reachable_of(self.map.devices[device_id], self.resources)
            for binding in self.map.by_rid.get(rid, ()):
                if binding.event:
                    press = press_of(item)
                    if press is not None:
                        values.append((binding.ref, press))
                elif any(key in item for key in binding.fields) or not binding.fields:
                    value = self.map.value(binding, self.resources)
                    if value is not MISSING:
                        values.append((binding.ref, value))
        if relayout:
            await self._register_all()
            return
        try:
            if values:
                await self.provider.report(values)
            for device_id, reachable in reach.items():
                await self.provider.set_reachable(device_id, reachable)
                log.info("%s: %s", self.map.devices[device_id].name, "reachable" if reachable else "unreachable")
        except homed.Unavailable:
            log.debug("not connected to homed; values are sent again at the next registration")
        except homed.HomedError as error:
            log.warning("homed refused a report: %s", error)

    # -- homed's reads and writes -------------------------------------------------------

    async def on_read(self, refs):
        out = {}
        for ref in refs:
            binding = self.map.by_ref.get(ref) if self.map else None
            value = self.map.value(binding, self.resources) if binding else MISSING
            if binding is None:
                out[ref] = homed.error_for(pb.NOT_FOUND, f"{ref}: no such characteristic on the bridge")
            elif not self.connected:
                out[ref] = homed.error_for(pb.UNAVAILABLE, f"the bridge at {self.address} is not connected")
            elif value is MISSING:
                out[ref] = homed.error_for(pb.UNAVAILABLE, f"{ref}: the bridge has not reported it yet")
            else:
                out[ref] = value
        return out

    async def on_write(self, values, atomic):
        errors = {}
        lights: Dict[str, Dict[str, object]] = {}
        refs: Dict[str, list] = {}
        for ref, value in values.items():
            binding = self.map.by_ref.get(ref) if self.map else None
            if binding is None or binding.rtype != "light":
                errors[ref] = homed.error_for(pb.NOT_FOUND, f"{ref}: no writable characteristic on the bridge")
                continue
            lights.setdefault(binding.rid, {})[ref.characteristic] = value
            refs.setdefault(binding.rid, []).append(ref)
        if atomic and len(lights) > 1:
            error = homed.error_for(pb.FAILED_PRECONDITION, "the bridge takes one light's values at a time: "
                                    "an atomic write to several lights cannot be all or nothing")
            return {ref: error for ref in values}
        results = await asyncio.gather(*(self._write_light(rid, items) for rid, items in lights.items()),
                                       return_exceptions=True)
        for rid, result in zip(lights, results):
            if isinstance(result, BaseException):
                for ref in refs[rid]:
                    errors[ref] = result
        return errors

    async def _write_light(self, rid: str, items: Dict[str, object]) -> None:
        bridge = self.bridge
        resource = self.resources.get(rid)
        if bridge is None or not self.connected or resource is None:
            raise homed.error_for(pb.UNAVAILABLE, f"the bridge at {self.address} is not connected")
        body = light_body(items, resource)
        # Waiting starts before the PUT: the bridge may send its event before its answer.
        pending = self.confirmations.add(rid, [f for f, part in body.items() if changes(f, part, resource)])
        future = asyncio.get_running_loop().create_future()
        if not pending.done:
            self._waiters[id(pending)] = future
        try:
            await bridge.put("light", rid, body)
            if pending.done:
                return
            await asyncio.wait_for(future, self.settings.write_timeout)
        except Unauthorized as error:
            if self._stream is not None:
                self._stream.close()  # followed again from the start: the key is checked there
            raise homed.error_for(pb.UNAVAILABLE, f"the bridge at {self.address} refused the application key "
                                  f"(HTTP {error.status}: {error.description})") from None
        except asyncio.TimeoutError:
            raise homed.error_for(pb.DEADLINE_EXCEEDED, f"the bridge did not confirm the write to light {rid} "
                                  f"within {self.settings.write_timeout:g} s") from None
        except BridgeError as error:
            raise homed.error_for(pb.INVALID_ARGUMENT, f"the bridge refused the write to light {rid}: {error}") \
                from None
        except (aiohttp.ClientError, OSError) as error:
            raise homed.error_for(pb.UNAVAILABLE, f"the bridge at {self.address}: {error}") from None
        finally:
            self.confirmations.drop(pending)
            self._waiters.pop(id(pending), None)
