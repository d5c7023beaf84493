"""Tasmota's own discovery on the broker, for the provider (service.py): its
retained `config` and `sensors` messages read into entities, and the device
asked for its state each time its LWT says it is online (it retains none)."""

from __future__ import annotations

import json
import logging
from typing import Any, Dict, Optional

from .components import Refused
from .native_entity import names
from .tasmota import TasmotaDevice, discovery_topic, map_device

log = logging.getLogger("homed-mqtt-devices")

__all__ = ["TasmotaSource"]


class TasmotaSource:
    """One discovery prefix (`--tasmota-prefix`, `tasmota/discovery`)."""

    def __init__(self, service, prefix: str):
        self.service = service
        self.prefix = prefix.strip("/")
        self.payloads: Dict[str, Dict[str, Any]] = {}  # MAC -> {"config": …, "sensors": …}
        self.devices: Dict[str, TasmotaDevice] = {}  # MAC -> as last mapped
        self.by_lwt: Dict[str, str] = {}  # LWT topic -> MAC

    def subscriptions(self):
        return [f"{self.prefix}/+/config", f"{self.prefix}/+/sensors"]

    def handle(self, topic: str, payload: bytes) -> bool:
        """True for a discovery message (read here, and nothing else)."""
        found = discovery_topic(self.prefix, topic)
        if found is None:
            return False
        mac, kind = found
        if not mac:
            self.service._once(("tasmota-topic", topic), logging.WARNING,
                               "%s: not a Tasmota discovery topic (%s/<MAC>/config or sensors); ignored", topic,
                               self.prefix)
            return True
        source = f"tasmota:{mac}"
        if not payload:
            value = None
        else:
            try:
                value = json.loads(payload)
            except ValueError as error:
                log.warning("%s: %s not JSON (%s); the device stays as it was", topic, kind, error)
                self.service._seen(source)
                return True
        stored = self.payloads.setdefault(mac, {})
        if value is None and kind == "config" and mac in self.devices:
            log.info("%s: Tasmota device %r (%s) removed (empty config)", topic, self.devices[mac].name, mac)
        stored[kind] = value
        self._map(topic, mac)
        return True

    def _map(self, topic: str, mac: str) -> None:
        stored = self.payloads[mac]
        source = f"tasmota:{mac}"
        config, sensors = stored.get("config"), stored.get("sensors")
        if config is None:
            self.devices.pop(mac, None)
            self.service._take_native(source, [], None)
            return
        signature = json.dumps([config, sensors], sort_keys=True)
        try:
            device = map_device(mac, config, sensors)
        except Refused as why:
            name = config.get("dn") if isinstance(config, dict) else None
            self.service._once(("tasmota-refused", mac, signature), logging.ERROR,
                               "%s: Tasmota device %s%s refused: %s; %s", topic, mac,
                               f" ({name!r})" if isinstance(name, str) else "", why,
                               "keeping it as it was" if mac in self.devices
                               else "left out (the others are registered)")
            self.service._seen(source)
            return
        if device.left_out:
            self.service._once(("tasmota-left-out", mac, signature), logging.INFO,
                               "%s: Tasmota device %r (%s): not mapped: %s", topic, device.name, mac,
                               names(device.left_out))
        self.devices[mac] = device
        self.by_lwt = {d.lwt.topic: m for m, d in self.devices.items()}
        if self.service._take_native(source, device.entities, signature):
            # Known online already (its retained LWT came before this config): ask now.
            self._poll_if_online(mac)

    def after_message(self, topic: str, payload: bytes) -> None:
        """A device's LWT saying it is online: it is asked for its state."""
        mac = self.by_lwt.get(topic)
        if mac is not None and payload.decode("utf-8", "replace") == self.devices[mac].lwt.available:
            self.poll(mac)

    def _poll_if_online(self, mac: str) -> None:
        device = self.devices[mac]
        last = self.service.last.get(device.lwt.topic)
        if last is not None and last[1].decode("utf-8", "replace") == device.lwt.available:
            self.poll(mac)

    def poll(self, mac: str) -> None:
        for topic, payload in self.devices[mac].polls:
            self.service.mqtt.publish(topic, payload, qos=0)
            log.debug("%s: %r (asking Tasmota device %s for its state)", topic, payload, mac)

    def device_of(self, key: str) -> Optional[TasmotaDevice]:
        return self.devices.get(key)
