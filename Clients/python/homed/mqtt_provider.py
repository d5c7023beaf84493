"""The service skeleton of a provider whose devices are announced on an MQTT
broker (homed's Zigbee2MQTT and MQTT devices providers): paho-mqtt's threaded
client on one side, a :class:`homed.provider.Provider` on the other, and a
sync thread between that tells homed what changed.

What the two providers share is here, once; what their devices are (the
topics, the mapping, when a device is ready to register) is the subclass's.
A subclass sets ``log`` (its logger), ``sync_thread_name`` and ``gone_reason``,
calls ``super().__init__(settings, client_name)`` first in its own
``__init__``, and gives ``_on_connect``, ``_on_message``, ``on_read``,
``on_write``, ``reachable(key)`` and ``sync_once()`` (which uses the steps
below: ``_reset_after_registration``, ``_register_devices``, ``_remove_devices``,
``_tell_reachability``, ``_release_deferred``).

paho-mqtt is imported here, not by the rest of the package: only the MQTT
providers load this module, and they bring paho (the client itself needs
only protobuf).

``settings``: ``host``, ``port``, ``tls``, ``username``, ``password``,
``client_id``, ``provider_id``, ``socket_path``.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import paho.mqtt.client as mqtt

from . import proto as pb
from .echo import EchoMatcher
from .errors import HomedError
from .provider import Provider
from .refs import Ref

__all__ = ["MqttProvider", "DEFERRED_WAIT"]

#: The 1-based position of the accessory a RegisterAccessories refusal names.
ACCESSORY_INDEX = re.compile(r"^accessory (\d+) ")
#: At the latest this long after a write returned, its device's rounding is told
#: (its answer counted or not: a write answered without the handler counts too).
DEFERRED_WAIT = 2.0


class MqttProvider:
    """See the module's docstring."""

    log = logging.getLogger("homed.mqtt_provider")
    sync_thread_name = "mqtt-sync"
    #: Why devices the daemon has are removed: "that left Zigbee2MQTT", …
    gone_reason = "no longer announced"

    def __init__(self, settings, client_name: str):
        self.settings = settings
        self.lock = threading.RLock()
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.echo = EchoMatcher()
        self.broker_connected = False
        self.connections = 0  # successful connections to the broker
        # What homed has
        self.registered: Dict[str, str] = {}  # key -> signature
        self.refused: Dict[str, str] = {}  # key -> the signature homed refused (not asked again)
        self.reported_reach: Dict[str, bool] = {}
        self.registered_reach: Dict[str, bool] = {}  # key -> reachable as last registered
        self.registrations_seen = -1
        self.known_removed = False
        # To tell homed
        self.outbox: Dict[Ref, Any] = {}
        self.write_returns = 0  # on_write calls returned (each answered right after)
        #: (write_returns, release time, {ref: echoed}): told once that write is answered
        self.deferred: List[Tuple[int, float, Dict[Ref, Any]]] = []
        # Said once
        self.logged: Set[Any] = set()
        self.provider = Provider(settings.provider_id, [], on_read=self.on_read, on_write=self.on_write,
                                 socket_path=settings.socket_path, client_name=client_name)
        self.mqtt = self._make_client()
        self.sync_thread = threading.Thread(target=self._sync_loop, name=self.sync_thread_name, daemon=True)

    # -- MQTT --------------------------------------------------------------------

    def _make_client(self) -> mqtt.Client:
        s = self.settings
        client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id=s.client_id,
                             clean_session=True)
        if s.username is not None:
            client.username_pw_set(s.username, s.password)
        if s.tls:
            client.tls_set()
        client.reconnect_delay_set(1, 5)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_connect_fail = self._on_connect_fail
        client.on_message = self._on_message
        return client

    def _on_connect_refused(self, reason) -> bool:
        """True (and said once) when the broker refused the connection."""
        if not reason.is_failure:
            return False
        self._once(("refused", self.connections, str(reason)), logging.ERROR,
                   "broker %s:%d refused the connection: %s (check --credentials; trying again)",
                   self.settings.host, self.settings.port, reason)
        return True

    def _on_connect_fail(self, client, userdata):
        # paho tries again by itself (1 s, doubling to 5 s); said once per outage.
        self._once(("unreachable-broker", self.connections), logging.WARNING,
                   "cannot connect to the broker %s:%d (trying again every few seconds)", self.settings.host,
                   self.settings.port)

    def _on_disconnect(self, client, userdata, flags, reason, properties=None):
        with self.lock:
            was = self.broker_connected
            self.broker_connected = False
        if was and not self.stopping.is_set():
            self.log.warning("lost the broker %s:%d (%s): every device is unreachable until it is back",
                             self.settings.host, self.settings.port, reason)
        self.wake.set()

    def _once(self, key, level: int, message: str, *args, quiet: Optional[str] = None) -> None:
        """Logs the message the first time `key` comes; later, `quiet` at debug level (if given)."""
        with self.lock:
            first = key not in self.logged
            self.logged.add(key)
        if first:
            self.log.log(level, message, *args)
        elif quiet is not None:
            self.log.debug(quiet, *args)

    # -- homed's requests ----------------------------------------------------------

    def _write_returned(self, rounded: Dict[Ref, Any]) -> None:
        """An on_write is about to return. The daemon applies the written values
        when it gets this answer, which the provider sends once we return: the
        device's own rounding (21.3 set, 21.5 echoed) is told after that."""
        with self.lock:
            self.write_returns += 1
            if rounded:
                self.deferred.append((self.write_returns, time.monotonic() + DEFERRED_WAIT, rounded))
        self.wake.set()

    # -- telling homed ---------------------------------------------------------------

    def reachable(self, key: str) -> bool:
        raise NotImplementedError

    def _reset_after_registration(self) -> None:
        """Registered again (homed restarted): every accessory came back as it was
        registered (reachable, or not for a device offline then)."""
        if self.provider.registrations != self.registrations_seen:
            with self.lock:
                self.registrations_seen = self.provider.registrations
                self.reported_reach = {key: self.registered_reach.get(key, True) for key in self.registered}

    def _tell_reachability(self) -> None:
        with self.lock:
            reach = {key: self.reachable(key) for key in self.registered}
            changes = {key: r for key, r in reach.items() if self.reported_reach.get(key) != r}
        for key, reachable in sorted(changes.items(), key=lambda c: c[1]):  # back first, then gone
            try:
                self.provider.set_reachable(key, reachable)
                self.reported_reach[key] = reachable
            except HomedError as error:
                self.log.info("reachability of %s not told: %s", key, error)

    def _release_deferred(self) -> None:
        """Roundings whose write is answered (or waited long enough) into the outbox (under the lock)."""
        answered = self.provider.stats.get("writes", 0)
        now = time.monotonic()
        for item in list(self.deferred):
            if answered >= item[0] or now >= item[1]:
                self.deferred.remove(item)
                for ref, value in item[2].items():
                    self.outbox.setdefault(ref, value)

    def _remove_devices(self, gone: Sequence[str]) -> None:
        """Removes from homed the devices that went."""
        if not gone:
            return
        try:
            self.provider.remove(gone)
            self.log.info("removed %d devices %s: %s", len(gone), self.gone_reason, ", ".join(gone))
        except HomedError as error:
            self.log.warning("removing %s: %s", ", ".join(gone), error)
        with self.lock:
            for key in gone:
                self.registered.pop(key, None)
                self.reported_reach.pop(key, None)
                self.registered_reach.pop(key, None)

    def _register_devices(self, todo: List[Tuple[Any, str, dict]]) -> None:
        """Registers `(device, signature, accessory)` items in one call. One the
        daemon refuses (it names it by position) is left out, said, and not asked
        again until its signature changes; the others are registered."""
        while todo:
            try:
                self.provider.update([a for _, _, a in todo])
            except HomedError as error:
                match = ACCESSORY_INDEX.match(error.message or "")
                if error.code != pb.INVALID_ARGUMENT:
                    self.log.warning("registration of %d devices failed: %s (trying again)", len(todo), error)
                    return
                index = int(match.group(1)) - 1 if match and 0 < int(match.group(1)) <= len(todo) else 0
                device, signature, accessory = todo.pop(index)
                self.log.error("device %r (%s): homed refused its registration: %s; registering the others",
                               self._name_of(device), accessory["key"], error.message)
                with self.lock:
                    self.refused[accessory["key"]] = signature
                continue
            with self.lock:
                for device, signature, accessory in todo:
                    key = accessory["key"]
                    new = key not in self.registered
                    self.registered[key] = signature
                    self.reported_reach[key] = self.registered_reach[key] = not accessory.get("unreachable", False)
                    self._say_registered(device, key, new)
            return

    def _name_of(self, device) -> str:
        return device.name

    def _say_registered(self, device, key: str, new: bool) -> None:
        self.log.info("device %r (%s) %s", self._name_of(device), key, "registered" if new else "registered again")

    def _with_values(self, key: str, accessory: dict) -> dict:
        """A copy of a device's accessory with the values the cache has."""
        accessory = json.loads(json.dumps(accessory))
        for service in accessory["services"]:
            for characteristic in service["characteristics"]:
                ref = Ref(key, service["key"], characteristic.get("type_name") or characteristic["type"])
                if ref in self.cache and "value" not in characteristic:
                    characteristic["value"] = self.cache[ref]
        return accessory

    # -- the sync thread, and running --------------------------------------------

    def sync_once(self) -> None:
        raise NotImplementedError

    def _sync_timeout(self) -> float:
        """How long the sync thread sleeps when not woken."""
        return 0.05 if self.deferred else 0.5

    def _sync_loop(self) -> None:
        while not self.stopping.is_set():
            self.wake.wait(self._sync_timeout())
            self.wake.clear()
            if self.stopping.is_set():
                return
            try:
                self.sync_once()
            except Exception:  # noqa: BLE001 - the loop must go on
                self.log.exception("sync failed")

    def _started(self) -> None:
        """Says what it serves (at run's start)."""

    def run(self) -> None:
        """Serves until stop()."""
        self._started()
        self.mqtt.connect_async(self.settings.host, self.settings.port, keepalive=10)
        self.mqtt.loop_start()
        self.sync_thread.start()
        try:
            self.provider.run()
        finally:
            self.stopping.set()
            self.wake.set()
            self.mqtt.disconnect()
            self.mqtt.loop_stop()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        self.provider.stop()
