"""The bridge: homed (a resuming subscription, homed.Client + StreamCursor) on
one side, an MQTT broker (paho-mqtt, threaded) on the other.

Threads, all meeting under `self.lock`:
- the homed thread (`_follow`) owns the subscription and the replica of the
  home (`homed.home.Home`): it loads the home with GetHome, follows events from
  the GetHome's sequence number, resumes after a lost connection from where the
  replica stands (so nothing is missed), loads the home again after a run of
  layout changes and after a RESYNC (a restarted homed); it publishes what changed;
- paho's network thread (`_on_message`) records the configs the broker holds
  for our node (stale ones are removed), notes Home Assistant's birth message
  and queues commands — it never calls homed, so a slow homed never stalls MQTT;
- the command thread (commands.py) turns commands into homed writes on a
  connection of its own, named after the bridge (the writes' origin); it reads
  the entities and values through `_plan`, under the lock.

The broker may forget retained messages (a restart without persistence): on
every connection to it, every config, availability and state is published again.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from typing import Dict, List, Optional, Set, Tuple

import paho.mqtt.client as mqtt

from homed import Client, HomedError, pb
from homed.home import Home, plain

from .commands import CommandWriter, plan
from .discovery import Entity, config_topic, device_config, device_topic, entities_for, exported
from .model import AccessoryView, views
from .payloads import event_payload, state_of, state_payload
from .topics import Topics

log = logging.getLogger("homed-mqtt")

__all__ = ["Bridge"]

ONLINE, OFFLINE = b"online", b"offline"
LAYOUT_PAUSE = 0.05  # seconds without a message that end a run of layout changes
LAYOUT_DELAY_MAX = 1.0  # the longest a layout change waits for its run to end
OBJECT_ID = re.compile(r"^a(\d+)(?:_s\d+|$)")  # an entity's object id, or a device's (device-based discovery)
COLOR_ROLES = {"hue": "hs", "saturation": "hs", "color_temp": "color_temp"}


class Bridge:
    def __init__(self, settings, client_name: Optional[str] = None):
        self.settings = settings
        self.topics = Topics(settings)
        self.client_name = client_name or f"homed-mqtt ({settings.node_id})"
        self.lock = threading.RLock()
        self.stopping = threading.Event()
        # homed's side
        self.home = Home()  # homed's home, kept across connections
        self.values = _Values(self.home)
        # The accessories as the mapping reads them: None until the home is
        # loaded (then stale configs can be told apart).
        self.accessories: Optional[Dict[int, AccessoryView]] = None
        self.entities: Dict[str, Entity] = {}  # by object id
        self.by_char: Dict[int, List[Entity]] = {}
        self.color_mode: Dict[str, str] = {}  # light object id -> the colour mode set last
        self.homed_live = False
        self.followed = False  # this connection's subscription delivered something
        # The broker's side: what we published (topic -> payload) and the configs it holds for our node
        self.published: Dict[str, bytes] = {}
        # config topic -> ({object id: state topic} of its entities, accessory id)
        self.config_states: Dict[str, Tuple[Dict[str, str], int]] = {}
        # Device-based discovery: a device config's components as published last
        # (object id -> platform), and those removed from it, said with `p` alone.
        self.components: Dict[str, Dict[str, str]] = {}
        self.gone: Dict[str, Dict[str, str]] = {}
        self.broker_configs: Dict[str, bytes] = {}  # topic -> payload
        self.mqtt_connected = False
        self.republish = threading.Event()  # (re)connected to the broker, or Home Assistant came online
        self.logged: Set[object] = set()
        self.commands = CommandWriter(settings.socket_path, self.client_name, self._plan)
        self.stats = {"events": 0, "states": 0}
        self.mqtt = self._make_mqtt()

    # -- running ------------------------------------------------------------------

    def run(self) -> None:
        """Serves until `stop()`."""
        s = self.settings
        log.info("exporting homed to %s:%d (discovery prefix %s, base topic %s, node %s)", s.host, s.port,
                 s.discovery_prefix, s.base_topic, s.node_id)
        self.mqtt.connect_async(s.host, s.port, keepalive=30)
        self.mqtt.loop_start()
        self.commands.start()
        try:
            self._follow()
        finally:
            self._shutdown()

    def stop(self) -> None:
        self.stopping.set()
        self.republish.set()

    def _shutdown(self) -> None:
        # A clean disconnect sends no last will: say offline ourselves.
        try:
            info = self.mqtt.publish(self.settings.bridge_state_topic, OFFLINE, qos=1, retain=True)
            if self.mqtt_connected:
                info.wait_for_publish(2)
        except (RuntimeError, ValueError):
            pass
        self.mqtt.disconnect()
        self.mqtt.loop_stop()
        self.commands.stop()
        log.info("stopped")

    # -- MQTT ----------------------------------------------------------------------

    def _make_mqtt(self) -> mqtt.Client:
        s = self.settings
        client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id=s.client_id,
                             clean_session=True)
        if s.username is not None:
            client.username_pw_set(s.username, s.password)
        if s.tls:
            client.tls_set()
        client.will_set(s.bridge_state_topic, OFFLINE, qos=1, retain=True)
        client.reconnect_delay_set(1, 5)
        client.max_queued_messages_set(0)
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        return client

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        s = self.settings
        if reason.is_failure:
            self._once(("refused", str(reason)), logging.ERROR,
                       "broker %s:%d refused the connection: %s (check the credentials; trying again)",
                       s.host, s.port, reason)
            return
        log.info("connected to the broker %s:%d", s.host, s.port)
        self.logged.discard(("unreachable-broker",))
        # Subscribed before anything may be published: the broker sends the
        # retained configs of our node as they were when the subscription reaches
        # it, and paho sends packets in the order they are queued. Published
        # first, a config would replace the one an earlier run left, and the
        # components that run published (a service removed while the bridge was
        # away) would never be known to remove.
        for topic in self.topics.subscriptions():
            client.subscribe(topic, qos=1)
        with self.lock:
            self.mqtt_connected = True
            # The broker may have lost every retained message (a restart): all
            # again, unless a full publication under the lock (the home loaded
            # now) does it first and takes the request (_sync).
            self.republish.set()

    def _on_connect_fail(self, client, userdata):
        self._once(("unreachable-broker",), logging.WARNING,
                   "cannot connect to the broker %s:%d (trying again every few seconds)", self.settings.host,
                   self.settings.port)

    def _on_disconnect(self, client, userdata, flags, reason, properties=None):
        with self.lock:
            was, self.mqtt_connected = self.mqtt_connected, False
        if was and not self.stopping.is_set():
            log.warning("lost the broker %s:%d (%s); connecting again", self.settings.host, self.settings.port,
                        reason)

    def _on_message(self, client, userdata, message):
        try:
            self._handle(message.topic, message.payload, message.retain)
        except Exception:  # noqa: BLE001 - one bad message must not end the MQTT thread
            log.exception("%s: message not handled", message.topic)

    def _handle(self, topic: str, payload: bytes, retained: bool = False) -> None:
        if topic == self.topics.ha_status:
            if retained:
                # The broker's copy of a birth message published with retain, sent
                # to every new subscription: no Home Assistant coming online now
                # (this connection's publication has everything already).
                log.debug("%s: retained %r: not a Home Assistant starting now; ignored", topic, payload[:80])
            elif payload.strip() == ONLINE:
                log.info("Home Assistant is online (%s): publishing every config again", topic)
                self.republish.set()
            elif payload.strip() != OFFLINE:
                log.debug("%s: %r is neither online nor offline; ignored", topic, payload[:80])
            return
        if self.topics.is_our_config(topic):
            self._on_config(topic, payload)
            return
        command = self.topics.command(topic)
        if command is not None:
            if retained:
                # Kept by the broker, it would be done again at every start of the bridge.
                log.warning("%s: retained command %r ignored (a command is published without retain)", topic,
                            payload[:80])
                return
            self.commands.submit(topic, command[0], command[1], payload)

    def _on_config(self, topic: str, payload: bytes) -> None:
        """A config the broker holds (or just got) for our node: one we do not
        publish is stale (an accessory removed while the bridge was away)."""
        with self.lock:
            if not payload:
                self.broker_configs.pop(topic, None)
                return
            self.broker_configs[topic] = payload
            device = self.settings.discovery == "device" and self.topics.is_device_config(topic)
            if device and (self.accessories is None or topic in self.published) \
                    and self._merge_components(topic, payload):
                if self.accessories is not None:
                    self._sync(force=False)
            if self.accessories is None or topic in self.published:
                return
            self._remove_stale(topic, payload)

    def _merge_components(self, topic: str, payload: bytes) -> bool:
        """A device config the broker holds (from before this start: it may come
        after our own first publish): components in it the bridge does not know
        of were published by an earlier run, so those homed no longer has are
        removed from the device the documented way (`p` alone), not forgotten.
        True when there were such components."""
        try:
            components = json.loads(payload)["cmps"]
            found = {oid: c["p"] for oid, c in components.items() if isinstance(c, dict) and len(c) > 1}
        except (ValueError, KeyError, TypeError, AttributeError):
            return False  # garbage: removed as stale once the home is loaded
        match = OBJECT_ID.match(topic.split("/")[-2])
        known = {**self.components.get(topic, {}), **self.gone.get(topic, {})}
        new = {oid: platform for oid, platform in found.items() if oid not in known}
        if not match or not new:
            return False
        self.components.setdefault(topic, {}).update(new)
        states, aid = self.config_states.get(topic, ({}, int(match.group(1))))
        base = self.settings.base_topic
        self.config_states[topic] = ({**{oid: f"{base}/{oid}/state" for oid in new}, **states}, aid)
        return True

    def _remove_stale(self, topic: str, payload: Optional[bytes]) -> None:
        """Empties a config of our node that no exported entity has, with the
        state and availability topics it used (ours by construction) that no
        exported entity uses (after a switch of discovery form, they are in use)."""
        object_ids = [topic.split("/")[-2]]
        if payload:
            try:
                config = json.loads(payload)
                if self.topics.is_device_config(topic) and isinstance(config.get("cmps"), dict):
                    object_ids = list(config["cmps"])
            except (ValueError, AttributeError):
                log.warning("%s: retained garbage on our config topic (%r); removed", topic, payload[:80])
        log.info("%s: no such entity in homed now; its config removed", topic)
        self._publish(topic, b"", qos=1)
        self.broker_configs.pop(topic, None)
        for object_id in object_ids:
            if object_id not in self.entities:
                self._publish(f"{self.settings.base_topic}/{object_id}/state", b"")
        match = OBJECT_ID.match(topic.split("/")[-2])
        if match and int(match.group(1)) not in {e.accessory_id for e in self.entities.values()}:
            self._publish(self.topics.availability(int(match.group(1))), b"")

    def _publish(self, topic: str, payload: bytes, qos: int = 0, retain: bool = True, force: bool = True) -> None:
        """Publishes (retained) unless the broker already has this from us. While
        the broker is away nothing is queued: the reconnection publishes all."""
        if not force and self.published.get(topic) == payload:
            return
        if not retain:
            pass  # an event: nothing kept
        elif payload:
            self.published[topic] = payload
        else:
            self.published.pop(topic, None)
        if not self.mqtt_connected:
            return
        self.mqtt.publish(topic, payload, qos=qos, retain=retain)

    # -- homed ---------------------------------------------------------------------

    def _follow(self) -> None:
        """Follows homed until stopped: connect, load or resume, apply events;
        when the connection is lost, again after 0.1 s doubling to 2 s."""
        backoff = 0.1
        while not self.stopping.is_set():
            try:
                client = Client.connect(self.settings.socket_path, client_name=self.client_name, call_timeout=10)
            except (HomedError, OSError) as error:
                self._once(("homed-down",), logging.WARNING, "cannot reach homed: %s (trying again)", error)
                self._wait(backoff)
                backoff = min(2.0, backoff * 2)
                continue
            self.logged.discard(("homed-down",))
            self.followed = False
            try:
                with client:
                    self._session(client)
            except (HomedError, OSError) as error:
                if not self.stopping.is_set():
                    # Said once per kind of failure until a subscription works again
                    # (a refusal that lasts, PERMISSION_DENIED say, must not fill the log).
                    self._once(("lost", str(error)), logging.WARNING,
                               "lost homed (%s): resuming where the stream stood", error)
            if self.followed:
                backoff = 0.1
                self.logged = {key for key in self.logged if key[0] != "lost"}
            self._set_live(False)
            self._wait(backoff)
            backoff = min(2.0, backoff * 2)

    def _wait(self, seconds: float) -> None:
        """Sleeps, serving the broker's republish requests meanwhile."""
        deadline = time.monotonic() + seconds
        while not self.stopping.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            if self.republish.wait(min(remaining, 0.1)) and not self.stopping.is_set():
                self.republish.clear()
                with self.lock:
                    self._sync(force=True)

    def _session(self, client: Client) -> None:
        home = self.home
        if not home.loaded:
            # The first connection: the home as GetHome has it, then the events after it.
            self._load(client, force=True)
        request = home.resume(pb.SubscribeRequest(policy=pb.SLOW_COALESCE, queue_limit=16384))
        resyncing = False
        # Layout changes come in runs (a provider registering a thousand accessories):
        # the home is loaded again once the stream pauses, or a second after the first.
        layout_since: Optional[float] = None
        with client.subscribe(request) as stream:
            while not self.stopping.is_set():
                if self.republish.is_set():
                    self.republish.clear()
                    with self.lock:
                        self._sync(force=True)
                if layout_since is not None and time.monotonic() - layout_since >= LAYOUT_DELAY_MAX:
                    layout_since = None
                    self._load(client, force=False)
                try:
                    message = stream.get(LAYOUT_PAUSE if layout_since is not None else 0.1)
                except TimeoutError:
                    if layout_since is not None:
                        # Names, rooms, services added or removed: the configs follow.
                        layout_since = None
                        self._load(client, force=False)
                    continue
                if message is None:
                    raise HomedError.from_status(pb.UNAVAILABLE, "the subscription ended")
                if not self.followed:
                    # homed took the subscription: the entities are live again, and
                    # the next loss is retried after 0.1 s again.
                    self.followed = True
                    self._set_live(True)
                with self.lock:
                    changes = home.apply(message)
                if changes.resync:
                    # A restarted homed (a new journal), or events no longer held: the
                    # snapshot that follows is the truth, then the layout is loaded again.
                    log.info("homed resync (%s): loading the whole home again", message.marker.reason)
                    resyncing = True
                if resyncing:
                    # Ids may name other objects now: nothing is published before the load.
                    if message.HasField("marker") and message.marker.kind == pb.MARKER_SNAPSHOT_END:
                        resyncing = False
                        layout_since = None
                        self._load(client, force=True)
                    continue
                self._apply(changes)
                if home.needs_load and layout_since is None:
                    layout_since = time.monotonic()

    def _set_live(self, live: bool) -> None:
        with self.lock:
            self.homed_live = live
            self._publish(self.settings.bridge_state_topic, ONLINE if live else OFFLINE, qos=1, force=False)

    def _load(self, client: Client, force: bool) -> None:
        """GetHome, and the broker made to match it (everything published again
        with `force`: at start, after a resync)."""
        response = client.get_home()
        with self.lock:
            self.home.load(response)
            self.accessories = views(self.home)
            self._rebuild()
            # Configs the broker held before we knew the home, removed before the
            # new ones are published (after a switch of discovery form, Home
            # Assistant must let go of a unique_id before it takes it again).
            wanted = set(self._wanted())
            for topic in sorted(set(self.broker_configs) - wanted - set(self.config_states)):
                self._remove_stale(topic, self.broker_configs[topic])
            self._sync(force=force)
        log.info("home loaded: %d accessories, %d exported as %d entities (seq %d)", len(self.accessories),
                 len({e.accessory_id for e in self.entities.values()}), len(self.entities), response.seq)

    def _rebuild(self) -> None:
        entities: Dict[str, Entity] = {}
        for accessory in self.accessories.values():
            ok, why = exported(accessory, self.settings)
            if not ok:
                self._once(("excluded", accessory.id, why), logging.INFO, "accessory %r (%d) not exported: %s",
                           accessory.name, accessory.id, why)
                continue
            found, skipped = entities_for(accessory, self.settings)
            for reason in skipped:
                self._once(("skipped", accessory.id, reason), logging.INFO, "accessory %r (%d): %s",
                           accessory.name, accessory.id, reason)
            for entity in found:
                entities[entity.object_id] = entity
        self.entities = entities
        self.by_char = {}
        for entity in entities.values():
            for char in entity.chars.values():
                self.by_char.setdefault(char.id, []).append(entity)

    def _config_topic(self, entity: Entity) -> str:
        return config_topic(self.settings.discovery_prefix, entity.component, self.settings.node_id,
                            entity.object_id)

    def _wanted(self) -> Dict[str, Tuple[bytes, Dict[str, str], int]]:
        """Config topic -> (config, {object id: state topic} of its entities,
        accessory id): one per entity, or one per accessory (device-based)."""
        wanted: Dict[str, Tuple[bytes, Dict[str, str], int]] = {}
        if self.settings.discovery != "device":
            for entity in self.entities.values():
                wanted[self._config_topic(entity)] = (state_payload(entity.config),
                                                      {entity.object_id: entity.state_topic}, entity.accessory_id)
            return wanted
        by_accessory: Dict[int, List[Entity]] = {}
        for entity in self.entities.values():
            by_accessory.setdefault(entity.accessory_id, []).append(entity)
        for aid, entities in by_accessory.items():
            topic = device_topic(self.settings.discovery_prefix, self.settings.node_id, aid)
            present = {e.object_id: e.component for e in entities}
            before = {**self.gone.get(topic, {}), **self.components.get(topic, {})}
            gone = {oid: platform for oid, platform in before.items() if oid not in present}
            self.components[topic], self.gone[topic] = present, gone
            wanted[topic] = (state_payload(device_config(entities, gone)),
                             {e.object_id: e.state_topic for e in entities}, aid)
        return wanted

    def _sync(self, force: bool) -> None:
        """The broker made to hold what homed holds (under self.lock). With
        `force` everything is published, which is what a pending republish
        request asks: it is taken, so that one start publishes each config once."""
        if force and self.mqtt_connected:
            self.republish.clear()
        self._publish(self.settings.bridge_state_topic, ONLINE if self.homed_live else OFFLINE, qos=1, force=force)
        if self.accessories is None:
            return
        wanted = self._wanted()
        accessories = {e.accessory_id for e in self.entities.values()}
        for topic, (payload, states, aid) in wanted.items():
            self._publish(topic, payload, qos=1, force=force)
            # A component removed from a device: its state emptied too.
            for object_id, state in self.config_states.get(topic, ({}, aid))[0].items():
                if object_id not in states:
                    self._publish(state, b"")
            self.config_states[topic] = (states, aid)
        for aid in accessories:
            self._publish(self.topics.availability(aid), ONLINE if self._reachable(aid) else OFFLINE,
                          force=force)
        for entity in self.entities.values():
            self._publish_state(entity, force)
        # What is no longer exported: its config emptied (Home Assistant removes
        # the entity), its state and availability too (nothing stale left).
        for topic in [t for t in self.config_states if t not in wanted]:
            states, aid = self.config_states.pop(topic)
            self.components.pop(topic, None)
            self.gone.pop(topic, None)
            log.info("%s: removed (the service or accessory is gone from homed, or no longer exported)", topic)
            self._publish(topic, b"", qos=1)
            self.broker_configs.pop(topic, None)
            for state in states.values():
                self._publish(state, b"")
            if aid not in accessories:
                self._publish(self.topics.availability(aid), b"")

    def _publish_state(self, entity: Entity, force: bool) -> None:
        if not entity.retain_state:
            return
        state = state_of(entity, self.values, self.color_mode.get(entity.object_id))
        if state is not None:
            self._publish(entity.state_topic, state_payload(state), force=force)
            self.stats["states"] += 1

    def _reachable(self, aid: int) -> bool:
        accessory = self.home.accessories.get(aid)
        return accessory is not None and accessory.reachable

    def _apply(self, changes) -> None:
        """What one stream message changed, to the broker: states, button
        presses (every one, also those the loaded home already held), availability."""
        with self.lock:
            touched: Dict[str, Entity] = {}
            for event in changes.earlier + changes.events:
                self.stats["events"] += 1
                body = event.WhichOneof("body")
                if body == "value":
                    cid = event.value.characteristic_id
                    for entity in self.by_char.get(cid, ()):
                        if entity.kind == "event":
                            payload = event_payload(entity, plain(event.value.value))
                            if payload is not None:
                                self._publish(entity.state_topic, payload, retain=False)
                            continue
                        for role, char in entity.chars.items():
                            if char.id == cid and role in COLOR_ROLES:
                                self.color_mode[entity.object_id] = COLOR_ROLES[role]
                        touched[entity.object_id] = entity
                elif body == "reachability":
                    aid = event.reachability.accessory_id
                    if any(e.accessory_id == aid for e in self.entities.values()):
                        self._publish(self.topics.availability(aid), ONLINE if self._reachable(aid) else OFFLINE,
                                      force=False)
            for entity in touched.values():
                self._publish_state(entity, force=False)

    # -- commands ------------------------------------------------------------------

    def _plan(self, topic: str, object_id: str, field: str, payload: bytes):
        """The command writer's view of an entity (under the lock): what to write."""
        with self.lock:
            return plan(self.entities.get(object_id), topic, object_id, field, payload, self.values)

    def _once(self, key, level, message, *args) -> None:
        if key in self.logged:
            return
        self.logged.add(key)
        log.log(level, message, *args)


class _Values:
    """The replica's values as the payloads read them: plain, by characteristic id."""

    def __init__(self, home: Home):
        self.home = home

    def get(self, cid: int, default=None):
        value = plain(self.home.value(cid))
        return default if value is None else value
