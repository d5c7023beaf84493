"""HAP-python's server side, adapted to serve homed's accessories (bridge.py
makes one driver per HAP bridge).

What HAP-python does not do as a bridge of homed must, changed here by subclassing:

- **Writes wait for homed.** HAP-python calls setters synchronously on its event
  loop; a write through homed waits for the device's confirmation, so the
  /characteristics PUT is answered from a task (as HAP-python answers camera
  snapshots), and each item gets the HAP status of homed's answer.
- **Strict values.** HAP-python coerces a controller's value (clamps it, turns a
  string into a bool); a wrong type must get -70410 instead.
- **Events at once, never merged.** HAP-python holds events for 0.5 s and keeps
  the last value of each characteristic; homed's events are pushed at once, and a
  second button press is sent, not merged into the first.
- **Pairing** with the padding controllers use (hapsrp.py); the sessions of an
  unpaired controller closed, as HAP wants.
- **Reads and writes** of an unreachable accessory answer -70402 ("No
  Response"), the writes never sent; so does a read of a characteristic homed
  has no value for yet (a write to it goes through); reads of characteristics
  homed does not stream (no ``ev``) ask homed's cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from typing import Awaitable, Callable, Dict, List, Tuple
from urllib.parse import parse_qs

from pyhap.accessory_driver import AccessoryDriver
from pyhap.characteristic import Characteristic
from pyhap.const import STANDALONE_AID
from pyhap.hap_handler import HAP_TLV_TAGS, HAPServerHandler
from pyhap.hap_protocol import HAPServerProtocol
from pyhap.hap_server import HAPServer
from pyhap.util import from_hap_json, to_hap_json

from . import hapmodel as hm
from .accessories import HomedAccessory
from .hapsrp import PairSetupSteps, use_padded_verifier

log = logging.getLogger("homed-homekit")

# write(items) -> one (code, message, seq) per item: homed's answers (seq: of the
# value event the write made).
Writer = Callable[[List[Tuple[int, object]]], Awaitable[List[Tuple[int, str, int]]]]
# read(homed ids) -> {homed id: (code, HAP value or None)}
Reader = Callable[[List[int]], Awaitable[Dict[int, Tuple[int, object]]]]


class BridgeRequestHandler(PairSetupSteps, HAPServerHandler):
    """Answers /characteristics from tasks, so that they can wait for homed."""

    def handle_get_characteristics(self) -> None:
        if not self.is_encrypted:
            return super().handle_get_characteristics()  # refuses as HAP-python does
        ids = parse_qs(self.parsed_url.query)["id"][0].split(",")
        self._answer_later(self.accessory_handler.async_get_characteristics(ids), ok_status=200)

    def handle_set_characteristics(self) -> None:
        if not self.is_encrypted:
            return super().handle_set_characteristics()
        query = from_hap_json(self.request_body.decode("utf-8"))
        self._answer_later(self.accessory_handler.async_set_characteristics(query, self.client_address),
                           ok_status=204)

    def _pairing_two(self, tlv_objects) -> None:
        super()._pairing_two(tlv_objects)
        if self.accessory_handler.srp_verifier.verify(tlv_objects[HAP_TLV_TAGS.PASSWORD_PROOF]) is None:
            log.warning("HomeKit pairing from %s refused: wrong setup code (nothing was paired)", self.client_address)

    def handle_pairing(self) -> None:
        if self.state.paired:
            log.warning("HomeKit pairing from %s refused: the bridge %s is already paired (a paired controller adds "
                        "others, as the Home app's sharing does)", self.client_address,
                        self.accessory_handler.accessory.display_name)
        super().handle_pairing()

    def _answer_later(self, coro, ok_status: int) -> None:
        response = self.response

        async def answer() -> bytes:
            result, multi_status = await coro  # an item failed, or a write response carries a value
            if multi_status:
                response.status_code, response.reason = 207, "Multi-Status"
            elif ok_status == 204:
                response.status_code, response.reason = 204, "No Content"
                return b""
            else:
                response.status_code, response.reason = 200, "OK"
            response.headers.append(("Content-Type", self.JSON_RESPONSE_TYPE))
            return to_hap_json(result)

        response.task = asyncio.ensure_future(answer())


class BridgeProtocol(HAPServerProtocol):
    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.handler = BridgeRequestHandler(self.accessory_driver, self.peername)


class BridgeHAPServer(HAPServer):
    async def async_start(self, loop) -> None:
        self.loop = loop
        self.server = await loop.create_server(
            lambda: BridgeProtocol(loop, self.connections, self.accessory_handler), self._addr_port[0],
            self._addr_port[1])
        self.async_cleanup_connections()


class BridgeDriver(AccessoryDriver):
    """AccessoryDriver whose reads, writes and events go through homed."""

    def __init__(self, *, writer: Writer, reader: Reader, **kwargs):
        super().__init__(**kwargs)
        self.writer = writer
        self.reader = reader
        # Writes waiting for homed: characteristic -> (controller, value). homed's
        # value event of a write may come before its answer; pushed then, it
        # must skip the controller that wrote it, as the answer's own push does.
        self.in_flight: Dict[Characteristic, Tuple[tuple, object]] = {}
        # The seq of the value the bridge holds, per homed characteristic (from
        # homed's events), and of the last home read: a write answered after a
        # newer value came is not applied over it. (The bridge's subscription
        # leaves out the events of its own writes: they are applied from the answer.)
        self.applied_seq: Dict[int, int] = {}
        self.home_seq = 0
        self.http_server = BridgeHAPServer(self.http_server._addr_port, self)

    @property
    def accessories_hash(self):
        """HAP-python hashes the database without values; names live in values
        (the Name characteristic), and a rename must bump the configuration
        number too, so they are hashed with it."""
        names = sorted((aid, acc.display_name) for aid, acc in getattr(self.accessory, "accessories", {}).items())
        return hashlib.sha512((AccessoryDriver.accessories_hash.fget(self) + repr(names)).encode()).hexdigest()

    def _find(self, aid: int, iid: int):
        """(accessory, characteristic) for a controller's aid.iid, either None."""
        if aid == STANDALONE_AID:
            acc = self.accessory
        else:
            acc = self.accessory.accessories.get(aid)
        obj = acc.iid_manager.get_obj(iid) if acc is not None else None
        return acc, obj if isinstance(obj, Characteristic) else None

    async def async_get_characteristics(self, char_ids: List[str]):
        results = []
        ask: Dict[int, dict] = {}
        for text in char_ids:
            aid, iid = (int(i) for i in text.split("."))
            rep = {"aid": aid, "iid": iid, "status": hm.SUCCESS}
            results.append(rep)
            acc, char = self._find(aid, iid)
            if char is None:
                rep["status"] = hm.RESOURCE_DOES_NOT_EXIST
            elif "pr" not in char.properties["Permissions"]:
                rep["status"] = hm.WRITE_ONLY_CHARACTERISTIC
            elif not acc.available:
                rep["status"] = hm.SERVICE_COMMUNICATION_FAILURE
            elif isinstance(acc, HomedAccessory) and not acc.has_value(char):
                # Nothing has reported it: No Response, as for a device that does
                # not answer, rather than a placeholder shown as its state.
                rep["status"] = hm.SERVICE_COMMUNICATION_FAILURE
            elif isinstance(acc, HomedAccessory) and "ev" not in char.properties["Permissions"]:
                # homed streams only what supports events: the rest is asked.
                ask[int(char.unique_id[1:])] = rep
            else:
                rep["value"] = char.get_value()
        if ask:
            try:
                answers = await self.reader(list(ask))
            except Exception as error:  # noqa: BLE001 - homed away: "No Response"
                log.warning("HomeKit read of %d characteristics: homed did not answer (%s)", len(ask), error)
                answers = {}
            for homed_id, rep in ask.items():
                code, value = answers.get(homed_id, (14, None))
                if code == 0 and value is not None:
                    rep["value"] = value
                elif code == 0:
                    rep["status"] = hm.SERVICE_COMMUNICATION_FAILURE  # homed has no value yet
                else:
                    rep["status"] = hm.hap_status(code)
        failed = any(r["status"] != hm.SUCCESS for r in results)
        if not failed:
            for r in results:
                del r["status"]
        return {"characteristics": results}, failed

    async def async_set_characteristics(self, query, client_addr):
        queries = query["characteristics"]
        self._notify(queries, client_addr)  # "ev": (un)subscriptions, as HAP-python does
        expired = False
        if "pid" in query:
            expire_time = self.prepared_writes.get(client_addr, {}).pop(query["pid"], None)
            expired = expire_time is None or time.time() > expire_time  # HAP-python's prepare() uses time.time()
        results, pending, respond = [], [], set()
        for q in queries:
            if "value" not in q:
                continue
            aid, iid, value = q["aid"], q["iid"], q["value"]
            rep = {"aid": aid, "iid": iid, "status": hm.SUCCESS}
            results.append(rep)
            acc, char = self._find(aid, iid)
            if char is None or not isinstance(acc, HomedAccessory):
                rep["status"] = hm.RESOURCE_DOES_NOT_EXIST if char is None else self._bridge_write(char, value)
                if char is None:
                    log.warning("HomeKit write from %s to aid %s iid %s: no such characteristic (HAP %d)",
                                client_addr, aid, iid, rep["status"])
                continue
            homed_id = int(char.unique_id[1:])
            fmt = char.properties["Format"]
            if expired:
                rep["status"] = hm.INVALID_VALUE_IN_REQUEST
                log.warning("HomeKit timed write to %s from %s came after its time to live (HAP %d)",
                            acc.label(homed_id), client_addr, rep["status"])
            elif "pw" not in char.properties["Permissions"]:
                rep["status"] = hm.READ_ONLY_CHARACTERISTIC
                log.warning("HomeKit write to %s from %s: it is read-only (HAP %d)",
                            acc.label(homed_id), client_addr, rep["status"])
            else:
                try:
                    checked = hm.from_hap(value, fmt)
                except hm.BadValue as error:
                    rep["status"] = hm.INVALID_VALUE_IN_REQUEST
                    log.warning("HomeKit write to %s from %s: %s, the format is %s (HAP %d)",
                                acc.label(homed_id), client_addr, error, fmt, rep["status"])
                    continue
                if not acc.available:
                    # What the Home app shows as No Response is not operated
                    # through the bridge: the write is not sent (README.md).
                    rep["status"] = hm.SERVICE_COMMUNICATION_FAILURE
                    log.warning("HomeKit write of %r to %s from %s: the accessory is unreachable in homed (HAP %d); "
                                "not sent", value, acc.label(homed_id), client_addr, rep["status"])
                    continue
                if q.get("r") is True and "wr" in char.properties["Permissions"]:
                    respond.add(homed_id)  # HAP's write response: answered with a value (below)
                pending.append((rep, acc, char, homed_id, value, checked))
        if pending:
            for _, _, char, _, value, _ in pending:
                self.in_flight[char] = (client_addr, value)
            # What the bridge had applied when the writes went out: an answer of seq 0
            # (homed already held the value: the device reported it before answering)
            # may come before that report's event, which must then not reach the writer.
            home_seq_before = self.home_seq
            applied_before = {homed_id: self.applied_seq.get(homed_id, 0) for _, _, _, homed_id, _, _ in pending}
            try:
                answers = await self.writer([(homed_id, pbv) for _, _, _, homed_id, _, pbv in pending])
            except Exception as error:  # noqa: BLE001 - homed away: "No Response"
                answers = [(14, f"homed did not answer: {error}", 0)] * len(pending)
            finally:
                for _, _, char, _, value, _ in pending:
                    if self.in_flight.get(char) == (client_addr, value):
                        del self.in_flight[char]
            for (rep, acc, char, homed_id, value, checked), (code, message, seq) in zip(pending, answers):
                rep["status"] = hm.hap_status(code)
                if code == 0:
                    unchanged_since = (seq == 0 and self.home_seq == home_seq_before
                                       and self.applied_seq.get(homed_id, 0) == applied_before[homed_id])
                    if seq >= max(self.home_seq, self.applied_seq.get(homed_id, 0)) or unchanged_since:
                        # The value as homed stored it (iOS's 1 for a bool is true); the
                        # event of it, when it comes, then changes nothing and is not pushed.
                        acc.apply(homed_id, hm.to_hap(checked, char.properties["Format"]), sender=client_addr)
                else:
                    respond.discard(homed_id)
                    log.warning("HomeKit write of %r to %s from %s: homed answered %s (HAP %d)",
                                value, acc.label(homed_id), client_addr, message, rep["status"])
            if respond:
                await self._write_responses(pending, respond)
        failed = any(r["status"] != hm.SUCCESS for r in results)
        # A write response is a value in the answer, which then has a body (207), as HAP-python's own.
        return {"characteristics": results}, failed or any("value" in r for r in results)

    async def _write_responses(self, pending, respond) -> None:
        """HAP's write response ("r" for a "wr" characteristic): the value homed
        holds once it confirmed the write. homed's answer to a write carries no
        value (WriteResult: a code and a message), so it is read from homed's
        store; a provider that learns its device's own response reports it
        after its answer (the HomeKit provider does), so that one is homed's
        value a moment later, not in this answer (README.md, "Known limits")."""
        try:
            answers = await self.reader(sorted(respond))
        except Exception as error:  # noqa: BLE001 - the write itself was done: answered without the value
            log.warning("HomeKit write response of %d characteristics: homed did not answer the read (%s)",
                        len(respond), error)
            return
        for rep, acc, _, homed_id, _, _ in pending:
            if homed_id in respond:
                code, value = answers.get(homed_id, (14, None))
                if code == 0 and value is not None:
                    rep["value"] = value
                else:
                    log.warning("HomeKit write response of %s: homed's value could not be read (status %d)",
                                acc.label(homed_id), code)

    def writer_of(self, char: Characteristic, value):
        """The controller whose write of ``value`` to ``char`` is waiting for
        homed, or None: homed's event of it is not pushed back to that one."""
        entry = self.in_flight.get(char)
        return entry[0] if entry is not None and entry[1] == value else None

    def setup_srp_verifier(self):
        """HAP-python's, with the padding controllers use (hapsrp.py)."""
        use_padded_verifier(self)

    def unpair(self, client_uuid):
        """HAP-python forgets the controller but keeps its open sessions; HAP
        wants them closed (all of them when the last admin goes, which removes
        every pairing). Closed after this request's answer has gone out."""
        super().unpair(client_uuid)
        log.info("HomeKit controller %s unpaired; %d controller(s) remain paired", client_uuid,
                 len(self.state.paired_clients))

        def close_unpaired():
            for protocol in list(self.http_server.connections.values()):
                uuid = protocol.handler.client_uuid if protocol.handler else None
                if uuid is not None and uuid not in self.state.paired_clients:
                    protocol.close()
        self.loop.call_soon(close_unpaired)

    def pair(self, client_username_bytes, client_public, client_permissions) -> bool:
        result = super().pair(client_username_bytes, client_public, client_permissions)
        log.info("HomeKit controller %s paired (%s); %d controller(s) paired", client_username_bytes.decode(),
                 "admin" if ord(client_permissions) & 1 else "user", len(self.state.paired_clients))
        return result

    def _bridge_write(self, char, value) -> int:
        """The bridge's own characteristics: only Identify is writable."""
        if "pw" not in char.properties["Permissions"]:
            return hm.READ_ONLY_CHARACTERISTIC
        log.info("HomeKit identify of the bridge %s", self.accessory.display_name)
        return hm.SUCCESS

    def async_send_event(self, topic, data, sender_client_addr, immediate):
        """Pushes at once; a second event of one characteristic still waiting to
        go out sends the first before it, so that no press is merged away."""
        if self.aio_stop_event is None or self.aio_stop_event.is_set():
            return
        key = (data["aid"], data["iid"])
        for client_addr in list(self.topics.get(topic, ())):
            if sender_client_addr and sender_client_addr == client_addr:
                continue  # HAP: the controller that wrote a value gets no event of it
            protocol = self.http_server.connections.get(client_addr)
            if protocol is None:
                self.async_subscribe_client_topic(client_addr, topic, False)
                continue
            if key in protocol._event_queue:  # HAP-python 5.0's queue keeps one event per characteristic
                protocol._send_events()
            protocol.queue_event(data, True)


class NoAdvertiser:
    """Stands for AsyncZeroconf where mDNS is not wanted (tests, --no-advertise)."""

    async def async_register_service(self, *args, **kwargs):
        return None

    async def async_update_service(self, *args, **kwargs):
        return None

    async def async_unregister_service(self, *args, **kwargs):
        return None

    async def async_close(self):
        return None
