"""The provider: a broker (paho-mqtt, threaded) with Home Assistant's
discovery, Tasmota's own (tasmota_source.py) and Shelly Gen2+ devices asked
over RPC (shelly_source.py) on one side, homed (homed.provider.Provider,
threaded) on the other, on the service skeleton it shares with the
Zigbee2MQTT provider (homed.mqtt_provider.MqttProvider: the clients, the sync
thread, the registration loop, reachability, running). The devices of all
three are entities alike (components.EntityMap) once mapped, and go the
same way from here.

Three kinds of threads meet here, all under `self.lock`:
- paho's network thread delivers MQTT messages (`_on_message`): configs are
  mapped to entities and devices, states decoded into the value cache,
  echoed writes confirmed; it never calls homed, so a slow daemon never
  stalls MQTT;
- the provider's workers run `on_read` / `on_write` (a write publishes the
  command and waits for the state topic's echo);
- the sync thread (`_sync_loop`) subscribes to the topics the entities read,
  and tells homed what changed: registrations (new, changed, removed
  devices), reachability and values.

A device is registered once its configs have settled (`--settle`: a device
announcing itself entity by entity is registered once, whole) and the
retained messages of its topics have come in: after subscribing, the
provider publishes a marker on a topic of its own; the broker sends a
client's messages in order, so when the marker is back, so are the retained
states that came before it, and the accessory is registered with them.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import paho.mqtt.client as mqtt

from homed import HomedError, pb
from homed.broker import BrokerAddress, read_credentials
from homed.errors import error_for
from homed.mqtt_provider import MqttProvider
from homed.provider import Ref

from .accessory import DeviceMap, assemble
from .bindings import Message
from .components import EntityMap, NotMapped, Refused, map_entity
from .discovery import read_config
from .echo_errors import EchoWithErrors, refused
from .shelly import KEY_PREFIX as SHELLY_KEY
from .shelly_rpc import RpcCall
from .shelly_source import ShellySource
from .tasmota_source import TasmotaSource
from .templates import RenderError

log = logging.getLogger("homed-mqtt-devices")

__all__ = ["MqttDevicesProvider", "Settings", "read_credentials"]


class Settings:
    def __init__(self, broker: str = "mqtt://127.0.0.1:1883", prefix: str = "homeassistant",
                 username: Optional[str] = None, password: Optional[str] = None,
                 socket_path: Optional[str] = None, provider_id: str = "mqtt", write_timeout: float = 4.5,
                 settle: float = 0.3, client_id: Optional[str] = None, forget_after: float = 10.0,
                 tasmota_prefix: Optional[str] = "tasmota/discovery", shelly: Sequence[str] = (),
                 shelly_discovery: bool = True):
        address = BrokerAddress(broker)
        self.tls, self.host, self.port = address.tls, address.host, address.port
        self.prefix = prefix.strip("/")
        if not self.prefix or "+" in self.prefix or "#" in self.prefix:
            raise ValueError(f"discovery prefix {prefix!r}: a topic without wildcards")
        self.username, self.password = username, password
        self.socket_path = socket_path
        self.provider_id = provider_id
        self.write_timeout = write_timeout
        self.settle = settle
        self.forget_after = forget_after
        self.client_id = client_id or f"homed-{provider_id}"
        for topic in [tasmota_prefix or "", *shelly]:
            if "+" in topic or "#" in topic:
                raise ValueError(f"{topic!r}: a topic prefix without wildcards")
        self.tasmota_prefix = (tasmota_prefix or "").strip("/") or None  # None: Tasmota's discovery not read
        self.shelly = [p.strip("/") for p in shelly if p.strip("/")]
        self.shelly_discovery = shelly_discovery


#: Without its marker back by then (a broker that does not let us publish
#: there), a device is registered all the same.
BARRIER_TIMEOUT = 2.0


class MqttDevicesProvider(MqttProvider):
    log = log
    sync_thread_name = "mqtt-devices-sync"
    gone_reason = "no longer announced"

    def __init__(self, settings: Settings):
        self.marker_topic = f"homed-mqtt-devices/{settings.client_id}/marker"
        super().__init__(settings, f"homed-mqtt-devices ({settings.provider_id})")
        # What the broker says
        self.configs: Dict[str, Any] = {}  # discovery id -> the config last taken (mapped or not)
        self.entities: Dict[str, EntityMap] = {}  # discovery id -> mapped entity
        self.uid_owner: Dict[str, str] = {}  # unique id -> discovery id
        self.by_device: Dict[str, Dict[str, EntityMap]] = {}  # device key -> {discovery id: entity}
        self.devices: Dict[str, DeviceMap] = {}
        self.changed_at: Dict[str, float] = {}  # device key -> when its configs last changed
        self.last_change = 0.0
        self.ready_after: Dict[str, int] = {}  # device key -> the marker its topics wait for
        self.unflushed: Set[str] = set()  # devices changed since the last subscription
        self.device_topics: Dict[str, Set[str]] = {}  # device key -> topic filters it reads
        self.topic_devices: Dict[str, Set[str]] = {}  # topic filter -> device keys
        self.wildcards: Set[str] = set()
        self.subscribed: Set[str] = set()
        self.to_subscribe: Set[str] = set()
        self.to_unsubscribe: Set[str] = set()
        self.last: Dict[str, Tuple[int, bytes]] = {}  # topic -> (arrival number, payload)
        self.arrivals = 0
        self.available: Dict[str, bool] = {}  # entity uid -> available
        # Timers, run by the sync thread: a binary_sensor's off_delay (ref ->
        # (when, the value it then takes)) and an entity's expire_after (uid ->
        # when its state expires; `expired`: uids whose state is unknown, which
        # makes them unavailable, as Home Assistant does).
        self.off_at: Dict[Ref, Tuple[float, Any]] = {}
        self.expires_at: Dict[str, float] = {}
        self.expired: Set[str] = set()
        self.arrived_at: Dict[str, float] = {}  # topic -> when its last message came
        self.cache: Dict[Ref, Any] = {}
        self.markers_sent = 0
        self.markers_seen = 0
        self.marker_sent_at = 0.0
        self.connect_marker = 0  # the marker after this connection's retained configs
        self.configs_complete = False  # this connection's retained configs are all in
        self.configs_read = False  # once, ever: the first registration may go
        self.seen_since_connect: Set[str] = set()
        self.last_config_at = 0.0  # when a config last came (forgetting waits for them to stop)
        self.forgotten = False  # this connection's unannounced entities were forgotten
        self.echo = EchoWithErrors()  # a Shelly's error answer fails its write at once
        self.events: List[Tuple[Ref, Any]] = []  # button presses, each told once
        # Devices announced by their firmware's own discovery, not Home Assistant's.
        self.tasmota = TasmotaSource(self, settings.tasmota_prefix) if settings.tasmota_prefix else None
        self.shelly = ShellySource(self, settings.shelly, settings.shelly_discovery,
                                   f"homed-mqtt-devices/{settings.client_id}/shelly")

    # -- MQTT --------------------------------------------------------------------

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        if self._on_connect_refused(reason):
            return
        prefix = self.settings.prefix
        log.info("connected to the broker %s:%d; reading discovery under %s/", self.settings.host,
                 self.settings.port, prefix)
        with self.lock:
            self.broker_connected = True
            self.connections += 1
            self.configs_complete = False
            self.forgotten = False
            self.seen_since_connect = set()
            topics = [f"{prefix}/+/+/config", f"{prefix}/+/+/+/config", self.marker_topic]
            topics += self.tasmota.subscriptions() if self.tasmota else []
            topics += self.shelly.subscriptions()
            # A new session: every topic the entities read, again (their retained
            # messages come again, and only what changed is reported).
            own = sorted(t for t in self.topic_devices if not self.shelly.covers(t))
            topics += own
            self.subscribed = set(own)
            self.to_subscribe.clear()
            self.to_unsubscribe.clear()
            for start in range(0, len(topics), 100):
                client.subscribe([(t, 0) for t in topics[start:start + 100]])
            self.connect_marker = self._marker()
            self.shelly.on_connect()
        self.wake.set()

    def _marker(self) -> int:
        self.markers_sent += 1
        self.marker_sent_at = time.monotonic()
        self.mqtt.publish(self.marker_topic, str(self.markers_sent), qos=0)
        return self.markers_sent

    def _on_message(self, client, userdata, message):
        try:
            self._handle(message.topic, message.payload)
        except Exception:  # noqa: BLE001 - one bad message must not end the MQTT thread
            log.exception("%s: message not handled", message.topic)

    def _handle(self, topic: str, payload: bytes) -> None:
        if topic == self.marker_topic:
            self._on_marker(payload)
            return
        if self.tasmota is not None and self.tasmota.handle(topic, payload):
            return
        config = read_config(self.settings.prefix, topic, payload)
        if config is not None:
            self._on_config(topic, config)
            return
        with self.lock:
            self.arrivals += 1
            self.last[topic] = (self.arrivals, payload)
            self.arrived_at[topic] = time.monotonic()
            # A Shelly's answers may make a device, which then reads this message as its state.
            self.shelly.handle(topic, payload)
            filters = [topic] if topic in self.topic_devices else []
            filters += [w for w in self.wildcards if mqtt.topic_matches_sub(w, topic)]
            message = Message(topic, payload)
            for key in sorted({k for f in filters for k in self.topic_devices.get(f, ())}):
                dm = self.devices.get(key)
                if dm is None:
                    continue
                for topic_filter in filters:
                    self._decode(dm, topic_filter, message)
                self._update_availability(dm, filters)
        if self.tasmota is not None:
            self.tasmota.after_message(topic, payload)
        self.wake.set()

    def _on_marker(self, payload: bytes) -> None:
        try:
            number = int(payload)
        except ValueError:
            return
        with self.lock:
            self.markers_seen = max(self.markers_seen, number)
            if number >= self.connect_marker and not self.configs_complete and self.broker_connected:
                self.configs_complete = True
                if not self.configs_read:
                    log.info("read %d discovery configs: %d entities mapped on %d devices", len(self.configs),
                             len(self.entities), len(self.devices))
                self.configs_read = True
        self.wake.set()

    def _forget_unannounced(self) -> None:
        """Every retained config came again after a (re)connection, and none
        has come for `forget_after` seconds (devices re-announcing themselves
        to a broker that lost them): entities whose config did not come are
        gone (the device cleared it meanwhile)."""
        self.forgotten = True
        if not self.seen_since_connect:
            if self.configs:
                self._once(("no-configs", self.connections), logging.WARNING,
                           "no discovery config is retained on the broker; keeping the %d entities known",
                           len(self.entities))
            return
        changed: Set[str] = set()
        # A Shelly retains no announcement: one that has not answered yet is not gone.
        for discovery_id in [d for d in self.configs if d not in self.seen_since_connect
                             and not d.startswith("shelly:")]:
            log.info("%s: no longer announced (its retained config is gone); removed", discovery_id)
            self._remove(discovery_id, changed)
        for key in changed:
            self._rebuild(key)

    # -- discovery ---------------------------------------------------------------------

    def _on_config(self, topic: str, config) -> None:
        if config.error is not None:
            log.warning("%s: %s", topic, config.error)
            with self.lock:  # what the topic announced before stays, as said
                self.seen_since_connect.update(d for d in self.configs if config.source is not None and (
                    d == config.source or d.startswith(config.source + "#")))
            return
        if config.skipped is not None:
            log.debug("%s: %s", topic, config.skipped)
            return
        with self.lock:
            changed: Set[str] = set()
            announced = set()
            self.last_config_at = time.monotonic()
            for item in config.announcements:
                announced.add(item.discovery_id)
                self.seen_since_connect.add(item.discovery_id)
                if item.config is None:
                    if item.discovery_id in self.configs:
                        log.info("%s: %s removed (empty config)", topic, self._label(item.discovery_id))
                    self._remove(item.discovery_id, changed)
                else:
                    self._take(topic, item, changed)
            if config.replaces is not None:
                for discovery_id in [d for d in self.configs if d.startswith(config.replaces + "#")
                                     and d not in announced]:
                    log.info("%s: %s removed (no longer in the device config)", topic, self._label(discovery_id))
                    self._remove(discovery_id, changed)
            for key in changed:
                self._rebuild(key)
        self.wake.set()

    def _label(self, discovery_id: str) -> str:
        entity = self.entities.get(discovery_id)
        return f"entity {discovery_id} (unique_id {entity.uid})" if entity else f"entity {discovery_id}"

    def _take(self, topic: str, item, changed: Set[str]) -> None:
        discovery_id = item.discovery_id
        if discovery_id in self.configs and self.configs[discovery_id] == item.config:
            return  # the retained config again (a reconnection): nothing changed
        uid = item.config.get("unique_id", discovery_id)
        label = f"{item.component} {discovery_id} (unique_id {uid})"
        old = self.entities.get(discovery_id)
        try:
            entity = map_entity(discovery_id, item.component, item.config)
        except Refused as why:
            log.error("%s: %s refused: %s; %s", topic, label, why,
                      "keeping it as it was" if old else "left out (the rest of its device is registered)")
            return
        except NotMapped as what:
            log.info("%s: %s is %s; not mapped", topic, label, what)
            self._remove(discovery_id, changed)
            self.configs[discovery_id] = item.config
            return
        self._install(topic, label, entity, item.config, changed)

    def _install(self, topic: str, label: str, entity: EntityMap, config: Any, changed: Set[str]) -> bool:
        """A mapped entity in place of the one its discovery id had (under the lock)."""
        discovery_id = entity.discovery_id
        old = self.entities.get(discovery_id)
        owner = self.uid_owner.get(entity.uid)
        if owner is not None and owner != discovery_id:
            self._once(("duplicate", discovery_id, entity.uid), logging.WARNING,
                       "%s: %s: unique_id %s is announced already on %s; ignored", topic, label, entity.uid, owner)
            return False
        for what in entity.ignored:
            log.debug("%s: %s: %s not mapped", topic, label, what)
        if entity.expire_after is None:
            self.expired.discard(entity.uid)
            self.expires_at.pop(entity.uid, None)
        elif entity.uid not in self.expires_at:
            # As in Home Assistant: unknown (unavailable) until its first state message.
            self.expired.add(entity.uid)
        if old is not None:
            self._remove(discovery_id, changed)
        self.entities[discovery_id] = entity
        self.configs[discovery_id] = config
        self.uid_owner[entity.uid] = discovery_id
        self.by_device.setdefault(entity.device_key, {})[discovery_id] = entity
        changed.add(entity.device_key)
        log.debug("%s: %s mapped to %s", topic, label, ", ".join(s["type"] for s in entity.services) or "attachments")
        return True

    def _take_native(self, source: str, entities: List[EntityMap], signature: Optional[str]) -> bool:
        """A device of Tasmota's or a Shelly's own discovery, mapped: its
        entities (discovery ids `<source>#…`) replace the ones it had; none
        removes it. True when anything changed."""
        with self.lock:
            self.last_config_at = time.monotonic()
            self._seen(source)
            mine = [d for d in self.configs if d.startswith(source + "#")]
            if signature is not None and mine and all(self.configs[d] == signature for d in mine) and \
                    {e.discovery_id for e in entities} == set(mine):
                return False  # announced again as it was (a reconnection)
            changed: Set[str] = set()
            for discovery_id in mine:
                self._remove(discovery_id, changed)
            for entity in entities:
                self._install(source, f"{entity.component} {entity.discovery_id}", entity, signature, changed)
            self.seen_since_connect.update(e.discovery_id for e in entities)
            for key in changed:
                self._rebuild(key)
        self.wake.set()
        return True

    def _seen(self, source: str) -> None:
        """What `source` announced before is still announced (this connection)."""
        with self.lock:
            self.seen_since_connect.update(d for d in self.configs if d.startswith(source + "#"))

    def _remove(self, discovery_id: str, changed: Set[str]) -> None:
        self.configs.pop(discovery_id, None)
        entity = self.entities.pop(discovery_id, None)
        if entity is None:
            return
        if self.uid_owner.get(entity.uid) == discovery_id:
            del self.uid_owner[entity.uid]
        self.available.pop(entity.uid, None)
        self.expired.discard(entity.uid)
        self.expires_at.pop(entity.uid, None)
        group = self.by_device.get(entity.device_key, {})
        group.pop(discovery_id, None)
        if not group:
            self.by_device.pop(entity.device_key, None)
        changed.add(entity.device_key)

    def _rebuild(self, key: str) -> None:
        """The device's accessory again, from its entities as they are now."""
        entities = list(self.by_device.get(key, {}).values())
        dm = assemble(key, entities) if entities else None
        old_topics = self.device_topics.pop(key, set())
        self.changed_at[key] = self.last_change = time.monotonic()
        if dm is None:
            self.devices.pop(key, None)
            self.echo.cancel_device(key)
            if entities:
                log.warning("device %s: none of its entities (%s) brings a HAP service; not registered", key,
                            ", ".join(e.uid for e in entities))
            new_topics: Set[str] = set()
        else:
            self.devices[key] = dm
            for uid, why in dm.dropped:
                self._once(("dropped", key, uid, why), logging.WARNING, "device %s: entity %s: %s; left out", key,
                           uid, why)
            new_topics = set(dm.by_topic) | {s.topic for e in entities for s in e.availability.sources}
            self.cache.update(dm.constants())
            self.unflushed.add(key)
        self.device_topics[key] = new_topics
        for topic in old_topics - new_topics:
            users = self.topic_devices.get(topic, set())
            users.discard(key)
            if not users:
                self.topic_devices.pop(topic, None)
                self.wildcards.discard(topic)
                if topic in self.subscribed:
                    self.to_unsubscribe.add(topic)
                self.to_subscribe.discard(topic)
        for topic in new_topics - old_topics:
            self.topic_devices.setdefault(topic, set()).add(key)
            if "+" in topic or "#" in topic:
                self.wildcards.add(topic)
            if topic not in self.subscribed and not self.shelly.covers(topic):
                self.to_subscribe.add(topic)
                self.to_unsubscribe.discard(topic)
        if dm is not None:
            # Messages already in for topics it shares with devices known before
            # (a Tasmota's tele/STATE, a gateway's wildcard): read them now.
            for topic_filter in sorted(new_topics):
                for topic, (_, payload) in sorted(self._last_of(topic_filter), key=lambda i: i[1][0]):
                    self._decode(dm, topic_filter, Message(topic, payload), self.arrived_at.get(topic))
            self._update_availability(dm, None)

    # -- states --------------------------------------------------------------------------

    def _decode(self, dm: DeviceMap, topic_filter: str, message: Message, at: Optional[float] = None) -> None:
        """A message for the device (`at`: when it came; now unless said: a
        message read again, as at registration, is no new button press)."""
        now = time.monotonic()
        replayed = at is not None
        at = now if at is None else at
        for entity in dm.entities.values():
            if entity.expire_after is not None and entity.state_topic == topic_filter:
                # Any message on its state topic starts its expire_after again.
                if at + entity.expire_after > now:
                    self.expires_at[entity.uid] = at + entity.expire_after
                    if entity.uid in self.expired:
                        self.expired.discard(entity.uid)
                        log.info("%s: device %s, entity %s: a state again; available", message.topic, dm.key,
                                 entity.uid)
        values, clamped, acks, errors = dm.decode(topic_filter, message, self.cache)
        for uid, why in errors:
            self._once(("bad-state", uid, message.topic, why), logging.WARNING,
                       "%s: device %s, entity %s: state %s; ignored", message.topic, dm.key, uid, why,
                       quiet="%s: device %s, entity %s: state %s; ignored (again)")
        for ref in clamped:
            self._once(("clamped", ref), logging.WARNING,
                       "%s: device %s: %s out of range in %r; clamped to %s (said once)", message.topic, dm.key,
                       ref.characteristic, message.payload[:120], values[ref])
        confirmed = self.echo.observe(dm.key, values, acks)
        for ref, value in values.items():
            binding = dm.bindings.get(ref)
            if binding is not None and binding.event:
                if not replayed:
                    self.events.append((ref, value))
                continue
            if binding is not None and binding.off_delay is not None:
                # Every reading other than off starts the delay again.
                if value != binding.off_value:
                    self.off_at[ref] = (at + binding.off_delay, binding.off_value)
                else:
                    self.off_at.pop(ref, None)
            old = self.cache.get(ref, _NONE)
            if ref not in confirmed and (old != value or type(old) is not type(value)):
                self.outbox[ref] = value
            self.cache[ref] = value

    def _update_availability(self, dm: DeviceMap, filters: Optional[List[str]]) -> None:
        for entity in dm.entities.values():
            sources = entity.availability.sources
            if filters is not None and not any(s.topic in filters for s in sources):
                continue
            states: List[Optional[bool]] = []
            latest: Tuple[int, Optional[bool]] = (-1, None)
            for source in sources:
                state = None
                for topic, (arrival, payload) in self._last_of(source.topic):
                    try:
                        said = source.state(Message(topic, payload))
                    except RenderError as error:
                        said = None
                        self._once(("bad-availability", entity.uid, topic, str(error)), logging.WARNING,
                                   "%s: device %s, entity %s: availability %s; ignored", topic, dm.key,
                                   entity.uid, error)
                    if said is None:
                        self._once(("neither", entity.uid, topic, payload[:40]), logging.WARNING,
                                   "%s: device %s, entity %s: availability %r is neither %r nor %r; ignored",
                                   topic, dm.key, entity.uid, payload[:80], source.available, source.not_available)
                        continue
                    state = said
                    if arrival > latest[0]:
                        latest = (arrival, said)
                states.append(state)
            self.available[entity.uid] = entity.availability.available(states, latest[1])

    def _last_of(self, topic_filter: str):
        if "+" not in topic_filter and "#" not in topic_filter:
            return [(topic_filter, self.last[topic_filter])] if topic_filter in self.last else []
        return [(t, v) for t, v in self.last.items() if mqtt.topic_matches_sub(topic_filter, t)]

    # -- homed's requests ----------------------------------------------------------

    def on_read(self, refs: List[Ref]) -> Dict[Ref, Any]:
        out: Dict[Ref, Any] = {}
        with self.lock:
            for ref in refs:
                dm = self.devices.get(ref.accessory_key)
                binding = dm.bindings.get(ref) if dm is not None else None
                entity = dm.entities.get(binding.entity) if binding is not None else None
                if entity is not None and entity.uid in self.expired:
                    out[ref] = error_for(pb.UNAVAILABLE, f"device {ref.accessory_key}, entity {entity.uid}: no "
                                                         f"state for {entity.expire_after:g} s (expire_after); "
                                                         "its value is unknown")
                elif ref in self.cache:
                    out[ref] = self.cache[ref]
                else:
                    out[ref] = error_for(pb.UNAVAILABLE, f"device {ref.accessory_key} has not reported "
                                                         f"{ref.characteristic} yet")
        return out

    def on_write(self, values: Dict[Ref, Any], atomic: bool):
        failed: Dict[Ref, Any] = {}
        rounded: Dict[Ref, Any] = {}
        waiting = []
        by_device: Dict[str, Dict[Ref, Any]] = {}
        for ref, value in values.items():
            by_device.setdefault(ref.accessory_key, {})[ref] = value
        with self.lock:
            connected = self.broker_connected
            for key, writes in by_device.items():
                dm = self.devices.get(key)
                if dm is None:
                    failed.update({r: (pb.NOT_FOUND, f"device {key} is not announced on the broker") for r in writes})
                    continue
                try:
                    commands = dm.commands(writes, self.cache)
                except KeyError as error:
                    failed.update({r: (pb.PERMISSION_DENIED, f"device {key}: {error} takes no writes") for r in writes})
                    continue
                except ValueError as error:
                    failed.update({r: (pb.INVALID_ARGUMENT, f"device {key}: {error}") for r in writes})
                    continue
                if not connected:
                    failed.update({r: (pb.UNAVAILABLE, f"device {dm.name!r} ({key}): the broker is not connected")
                                   for r in writes})
                    continue
                # Optimistic ones (no state topic) are done once sent; a value the
                # device already reports will not be said again by every device.
                echo = {r: v for r, v in writes.items() if not dm.bindings[r].optimistic
                        and not (self.cache.get(r, _NONE) == v and type(self.cache.get(r)) is type(v))}
                pending = self.echo.add(key, echo, {r: dm.bindings[r].tolerance for r in echo}) if echo else None
                topics = []
                for (topic, payload), entity in commands:
                    if isinstance(payload, RpcCall):  # a Shelly's: its answer is matched to these writes
                        refs = [r for r in writes if dm.bindings[r].entity == entity.uid]
                        request = self.shelly.command(key, refs, payload)
                        if request is None:
                            self.echo.fail(key, refs, (pb.NOT_FOUND, f"device {key} answers on no prefix now"))
                            continue
                        topic, text = request
                    elif isinstance(payload, dict):
                        text = json.dumps(payload)
                    else:
                        text = payload.text() if hasattr(payload, "text") else payload
                    self.mqtt.publish(topic, text, qos=entity.qos, retain=entity.retain)
                    topics.append(topic)
                    log.debug("%s: %s", topic, text)
                for ref, value in writes.items():
                    if ref not in echo:
                        self.cache[ref] = value
                        for follower, of in dm.bindings[ref].followers.items():
                            self.cache[follower] = self.outbox[follower] = of(value)
                if pending is not None:
                    waiting.append((dm, ", ".join(dict.fromkeys(topics)), pending))
        deadline = time.monotonic() + self.settings.write_timeout
        for dm, topics, pending in waiting:
            self.echo.wait(pending, max(0.0, deadline - time.monotonic()))
            failed.update(refused(pending))
            for ref, value in pending.waiting.items():
                failed[ref] = (pb.DEADLINE_EXCEEDED,
                               f"device {dm.name!r} ({dm.key}) did not echo {ref.characteristic} = {value} "
                               f"within {self.settings.write_timeout:g} s of {topics}")
            with self.lock:
                for ref, echoed in pending.echoed.items():
                    self.cache[ref] = echoed
                    if echoed != values[ref]:
                        rounded[ref] = echoed
        if failed:
            log.info("writes not confirmed: %s", "; ".join(str(f[1]) for f in failed.values()))
        self._write_returned(rounded)
        if atomic and failed:
            raise error_for(*next(iter(failed.values())))
        return failed

    # -- telling homed ---------------------------------------------------------------

    def reachable(self, key: str) -> bool:
        dm = self.devices.get(key)
        return self.broker_connected and dm is not None and all(
            self.available.get(uid, True) and uid not in self.expired for uid in dm.entities)

    def _run_timers(self, now: float) -> None:
        """off_delay and expire_after whose time has come (under the lock)."""
        for ref, (when, off) in list(self.off_at.items()):
            if when > now:
                continue
            del self.off_at[ref]
            dm = self.devices.get(ref.accessory_key)
            if dm is None or ref not in dm.bindings:
                continue
            if self.cache.get(ref, _NONE) != off:
                log.debug("device %s: %s set to %r by itself (off_delay)", ref.accessory_key, ref.characteristic, off)
                self.cache[ref] = off
                self.outbox[ref] = off
        for uid, when in list(self.expires_at.items()):
            if when > now:
                continue
            del self.expires_at[uid]
            discovery_id = self.uid_owner.get(uid)
            entity = self.entities.get(discovery_id) if discovery_id else None
            if entity is not None and entity.expire_after is not None:
                self.expired.add(uid)
                log.info("device %s, entity %s: no state for %g s (expire_after): unknown, so unavailable",
                         entity.device_key, uid, entity.expire_after)

    def _next_timer(self) -> Optional[float]:
        with self.lock:
            return min([w for w, _ in self.off_at.values()] + list(self.expires_at.values()), default=None)

    def _flush_subscriptions(self) -> None:
        with self.lock:
            if not self.broker_connected:
                return
            subscribe, unsubscribe = sorted(self.to_subscribe), sorted(self.to_unsubscribe)
            self.to_subscribe.clear()
            self.to_unsubscribe.clear()
            if unsubscribe:
                self.mqtt.unsubscribe(unsubscribe)
                self.subscribed.difference_update(unsubscribe)
            if subscribe:
                for start in range(0, len(subscribe), 100):
                    self.mqtt.subscribe([(t, 0) for t in subscribe[start:start + 100]])
                self.subscribed.update(subscribe)
                self._marker()
            for key in self.unflushed:
                self.ready_after[key] = self.markers_sent
            self.unflushed.clear()

    def _ready(self, key: str, now: float) -> bool:
        if key in self.unflushed or now - self.changed_at.get(key, 0.0) < self.settings.settle:
            return False
        return (self.markers_seen >= self.ready_after.get(key, 0)
                or now - self.marker_sent_at > BARRIER_TIMEOUT)

    def _quiet(self, now: float) -> bool:
        """This connection's configs are in and none has come for a while."""
        return self.configs_complete and now - self.last_config_at >= self.settings.forget_after

    def sync_once(self) -> None:
        with self.lock:
            self._run_timers(time.monotonic())
            if not self.forgotten and self._quiet(time.monotonic()):
                self._forget_unannounced()
        self._flush_subscriptions()
        with self.lock:
            if self.broker_connected:
                self.shelly.tick()
        if not self.provider.connected:
            return
        self._reset_after_registration()
        self._sync_registrations()
        self._tell_reachability()
        with self.lock:
            self._release_deferred()
            outbox = {r: v for r, v in self.outbox.items() if r.accessory_key in self.registered}
            self.outbox = {r: v for r, v in self.outbox.items()
                           if r.accessory_key not in self.registered and r.accessory_key in self.devices}
            # A press of a device not registered yet is not told later: it is over.
            events = [(r, v) for r, v in self.events if r.accessory_key in self.registered]
            self.events = []
        if outbox or events:
            try:
                self.provider.report(list(outbox.items()) + events)
            except HomedError as error:
                log.warning("report of %d values refused: %s", len(outbox) + len(events), error)

    def _sync_registrations(self) -> None:
        with self.lock:
            if not self.configs_read:
                return
            now = time.monotonic()
            todo = []
            for key, dm in self.devices.items():
                if not self._ready(key, now):
                    continue
                signature = json.dumps(dm.accessory, sort_keys=True)
                if self.registered.get(key) != signature and self.refused.get(key) != signature:
                    accessory = self._with_values(key, dm.accessory)
                    # A device offline now is registered so, rather than reachable for a moment.
                    accessory["unreachable"] = not self.reachable(key)
                    todo.append((dm, signature, accessory))
            gone = [key for key in self.registered if key not in self.devices
                    and now - self.changed_at.get(key, 0.0) >= self.settings.settle]
            if not self.known_removed and self._quiet(now):
                if self.configs:  # a Shelly's key is not: it retains no announcement (shelly.py)
                    gone += [k for k in self.provider.known_keys if k not in self.devices and k not in gone
                             and not k.startswith(SHELLY_KEY)]
                self.known_removed = True
        self._remove_devices(gone)
        self._register_devices(todo)

    def _say_registered(self, dm: DeviceMap, key: str, new: bool) -> None:
        log.info("device %r (%s) %s: %s", dm.name, key, "registered" if new else "registered again",
                 ", ".join(s["type"] for s in dm.accessory["services"]))

    def _sync_timeout(self) -> float:
        now = time.monotonic()
        busy = (self.deferred or self.unflushed or now - self.last_change < self.settings.settle + BARRIER_TIMEOUT
                or (not self.forgotten and self.configs_complete))
        timeout = 0.05 if busy else 0.5
        next_timer = self._next_timer()
        if next_timer is not None:
            timeout = min(timeout, max(0.0, next_timer - now))
        return timeout

    # -- running ---------------------------------------------------------------------

    def _started(self) -> None:
        s = self.settings
        shelly = ", ".join(s.shelly) or "none named"
        log.info("broker %s:%d, discovery prefix %r, Tasmota discovery %s, Shelly devices: %s%s, provider id %r",
                 s.host, s.port, s.prefix, repr(s.tasmota_prefix) if s.tasmota_prefix else "off", shelly,
                 " (and every shelly*/online)" if s.shelly_discovery else "", s.provider_id)


_NONE = object()
