"""The provider: Zigbee2MQTT over MQTT (paho-mqtt, threaded) on one side,
homed (homed.provider.Provider, threaded) on the other, on the service
skeleton it shares with the MQTT devices provider
(homed.mqtt_provider.MqttProvider: the clients, the sync thread, the
registration loop, reachability, running).

Three kinds of threads meet here, all under `self.lock`:
- paho's network thread delivers MQTT messages (`_on_message`): it decodes
  them, updates the value cache, confirms echoed writes and queues what to
  tell homed — it never calls homed itself, so a slow daemon never stalls MQTT;
- the provider's workers run `on_read` / `on_write` (they publish /get and
  /set and wait for the device's answer);
- the sync thread (`_sync_loop`) tells homed what was queued: registrations
  (new, changed, left devices), reachability, values and button events.

A state message's values take a shorter way when nothing else is waiting to
be told (`_report_now`): paho's thread sends them itself, without waiting for
homed's answer nor for the socket (`Provider.report_nowait`), which saves the
hand-over to the sync thread on the way from the broker to homed. The answer
is taken later (the next message, or the sync thread); a report that could
not go at once, or failed on the way, is the sync thread's as before. One
report at a time is on its way, so values reach homed in order.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Dict, List, Optional, Set, Tuple

from homed import HomedError, pb
from homed.broker import BrokerAddress, read_credentials
from homed.errors import error_for
from homed.mqtt_provider import MqttProvider
from homed.provider import Ref

from .bridge import Topic, classify, online_of, parse_json
from .mapping import DeviceMap, Unsupported, map_device

log = logging.getLogger("homed-zigbee2mqtt")

__all__ = ["Zigbee2MqttProvider", "Settings", "read_credentials"]


class Settings:
    def __init__(self, broker: str = "mqtt://127.0.0.1:1883", base: str = "zigbee2mqtt",
                 username: Optional[str] = None, password: Optional[str] = None,
                 socket_path: Optional[str] = None, provider_id: str = "zigbee2mqtt",
                 write_timeout: float = 4.5, read_timeout: float = 2.0, client_id: Optional[str] = None):
        address = BrokerAddress(broker)
        self.tls, self.host, self.port = address.tls, address.host, address.port
        self.base = base.strip("/")
        self.username, self.password = username, password
        self.socket_path = socket_path
        self.provider_id = provider_id
        self.write_timeout = write_timeout
        self.read_timeout = read_timeout
        self.client_id = client_id or f"homed-{provider_id}"


class Zigbee2MqttProvider(MqttProvider):
    log = log
    sync_thread_name = "z2m-sync"
    gone_reason = "that left Zigbee2MQTT"

    def __init__(self, settings: Settings):
        super().__init__(settings, f"homed-zigbee2mqtt ({settings.provider_id})")
        self.changed = threading.Condition(self.lock)  # a state message arrived (reads wait on it)
        # What Zigbee2MQTT says
        self.maps: Dict[str, DeviceMap] = {}  # by IEEE address
        self.names: Dict[str, str] = {}  # friendly name -> IEEE address
        self.devices_known = False  # a valid bridge/devices was read
        self.reread = False  # (re)connected to the broker: ask every device for its state
        self.cache: Dict[Ref, Any] = {}
        self.device_online: Dict[str, bool] = {}
        self.bridge_online: Optional[bool] = None
        self.state_seq: Dict[str, int] = {}
        # To tell homed, besides the values
        self.events: List[Tuple[Ref, int]] = []
        # Reports go one at a time (in order), by the sync thread or paho's
        # (`_report_now`); `in_flight`: one sent at once, its answer not taken yet.
        self.report_lock = threading.Lock()
        self.in_flight: Optional[Tuple[Any, Dict[Ref, Any], List[Tuple[Ref, int]]]] = None

    # -- MQTT --------------------------------------------------------------------

    def _topic(self, friendly: str, suffix: str = "") -> str:
        return f"{self.settings.base}/{friendly}{suffix}"

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        if self._on_connect_refused(reason):
            return
        log.info("connected to the broker %s:%d; subscribing to %s/#", self.settings.host, self.settings.port,
                 self.settings.base)
        with self.lock:
            # Subscribed before anything may be published (homed's reads and
            # writes publish under this lock once connected): paho sends in the
            # order it is given, so a device's answer to a /get or /set is never
            # sent to the broker before the subscription that receives it.
            client.subscribe(self.settings.base + "/#", qos=1)
            self.broker_connected = True
            self.connections += 1
            # What changed while away is unknown: the retained bridge/devices
            # that follows re-reads every device (_on_devices).
            self.reread = True
        self.wake.set()

    def _on_message(self, client, userdata, message):
        try:
            self._handle(message.topic, message.payload, message.retain)
        except Exception:  # noqa: BLE001 - one bad message must not end the MQTT thread
            log.exception("%s: message not handled", message.topic)

    def _handle(self, topic: str, payload: bytes, retained: bool) -> None:
        with self.lock:
            kind, name = classify(self.settings.base, topic, self.names)
        if kind == Topic.DEVICES:
            self._on_devices(topic, payload)
        elif kind == Topic.BRIDGE_STATE:
            self._on_bridge_state(topic, payload)
        elif kind == Topic.AVAILABILITY:
            self._on_availability(topic, name, payload)
        elif kind == Topic.STATE:
            self._on_state(topic, name, payload)

    def _on_devices(self, topic: str, payload: bytes) -> None:
        devices, error = parse_json(payload)
        if error is None and not isinstance(devices, list):
            error = f"a JSON {type(devices).__name__}, not a list of devices"
        if error is None and not devices:
            # Zigbee2MQTT always lists its coordinator: an empty list is a broken
            # publisher, and taking it at its word would remove every accessory
            # (with the rooms and scenes users gave them).
            error = "an empty list (not even the coordinator)"
        if error is not None:
            log.error("%s: %s; keeping the devices known before", topic, error)
            return
        maps: Dict[str, DeviceMap] = {}
        for index, device in enumerate(devices):
            label = device.get("friendly_name") if isinstance(device, dict) else None
            label = label or (device.get("ieee_address") if isinstance(device, dict) else None) or f"device {index}"
            try:
                dm = map_device(device)
            except Unsupported as why:
                if isinstance(device, dict) and device.get("type") == "Coordinator":
                    continue
                log.warning("%s: device %r (%s) not registered: %s", topic, label,
                            device.get("ieee_address") if isinstance(device, dict) else "?", why)
                continue
            if dm.ieee in maps:
                log.warning("%s: device %r: IEEE address %s listed twice; keeping the first", topic, label, dm.ieee)
                continue
            if dm.unknown:  # one line a device: what it cannot read of the definition, the rest registered
                log.warning("%s: device %r (%s): left out what this provider cannot read: %s; registering the rest",
                            topic, dm.friendly_name, dm.ieee, "; ".join(dm.unknown))
            if dm.ignored:
                log.debug("device %r (%s): not mapped: %s", dm.friendly_name, dm.ieee, ", ".join(dm.ignored))
            maps[dm.ieee] = dm
        with self.lock:
            before = self.maps
            self.maps = maps
            self.names = {dm.friendly_name: ieee for ieee, dm in maps.items()}
            self.devices_known = True
            for ieee, dm in maps.items():
                self.cache.update(dm.decode({})[0])  # constants (a stopped cover, °C)
                old = before.get(ieee)
                if old is not None and old.friendly_name != dm.friendly_name:
                    log.info("device %s renamed in Zigbee2MQTT: %r -> %r (its name in homed stays)", ieee,
                             old.friendly_name, dm.friendly_name)
            new = [ieee for ieee in maps if ieee not in before or before[ieee].accessory != maps[ieee].accessory
                   or self.reread]
            self.reread = False
            for ieee in before:
                if ieee not in maps:
                    self.echo.cancel_device(ieee)
        log.info("%s: %d devices, %d mapped", topic, len(devices), len(maps))
        for ieee in new:
            self._get(maps[ieee])
        self.wake.set()

    def _get(self, dm: DeviceMap) -> None:
        """Asks the device for the properties it can be asked for (its state is
        not retained): it answers with a state message."""
        props = dm.gettable
        if props and self.broker_connected:
            self.mqtt.publish(self._topic(dm.friendly_name, "/get"), json.dumps({p: "" for p in props}), qos=0)

    def _on_bridge_state(self, topic: str, payload: bytes) -> None:
        online = online_of(payload)
        if online is None:
            log.error("%s: %r is neither online nor offline; ignored", topic, payload[:80])
            return
        with self.lock:
            was = self.bridge_online
            self.bridge_online = online
            maps = list(self.maps.values())
        if was != online:
            log.info("Zigbee2MQTT is %s", "online" if online else "offline: every device is unreachable")
        if online and was is False:
            for dm in maps:
                self._get(dm)
        self.wake.set()

    def _on_availability(self, topic: str, name: str, payload: bytes) -> None:
        online = online_of(payload)
        with self.lock:
            ieee = self.names.get(name)
        if ieee is None:
            self._once(("unknown-topic", topic), logging.INFO, "%s: availability of no known device", topic)
            return
        if online is None:
            log.error("%s: availability %r is neither online nor offline; ignored", topic, payload[:80])
            return
        with self.lock:
            was = self.device_online.get(ieee)
            self.device_online[ieee] = online
            dm = self.maps.get(ieee)
        if online and was is False and dm is not None:
            self._get(dm)
        self.wake.set()

    def _on_state(self, topic: str, name: str, payload: bytes) -> None:
        with self.lock:
            ieee = self.names.get(name)
            dm = self.maps.get(ieee) if ieee else None
        if dm is None:
            if self.devices_known:
                self._once(("unknown-topic", topic), logging.WARNING, "%s: a message for no known device; ignored",
                           topic)
            return
        state, error = parse_json(payload)
        if error is None and not isinstance(state, dict):
            error = f"a JSON {type(state).__name__}, not an object"
        if error is not None:
            log.error("%s: device %r (%s): state %s; ignored", topic, dm.friendly_name, ieee, error)
            return
        decoded, clamped = dm.decode(state)
        for ref in clamped:
            self._once(("clamped", ref), logging.WARNING,
                       "%s: device %r (%s): %s out of range in %s; clamped to %s (said once)", topic,
                       dm.friendly_name, ieee, ref.characteristic, json.dumps(state)[:200], decoded[ref])
        confirmed = self.echo.observe(ieee, decoded, dm.acks(state))
        events = dm.events(state)
        action = state.get("action")
        if isinstance(action, str) and action and not events and action not in _quiet_actions(dm):
            log.info("%s: device %r: action %r has no button", topic, dm.friendly_name, action)
        with self.lock:
            for ref, value in decoded.items():
                old = self.cache.get(ref, _NONE)
                if ref not in confirmed and (old != value or type(old) is not type(value)):
                    self.outbox[ref] = value
                self.cache[ref] = value
            self.events.extend(events)
            self.state_seq[ieee] = self.state_seq.get(ieee, 0) + 1
            self.changed.notify_all()
        if not self._report_now(ieee):
            self.wake.set()

    def _report_now(self, ieee: str) -> bool:
        """On paho's thread: what a device's message changed, sent to homed at
        once when nothing else is waiting to be told before it (a registration,
        a reachability change, a deferred rounding, a report not answered yet)
        and the connection can take it without waiting. True when nothing is
        left for the sync thread."""
        if not self.report_lock.acquire(blocking=False):
            return False
        try:
            if self.in_flight is not None:
                if not self.in_flight[0].done():
                    return False
                self._take_answer()
            with self.lock:
                if (self.deferred or ieee not in self.registered or not self.provider.connected
                        or self.provider.registrations != self.registrations_seen
                        or self.reported_reach.get(ieee) != self.reachable(ieee)
                        or any(r.accessory_key != ieee for r in self.outbox)
                        or any(r.accessory_key != ieee for r, _ in self.events)):
                    return False
                outbox, events = self.outbox, self.events
                if not outbox and not events:
                    return True
                self.outbox, self.events = {}, []
            try:
                pending = self.provider.report_nowait(list(outbox.items()) + events)
            except HomedError:
                pending = None  # not connected after all, or a value it refuses: the sync thread says so
            if pending is None:
                self._requeue(outbox, events)
                return False
            self.in_flight = (pending, outbox, events)
            return True
        finally:
            self.report_lock.release()

    def _take_answer(self) -> None:
        """The answer to the report sent at once (under report_lock; it may wait for it)."""
        pending, outbox, events = self.in_flight
        self.in_flight = None
        try:
            pending.result()
        except HomedError as error:
            self._report_failed(error, outbox, events)

    def _requeue(self, outbox: Dict[Ref, Any], events: List[Tuple[Ref, int]]) -> None:
        """Values and presses not told: told at the next sync (a value that
        changed meanwhile is told as it is now), nothing lost."""
        with self.lock:
            for ref, value in outbox.items():
                self.outbox.setdefault(ref, value)
            self.events[:0] = events
        self.wake.set()

    def _report_failed(self, error: HomedError, outbox: Dict[Ref, Any], events: List[Tuple[Ref, int]]) -> None:
        items = len(outbox) + len(events)
        if error.code in (pb.UNAVAILABLE, pb.DEADLINE_EXCEEDED, pb.RESOURCE_EXHAUSTED):
            # Not told, not refused: told again at the next sync.
            log.info("report of %d values not made (%s); telling them again", items, error)
            self._requeue(outbox, events)
        else:
            log.warning("report of %d values refused: %s", items, error)

    # -- homed's requests ----------------------------------------------------------

    def on_read(self, refs: List[Ref]) -> Dict[Ref, Any]:
        by_device: Dict[str, List[Ref]] = {}
        for ref in refs:
            by_device.setdefault(ref.accessory_key, []).append(ref)
        waits = []
        with self.lock:
            connected = self.broker_connected
            for ieee, wanted in by_device.items():
                dm = self.maps.get(ieee)
                if dm is None:
                    continue
                props = sorted({p for r in wanted if r in dm.bindings for p in dm.bindings[r].gettable})
                if props and connected:
                    waits.append((ieee, self.state_seq.get(ieee, 0)))
                    self.mqtt.publish(self._topic(dm.friendly_name, "/get"), json.dumps({p: "" for p in props}))
        deadline = time.monotonic() + self.settings.read_timeout
        with self.lock:
            for ieee, seq in waits:
                self.changed.wait_for(lambda: self.state_seq.get(ieee, 0) > seq, max(0.0, deadline - time.monotonic()))
            out: Dict[Ref, Any] = {}
            for ref in refs:
                if ref in self.cache:
                    out[ref] = self.cache[ref]
                else:
                    dm = self.maps.get(ref.accessory_key)
                    name = dm.friendly_name if dm else ref.accessory_key
                    out[ref] = error_for(pb.UNAVAILABLE, f"device {name!r} ({ref.accessory_key}) has not reported "
                                                         f"{ref.characteristic} yet")
            return out

    def on_write(self, values: Dict[Ref, Any], atomic: bool):
        failed: Dict[Ref, Any] = {}
        rounded: Dict[Ref, Any] = {}  # echoed within tolerance, but not the value written
        waiting = []
        by_device: Dict[str, Dict[Ref, Any]] = {}
        for ref, value in values.items():
            by_device.setdefault(ref.accessory_key, {})[ref] = value
        with self.lock:
            connected = self.broker_connected
            for ieee, writes in by_device.items():
                dm = self.maps.get(ieee)
                if dm is None:
                    failed.update({r: (pb.NOT_FOUND, f"device {ieee} is not in Zigbee2MQTT's list") for r in writes})
                    continue
                try:
                    payload = dm.payload(writes, self.cache)
                except KeyError as error:
                    failed.update({r: (pb.PERMISSION_DENIED, f"{ieee}: {error} takes no writes") for r in writes})
                    continue
                except ValueError as error:
                    failed.update({r: (pb.INVALID_ARGUMENT, f"device {dm.friendly_name!r} ({ieee}): {error}")
                                   for r in writes})
                    continue
                if not connected:
                    failed.update({r: (pb.UNAVAILABLE, f"device {dm.friendly_name!r}: the broker is not connected")
                                   for r in writes})
                    continue
                # A write that asks nothing of the device (HoldPosition false) is done.
                asked = {r: v for r, v in writes.items() if dm.bindings[r].encode(v)}
                if not asked:
                    continue
                tolerances = {r: dm.bindings[r].tolerance for r in asked}
                pending = self.echo.add(ieee, asked, tolerances)
                topic = self._topic(dm.friendly_name, "/set")
                self.mqtt.publish(topic, json.dumps(payload), qos=1)
                log.debug("%s: %s", topic, json.dumps(payload))
                waiting.append((dm, topic, pending))
        deadline = time.monotonic() + self.settings.write_timeout
        for dm, topic, pending in waiting:
            self.echo.wait(pending, max(0.0, deadline - time.monotonic()))
            for ref, value in pending.waiting.items():
                failed[ref] = (pb.DEADLINE_EXCEEDED,
                               f"device {dm.friendly_name!r} ({dm.ieee}) did not echo {ref.characteristic} = {value} "
                               f"within {self.settings.write_timeout:g} s of {topic}")
            for ref, echoed in pending.echoed.items():
                if echoed != values[ref]:
                    rounded[ref] = echoed
        if failed:
            log.info("writes not confirmed: %s", "; ".join(str(f[1]) if isinstance(f, tuple) else str(f)
                                                             for f in failed.values()))
        self._write_returned(rounded)
        if atomic and failed:
            raise error_for(*next(iter(failed.values())))
        return failed

    # -- telling homed ---------------------------------------------------------------

    def reachable(self, ieee: str) -> bool:
        return self.broker_connected and self.bridge_online is not False and self.device_online.get(ieee) is not False

    def sync_once(self) -> None:
        if not self.provider.connected:
            return
        self._reset_after_registration()
        self._sync_registrations()
        self._tell_reachability()
        with self.report_lock:
            if self.in_flight is not None:
                self._take_answer()  # reports go in order: the one sent at once first
            with self.lock:
                self._release_deferred()
                outbox = {r: v for r, v in self.outbox.items() if r.accessory_key in self.registered}
                self.outbox = {r: v for r, v in self.outbox.items() if r.accessory_key not in self.registered}
                events = [(r, v) for r, v in self.events if r.accessory_key in self.registered]
                self.events = []  # a press of a device not registered is not told later
            items = list(outbox.items()) + events
            if items:
                try:
                    self.provider.report(items)
                except HomedError as error:
                    self._report_failed(error, outbox, events)

    def _sync_registrations(self) -> None:
        with self.lock:
            if not self.devices_known:
                return
            maps = dict(self.maps)
            todo = []
            for ieee, dm in maps.items():
                signature = dm.signature
                if self.registered.get(ieee) != signature and self.refused.get(ieee) != signature:
                    todo.append((dm, signature, self._with_values(ieee, dm.accessory)))
            gone = [ieee for ieee in self.registered if ieee not in maps]
            if not self.known_removed:
                gone += [k for k in self.provider.known_keys if k not in maps and k not in gone]
        self._remove_devices(gone)
        self.known_removed = True
        self._register_devices(todo)

    def _name_of(self, dm: DeviceMap) -> str:
        return dm.friendly_name

    # -- running ---------------------------------------------------------------------

    def _started(self) -> None:
        log.info("broker %s:%d, base topic %r, provider id %r", self.settings.host, self.settings.port,
                 self.settings.base, self.settings.provider_id)


_NONE = object()


def _quiet_actions(dm: DeviceMap) -> Set[str]:
    return {i.split(" ", 1)[1] for i in dm.ignored if i.startswith("action ")}
