"""One ESPHome device followed over its native API (aioesphomeapi): connect,
DeviceInfo and ListEntities, register, subscribe to states; on a lost
connection, unreachable, and connect again with a backoff (0.5 s doubling to
30 s), reading everything again on return.

Writes are sent as the API's commands and answered once a state from the device
confirms them (mapping.confirms), or with DEADLINE_EXCEEDED when none does
within the write timeout."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Dict, List, Optional

import homed
from aioesphomeapi import APIClient, APIConnectionError
from aioesphomeapi.core import SocketClosedAPIError
from aioesphomeapi import model as esp
from homed import pb

from .mapping import MISSING, Binding, DeviceMap, command_for, confirms, map_device

log = logging.getLogger("homed-esphome")

MIN_BACKOFF, MAX_BACKOFF = 0.5, 30.0


@dataclass
class DeviceConfig:
    name: str  # how the configuration and the log call it
    host: str
    port: int = 6053
    noise_psk: Optional[str] = None  # base64, from the credentials file
    password: Optional[str] = None  # the deprecated API password, from the credentials file


class _Waiter:
    """A write waiting for the device's state to confirm it."""

    def __init__(self, items: Dict[Binding, object]):
        self.items = dict(items)
        self.future: asyncio.Future = asyncio.get_running_loop().create_future()

    def seen(self, key: int, state) -> None:
        for binding in [b for b in self.items if b.entity_key == key]:
            if confirms(binding, self.items[binding], state):
                del self.items[binding]
        if not self.items and not self.future.done():
            self.future.set_result(None)


class DeviceLink:
    def __init__(self, config: DeviceConfig, owner, write_timeout: float = 4.5, keepalive: float = 5.0):
        self.config = config
        self.owner = owner  # the provider (service.py): register, report, set_reachable
        self.write_timeout = write_timeout
        self.keepalive = keepalive
        self.map: Optional[DeviceMap] = None
        self.states: Dict[int, object] = {}
        self.reported: Dict[object, object] = {}  # Ref -> the value last reported (only changes are)
        self.connected = False
        self._layout = None  # the accessory registered last, without values: a change registers again
        self._waiters: List[_Waiter] = []
        self._client: Optional[APIClient] = None
        self._task: Optional[asyncio.Task] = None
        self._lost: Optional[asyncio.Event] = None
        self._closing = False

    @property
    def key(self) -> Optional[str]:
        return self.map.key if self.map else None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._follow())

    async def close(self) -> None:
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._client is not None:
            try:
                await asyncio.wait_for(self._client.disconnect(force=True), 2)
            except (Exception, asyncio.CancelledError):  # noqa: BLE001 - closing anyway
                pass

    # -- the connection ----------------------------------------------------------------------

    async def _follow(self) -> None:
        wait = MIN_BACKOFF
        while not self._closing:
            try:
                await self._session()
                wait = MIN_BACKOFF  # it was connected: the next try comes soon
            except asyncio.CancelledError:
                raise
            except Exception as error:  # noqa: BLE001 - a device that fails is retried
                log.info("%s (%s:%d): not connected: %s; trying again in %.1f s", self.config.name,
                         self.config.host, self.config.port, error, wait)
                await self._disconnected()
                await asyncio.sleep(wait)
                wait = min(wait * 2, MAX_BACKOFF)
                continue
            await self._disconnected()
            if not self._closing:
                await asyncio.sleep(wait)

    async def _session(self) -> None:
        lost = self._lost = asyncio.Event()

        async def on_stop(expected: bool) -> None:
            lost.set()

        client = self._client = APIClient(self.config.host, self.config.port, self.config.password,
                                          noise_psk=self.config.noise_psk, client_info="homed-esphome",
                                          keepalive=self.keepalive)
        try:
            await client.connect(on_stop=on_stop, login=True)
        except SocketClosedAPIError as error:
            # aioesphomeapi says only "EOF received": say when it happened.
            raise ConnectionError(f"it closed the connection during the API's handshake ({error})") from None
        try:
            info, entities, _services = await client.device_info_and_list_entities()
            fresh: Dict[int, object] = {}
            first = asyncio.Event()
            listed = {e.key for e in entities if not isinstance(e, (esp.ButtonInfo, esp.EventInfo))}

            def on_state(state) -> None:
                if not first.is_set():
                    if isinstance(state, esp.Event):
                        return  # a press before the registration is not told later
                    fresh[state.key] = state
                    if listed <= set(fresh):
                        first.set()
                    return
                self._on_state(state)

            client.subscribe_states(on_state)
            # The device sends every entity's state at once; a registration
            # with them all publishes each value once, not zero and then it.
            try:
                await asyncio.wait_for(first.wait(), 3.0)
            except asyncio.TimeoutError:
                pass
            await self._connected(info, entities, fresh)
            first.set()
            await lost.wait()
        finally:
            try:
                await client.disconnect(force=True)
            except Exception:  # noqa: BLE001 - it is gone either way
                pass

    async def _connected(self, info, entities, states) -> None:
        new_map = map_device(info, entities)
        if self.map is not None and self.map.key != new_map.key:
            log.warning("%s: now answers as %s (was %s): a different device at that address", self.config.name,
                        new_map.key, self.map.key)
        layout = new_map.accessory
        changed = self._layout is not None and layout != self._layout
        self.map, self.states, self.connected = new_map, dict(states), True
        if new_map.left_out:
            log.warning("%s (%s): left out: %s; the rest is registered", new_map.name, new_map.key,
                        "; ".join(new_map.left_out))
        registered = await self.owner.register(self, reachable=True)
        if registered:
            self._layout = layout
            self.reported = new_map.values(self.states)
            if changed:
                log.info("%s (%s): its entities changed; registered again", new_map.name, new_map.key)
            log.info("%s (%s): reachable, %d services", new_map.name, new_map.key, len(layout["services"]))

    async def _disconnected(self) -> None:
        was = self.connected
        self.connected = False
        for waiter in self._waiters:
            if not waiter.future.done():
                waiter.future.set_exception(homed.error_for(pb.UNAVAILABLE, f"{self.config.name}: connection lost"))
        self._waiters = []
        if was and self.map is not None and not self._closing:
            log.info("%s (%s): unreachable (connection lost)", self.map.name, self.map.key)
            await self.owner.set_reachable(self, False)

    # -- states -------------------------------------------------------------------------------

    def _on_state(self, state) -> None:
        if self.map is None:
            return
        self.states[state.key] = state
        items = {}
        for binding in self.map.by_entity().get(state.key, ()):
            value = binding.decode(state)
            if value is MISSING:
                continue
            if binding.event:
                items[binding.ref] = value
            elif self.reported.get(binding.ref, MISSING) != value:
                items[binding.ref] = value
                self.reported[binding.ref] = value
        asyncio.ensure_future(self._tell(state, items))

    async def _tell(self, state, items) -> None:
        """Reports the values, then acknowledges the writes they confirm: a
        client that reads after its write's answer reads the device's value."""
        if items:
            await self.owner.report(self, items)
        for waiter in list(self._waiters):
            waiter.seen(state.key, state)

    def read(self, bindings: List[Binding]) -> Dict[Binding, object]:
        """The last state's values: ESPHome pushes every change, and has no
        request for one entity's state."""
        out = {}
        for binding in bindings:
            state = self.states.get(binding.entity_key)
            value = binding.decode(state) if (self.connected and state is not None) else MISSING
            if value is MISSING:
                why = "is not connected" if not self.connected else "has not reported it yet"
                out[binding] = homed.error_for(pb.UNAVAILABLE, f"{self.config.name} {why}")
            else:
                out[binding] = value
        return out

    # -- writes -------------------------------------------------------------------------------

    async def write(self, items: Dict[Binding, object]) -> Dict[Binding, BaseException]:
        if not self.connected or self._client is None:
            error = homed.error_for(pb.UNAVAILABLE, f"{self.config.name} is not connected")
            return {b: error for b in items}
        refused = {b: homed.error_for(pb.FAILED_PRECONDITION, f"{b.ref}: the device takes no writes to it")
                   for b in items if b.encode is None}
        if refused:
            return refused
        commands = command_for(items.items(), self.states)
        confirmable = {b: v for b, v in items.items() if not b.momentary}
        waiter = _Waiter(confirmable)
        if confirmable:
            self._waiters.append(waiter)
        try:
            for method, kwargs in commands.values():
                getattr(self._client, method)(**kwargs)
        except APIConnectionError as error:
            self._drop(waiter)
            error = homed.error_for(pb.UNAVAILABLE, f"{self.config.name}: {error}")
            return {b: error for b in items}
        # A value the entity already has is confirmed by its last state: a
        # device need not send a state that did not change.
        for key in {b.entity_key for b in confirmable}:
            if key in self.states:
                waiter.seen(key, self.states[key])
        momentary = [b for b in items if b.momentary]
        if momentary:
            off = {b.ref: False for b in momentary if b.method == "button_command"}
            if off:
                asyncio.get_running_loop().call_later(0.2, lambda: asyncio.ensure_future(self.owner.report(self, off)))
        if not confirmable:
            return {}
        try:
            await asyncio.wait_for(asyncio.shield(waiter.future), self.write_timeout)
            return {}
        except asyncio.TimeoutError:
            error = homed.error_for(pb.DEADLINE_EXCEEDED, f"{self.config.name} did not confirm the write within "
                                                          f"{self.write_timeout:g} s")
            return {b: error for b in waiter.items}
        except homed.HomedError as error:
            return {b: error for b in confirmable}
        finally:
            self._drop(waiter)

    def _drop(self, waiter: _Waiter) -> None:
        if waiter in self._waiters:
            self._waiters.remove(waiter)
