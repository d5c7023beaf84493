"""Home Assistant's discovery messages read, with no I/O.

Two kinds of config topic, both usually retained by the device:

- single-component: `<prefix>/<component>/[<node_id>/]<object_id>/config`, one
  entity's config;
- device-based: `<prefix>/device/[<node_id>/]<object_id>/config`, a `device`
  block, an `origin` and `components` (`cmps`), each with its `platform` (`p`);
  the payload's own `availability…`, `state_topic`, `command_topic`, `qos` and
  `encoding` are every component's unless it has its own.

An empty payload removes: the entity, or every component of the device config;
a component that a new device config leaves out, or lists with nothing but its
platform, is removed too. `read_config` turns one message into
`Announcement`s (a config, or None for a removal) with their discovery ids,
the keys expanded and `~` put in.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, List, Optional

from .abbreviations import expand, expand_component, put_base_topic

__all__ = ["Announcement", "ConfigMessage", "read_config", "parse_json", "OWN_ORIGIN"]

TOPIC = re.compile(r"(?P<component>\w+)/(?:(?P<node_id>[a-zA-Z0-9_-]+)/)?(?P<object_id>[a-zA-Z0-9_-]+)/config")

#: Options of a device-based payload that its components inherit.
SHARED_OPTIONS = ("availability", "availability_mode", "availability_template", "availability_topic",
                  "command_topic", "payload_available", "payload_not_available", "state_topic", "qos",
                  "encoding")

#: Configs whose origin name starts so are homed's own exports (the Home
#: Assistant bridge): taking them in would loop.
OWN_ORIGIN = "homed"


@dataclass
class Announcement:
    discovery_id: str  # "switch/node/object", or "device/object#component id"
    component: str  # the platform: switch, light, sensor, …
    config: Optional[dict]  # None: removed


@dataclass
class ConfigMessage:
    announcements: List[Announcement] = field(default_factory=list)
    #: Device-based: every discovery id under this prefix that is not announced is removed.
    replaces: Optional[str] = None
    #: Why the message was not taken (the entities it named are left as they were).
    error: Optional[str] = None
    #: A message skipped on purpose (homed's own export), for the debug log.
    skipped: Optional[str] = None
    #: The discovery id of the topic (a device config's components are under it, after '#').
    source: Optional[str] = None


def parse_json(payload: bytes):
    """(value, None), or (None, why it is not JSON)."""
    try:
        return json.loads(payload.decode("utf-8")), None
    except UnicodeDecodeError as error:
        return None, f"not UTF-8 ({error.reason} at byte {error.start})"
    except ValueError as error:
        return None, f"not JSON ({error})"


def _own(config: dict) -> bool:
    origin = config.get("origin")
    name = origin.get("name") if isinstance(origin, dict) else None
    return isinstance(name, str) and name.lower().startswith(OWN_ORIGIN)


def read_config(prefix: str, topic: str, payload: bytes) -> Optional[ConfigMessage]:
    """One message on a config topic, read; None for a topic that is no
    config topic at all (not under the prefix, not ending in /config)."""
    if not topic.startswith(prefix + "/") or not topic.endswith("/config"):
        return None
    rest = topic[len(prefix) + 1:]
    match = TOPIC.fullmatch(rest)
    if not match:
        return ConfigMessage(error="not a discovery topic (<component>/[<node_id>/]<object_id>/config, "
                                   "ids of letters, digits, '_' and '-'); ignored")
    component, node_id, object_id = match.group("component", "node_id", "object_id")
    base_id = rest[:-len("/config")]
    if component == "device":
        message = _device_config(base_id, payload)
    else:
        message = _single_config(base_id, component, payload)
    message.source = base_id
    return message


def _single_config(base_id: str, component: str, payload: bytes) -> ConfigMessage:
    if not payload:
        return ConfigMessage([Announcement(base_id, component, None)])
    config, error = parse_json(payload)
    if error is None and not isinstance(config, dict):
        error = f"a JSON {type(config).__name__}, not an object"
    if error is not None:
        return ConfigMessage(error=f"config {error}; the entity stays as it was")
    if "migrate_discovery" in config or "migr_discvry" in config:
        # Moving to device-based discovery: this topic's entity goes, the
        # device config (usually a moment later) brings it back.
        return ConfigMessage([Announcement(base_id, component, None)])
    expand(config)
    if _own(config):
        return ConfigMessage(skipped="a config homed itself exported (origin 'homed'); not taken back")
    put_base_topic(config)
    return ConfigMessage([Announcement(base_id, component, config)])


def _device_config(base_id: str, payload: bytes) -> ConfigMessage:
    if not payload:
        return ConfigMessage(replaces=base_id)
    config, error = parse_json(payload)
    if error is None and not isinstance(config, dict):
        error = f"a JSON {type(config).__name__}, not an object"
    if error is not None:
        return ConfigMessage(error=f"device config {error}; its entities stay as they were")
    if "migrate_discovery" in config or "migr_discvry" in config:
        return ConfigMessage(replaces=base_id)
    expand(config)
    if _own(config):
        return ConfigMessage(skipped="a config homed itself exported (origin 'homed'); not taken back")
    device, components = config.get("device"), config.get("components")
    if not isinstance(device, dict):
        return ConfigMessage(error="device config without a 'device' (dev) object; its entities stay as they were")
    if not isinstance(components, dict) or not components:
        return ConfigMessage(error="device config without 'components' (cmps); its entities stay as they were")
    announcements = []
    for component_id, component in components.items():
        discovery_id = f"{base_id}#{component_id}"
        if not isinstance(component, dict) or not isinstance(component.get("platform"), str):
            announcements.append(Announcement(discovery_id, "?", {"_error": f"component {component_id!r} has no "
                                                                              "platform (p)"}))
            continue
        component = dict(component)
        platform = component.pop("platform")
        if not component:
            announcements.append(Announcement(discovery_id, platform, None))
            continue
        expand_component(component)
        component["device"] = device
        if "origin" in config:
            component["origin"] = config["origin"]
        for option in SHARED_OPTIONS:
            if option in config and option not in component:
                component[option] = json.loads(json.dumps(config[option]))
        put_base_topic(component, config.get("~"))
        announcements.append(Announcement(discovery_id, platform, component))
    return ConfigMessage(announcements, replaces=base_id)


def device_key_of(config: dict) -> Optional[str]:
    """The key entities of one device share: its first identifier, else its
    first connection ("mac 02:5b:…"); None without a device block."""
    device = config.get("device")
    if not isinstance(device, dict):
        return None
    identifiers = device.get("identifiers")
    if isinstance(identifiers, (str, int)) and not isinstance(identifiers, bool) and str(identifiers):
        return str(identifiers)
    if isinstance(identifiers, list):
        for identifier in identifiers:
            if isinstance(identifier, (str, int)) and not isinstance(identifier, bool) and str(identifier):
                return str(identifier)
    connections = device.get("connections")
    if isinstance(connections, list):
        for connection in connections:
            if isinstance(connection, list) and len(connection) == 2 and all(isinstance(c, str) for c in connection):
                return f"{connection[0]} {connection[1]}"
    return None


def scalar_text(value: Any) -> Optional[str]:
    """A payload option (payload_on: "ON", 1, true) as the text Home Assistant
    compares and sends ("ON", "1", "True"); None for a missing or null one."""
    if value is None:
        return None
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


__all__ += ["device_key_of", "scalar_text", "SHARED_OPTIONS", "TOPIC"]
