"""One paired HAP-IP device, driven by aiohomekit: its connection, its
accessory database, its events, and the reads and writes homed sends it.

Everything the device tells homed (registrations, values, reachability) goes
through one queue per device, in order, so that a loss and the reconnection
after it can never reach homed the wrong way round, and a button's presses
are reported one by one, as they came."""

from __future__ import annotations

import asyncio
import logging
from typing import Dict, List, Optional, Tuple

from aiohomekit.controller.ip.connection import SecureHomeKitConnection
from aiohomekit.controller.ip.pairing import IpPairing
from aiohomekit.exceptions import AuthenticationError

import homed
from homed import pb

from . import hapvalues
from .catalog import Catalog
from .mapping import Binding, DeviceMap, map_device
from .store import Record, Store

log = logging.getLogger("homed-homekit.device")

# homed stores a written value once the provider answers the write; what the
# device said besides (a write response, what it took of an atomic batch) is
# reported as its own change after that, or homed's store of the written value
# would overwrite it. The provider cannot see when homed has stored it, so the
# report waits this long after the answer (homed stores it well within).
AFTER_ANSWER = 0.2


class _Connection(SecureHomeKitConnection):
    """aiohomekit's connection, telling its device when it is lost (aiohomekit
    itself only starts reconnecting)."""

    def _connection_lost(self, exception) -> None:
        closing = self.closing
        super()._connection_lost(exception)
        if not closing:
            self.owner.link.lost(exception)


class HapPairing(IpPairing):
    """aiohomekit's IpPairing with its events and connections sent to a DeviceLink."""

    def __init__(self, controller, pairing_data, link: "DeviceLink"):
        self.link = link
        super().__init__(controller, pairing_data)
        self.connection = _Connection(self, self.pairing_data)

    def event_received(self, event) -> None:
        self.link.event(event)

    async def put_characteristics_answered(self, items) -> Dict[Tuple[int, int], dict]:
        """A write with HAP's write response: ``items`` are (aid, iid, value,
        wants the response); returns {(aid, iid): the accessory's answer item}
        ("status", and "value" for a write response). aiohomekit's own
        put_characteristics sends no "r" and keeps only each item's status,
        so this one sends the PUT itself on aiohomekit's secure session."""
        await self._ensure_connected()
        body = {"characteristics": [{"aid": aid, "iid": iid, "value": value, **({"r": True} if wanted else {})}
                                    for aid, iid, value, wanted in items]}
        answer = await self.connection.put_json("/characteristics", body)
        return {(item["aid"], item["iid"]): item for item in (answer or {}).get("characteristics", [])
                if isinstance(item, dict) and "aid" in item and "iid" in item}

    async def connection_made(self, secure) -> None:
        await super().connection_made(secure)  # subscribes again to what it was subscribed to
        if secure:
            self.link.connected()


class DeviceLink:
    """A paired device: keeps it connected (aiohomekit reconnects with a
    backoff from 0.5 s, ×1.5 up to 60 s, hastened when zeroconf sees it again),
    re-reads its database and values on every connection, and serves homed's
    reads and writes of its characteristics."""

    def __init__(self, record: Record, catalog: Catalog, store: Store, controller, owner,
                 write_timeout: float = 4.5, read_timeout: float = 4.5):
        self.record = record
        self.device_id = record.device_id
        self.catalog = catalog
        self.store = store
        self.owner = owner
        self.write_timeout = write_timeout
        self.read_timeout = read_timeout
        self.map: DeviceMap = map_device(record.device_id, record.database, catalog, record.category)
        self.values: Dict[Tuple[int, int], object] = dict(self.map.values)
        self.reachable = False
        self.name = f"device {self.device_id} at {record.address}"
        self.pairing = HapPairing(controller, dict(record.pairing), self)
        self._queue: "asyncio.Queue" = asyncio.Queue()
        self._tasks: List[asyncio.Task] = []
        self._resyncing: Optional[asyncio.Task] = None
        self._resync_wanted: Optional[str] = None
        self._closed = False
        self.pairing.dispatcher_connect_config_changed(self.config_changed)
        for note in self.map.notes:
            log.warning("%s: %s", self.name, note)

    # -- lifetime -----------------------------------------------------------------

    def start(self) -> None:
        self._tasks.append(asyncio.ensure_future(self._deliver()))
        self._tasks.append(asyncio.ensure_future(self._first_connection()))

    async def _first_connection(self) -> None:
        try:
            await self.pairing._ensure_connected()
        except AuthenticationError as error:
            log.error("%s refuses this controller's pairing (%s): it was reset or unpaired elsewhere; pair it "
                      "again", self.name, error)
        except Exception as error:  # noqa: BLE001 - aiohomekit keeps trying in the background
            log.warning("%s is not reachable yet (%s); trying again with a backoff", self.name, error)

    async def close(self) -> None:
        self._closed = True
        for task in self._tasks + ([self._resyncing] if self._resyncing else []):
            task.cancel()
        await self.pairing.shutdown()  # closes, and keeps aiohomekit from reconnecting

    # -- what aiohomekit tells ----------------------------------------------------------

    def connected(self) -> None:
        """A secure session is up: read the database and values again."""
        log.info("%s connected", self.name)
        self.resync("connected")

    def lost(self, exception) -> None:
        if self._closed:
            return
        if not self.reachable:  # a reconnection attempt that failed: homed knows already
            log.debug("%s: connection attempt ended (%s)", self.name, exception or "closed by the accessory")
            return
        log.warning("%s: connection lost (%s); its accessories are unreachable until it answers again",
                    self.name, exception or "closed by the accessory")
        self.reachable = False
        self._queue.put_nowait(("reachability", False))

    def config_changed(self, config_num: int) -> None:
        """zeroconf saw a higher configuration number (c#): the database changed."""
        log.info("%s: configuration number is now %s; reading its accessory database again", self.name, config_num)
        self.resync(f"c# {config_num}")

    def event(self, event) -> None:
        """An EVENT message: every value it carries, reported in order."""
        items = []
        for item in (event or {}).get("characteristics", []):
            if not isinstance(item, dict) or "aid" not in item or "iid" not in item:
                continue
            key = (item["aid"], item["iid"])
            binding = self.map.bindings.get(key)
            if binding is None:
                log.debug("%s: event for aid %s iid %s, which is not registered; ignored", self.name, *key)
                continue
            value = self._value(binding, item.get("value"))
            if value is None:
                continue
            if not binding.event_only:
                self.values[key] = value
            items.append((binding.ref, value))
        if items:
            self._queue.put_nowait(("values", items))

    def _value(self, binding: Binding, raw):
        try:
            return hapvalues.from_hap(raw, binding.fmt)
        except ValueError as error:
            log.warning("%s: %s: value %r not taken: %s", self.name, binding.label, raw, error)
            return None

    # -- re-reading -----------------------------------------------------------------------

    def resync(self, why: str) -> None:
        """Reads the database again, now or right after the reading under way.
        (Never by cancelling one: a request cancelled in flight makes aiohomekit
        drop the session, its encryption counters being out of step.)"""
        self._resync_wanted = why
        if self._resyncing is None or self._resyncing.done():
            self._resyncing = asyncio.ensure_future(self._resync_loop())

    async def _resync_loop(self) -> None:
        while self._resync_wanted is not None:
            why, self._resync_wanted = self._resync_wanted, None
            await self._resync(why)

    async def _resync(self, why: str) -> None:
        try:
            database = await asyncio.wait_for(self.pairing.list_accessories_and_characteristics(),
                                              self.read_timeout * 2)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - tried again while connected, and at the next connection
            log.warning("%s: its accessory database could not be read (%s: %s)", self.name, why, error)
            if not self._closed and self.pairing.is_connected:
                asyncio.get_running_loop().call_later(2.0, self.resync, f"{why}, again")
            return
        new = map_device(self.device_id, database, self.catalog, self.record.category)
        changed = new.layout() != self.map.layout()
        if changed:
            for note in new.notes:
                log.warning("%s: %s", self.name, note)
        if database != self.record.database:
            self.record.database = database
            self.record.config_num = max(self.record.config_num, self.pairing.config_num)
            try:
                self.store.save(self.record)
            except OSError as error:
                log.error("%s: the pairing file could not be updated (%s)", self.name, error)
        old_keys = set(self.map.keys)
        self.map = new
        self.values = dict(new.values)  # the database carries every readable value, fresh
        self.reachable = True
        self._queue.put_nowait(("register", (changed, sorted(old_keys - set(new.keys)))))
        subscriptions = {(b.aid, b.iid) for b in new.bindings.values() if b.events}
        stale = self.pairing.subscriptions - subscriptions
        self.pairing.subscriptions -= stale
        try:
            await asyncio.wait_for(self.pairing.subscribe(subscriptions), self.read_timeout)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001
            log.warning("%s: subscribing to its events failed (%s)", self.name, error)

    async def _deliver(self) -> None:
        """Tells homed what the device did, in order."""
        while True:
            kind, payload = await self._queue.get()
            try:
                if kind == "values":
                    await self.owner.report(self, payload)
                elif kind == "reachability":
                    await self.owner.register(self, reachable=False)
                elif kind == "register":
                    changed, gone = payload
                    await self.owner.register(self, reachable=True, changed=changed, gone=gone)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one failed delivery must not stop the others
                log.exception("%s: telling homed (%s) failed", self.name, kind)

    # -- homed's reads and writes -------------------------------------------------------

    def _unreachable(self, binding: Binding) -> Tuple[int, str]:
        return pb.UNAVAILABLE, f"{binding.label}: {self.name} is not reachable"

    async def write(self, items: Dict[Binding, object], atomic: bool) -> Dict[Binding, Tuple[int, str]]:
        """Writes to the device; the errors of the items that failed. A write
        is confirmed only by the accessory's answer."""
        if not self.pairing.is_connected:
            return {b: self._unreachable(b) for b in items}
        payload = [(b.aid, b.iid, hapvalues.to_hap(v, b.fmt)) for b, v in items.items()]
        if any(b.write_response for b in items):
            put = self.pairing.put_characteristics_answered(
                [(*item, b.write_response) for item, b in zip(payload, items)])
        else:
            put = self.pairing.put_characteristics(payload)
        try:
            statuses = await asyncio.wait_for(put, self.write_timeout)
        except asyncio.TimeoutError:
            return self._failed(items, pb.DEADLINE_EXCEEDED,
                                f"{self.name} did not confirm the write within {self.write_timeout:g} s")
        except (KeyError, AttributeError) as error:  # aiohomekit no longer has the aid/iid
            self.resync("a write to a characteristic it no longer has")
            return self._failed(items, pb.NOT_FOUND, f"{self.name} no longer has it ({error!r}); "
                                                     f"reading its accessory database again")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - a lost connection, mostly
            return self._failed(items, pb.UNAVAILABLE,
                                f"{self.name} went away before confirming the write ({type(error).__name__}: "
                                f"{error or 'connection lost'})")
        errors: Dict[Binding, Tuple[int, str]] = {}
        done = []
        for binding, value in items.items():
            status = (statuses.get((binding.aid, binding.iid)) or {}).get("status", 0)
            code, message = hapvalues.status_of_hap(status)
            if code == pb.OK:
                done.append((binding, value))
                continue
            errors[binding] = (code, f"{binding.label}: {message}")
            log.warning("%s: write of %r to %s refused: %s", self.name, value, binding.label, message)
            if status == -70409:
                self.resync("a write to a characteristic it no longer has")
        answered = []
        for binding, value in done:
            if not binding.event_only:
                self.values[(binding.aid, binding.iid)] = value
            response = self._write_response(binding, value, statuses.get((binding.aid, binding.iid)))
            if response is not None:
                self.values[(binding.aid, binding.iid)] = response
                answered.append((binding.ref, response))
        if atomic and errors and done:
            # HAP has no transactions: what the device took stays taken. homed
            # applies none of an atomic batch with a refused item, so the
            # device's values are reported as its own change once answered.
            self._report_after_answer([(b.ref, self.values.get((b.aid, b.iid), v)) for b, v in done])
        elif answered:
            self._report_after_answer(answered)
        return errors

    def _write_response(self, binding: Binding, written, answer):
        """The value of a write response that differs from the value written, else None."""
        if not binding.write_response or not isinstance(answer, dict) or answer.get("value") is None:
            return None
        response = self._value(binding, answer["value"])
        if response is None or response == written:
            return None
        log.info("%s: %s answered the write of %r with %r (its write response): homed's value now",
                 self.name, binding.label, written, response)
        return response

    def _report_after_answer(self, items) -> None:
        asyncio.get_running_loop().call_later(AFTER_ANSWER, self._queue.put_nowait, ("values", items))

    def _failed(self, items, code: int, message: str) -> Dict[Binding, Tuple[int, str]]:
        log.warning("%s: write of %s failed: %s", self.name, ", ".join(b.label for b in items), message)
        return {b: (code, f"{b.label}: {message}") for b in items}

    async def read(self, bindings: List[Binding]) -> Dict[Binding, object]:
        """Fresh values from the device: {binding: value or an exception}."""
        if not self.pairing.is_connected:
            return {b: homed.error_for(*self._unreachable(b)) for b in bindings}
        keys = [(b.aid, b.iid) for b in bindings]
        try:
            answers = await asyncio.wait_for(self.pairing.get_characteristics(keys), self.read_timeout)
        except asyncio.TimeoutError:
            return {b: homed.error_for(pb.DEADLINE_EXCEEDED, f"{b.label}: {self.name} did not answer the read "
                                       f"within {self.read_timeout:g} s") for b in bindings}
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001
            return {b: homed.error_for(pb.UNAVAILABLE, f"{b.label}: {self.name} went away before answering "
                                       f"the read ({error or type(error).__name__})") for b in bindings}
        out: Dict[Binding, object] = {}
        for binding in bindings:
            answer = answers.get((binding.aid, binding.iid)) or {}
            status = answer.get("status", 0)
            if status:
                code, message = hapvalues.status_of_hap(status)
                out[binding] = homed.error_for(code, f"{binding.label}: {message}")
                continue
            if answer.get("value") is None:
                out[binding] = homed.error_for(pb.FAILED_PRECONDITION,
                                               f"{binding.label}: the accessory gave no value")
                continue
            value = self._value(binding, answer["value"])
            if value is None:
                out[binding] = homed.error_for(pb.INTERNAL, f"{binding.label}: the accessory's value "
                                               f"{answer['value']!r} is not of its format")
                continue
            self.values[(binding.aid, binding.iid)] = value
            out[binding] = value
        failed = [e.message for e in out.values() if isinstance(e, homed.HomedError)]
        if failed:
            log.warning("%s: read failed: %s", self.name, "; ".join(failed))
        return out
