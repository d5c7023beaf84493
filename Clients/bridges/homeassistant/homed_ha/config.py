"""The bridge's settings: defaults, then a small INI file, then flags (flags win).
No I/O but reading the files named (the config file, the credentials file).

    [mqtt]
    broker = mqtt://127.0.0.1:1883
    credentials = /etc/homed/homed-mqtt.credentials   ; username=… and password=… lines
    discovery_prefix = homeassistant
    discovery = entity        ; entity (Home Assistant 2024.4+) or device (Home Assistant 2024.11+)
    base_topic = homed
    node_id = homed

    [export]
    exclude_providers = zigbee2mqtt, mqtt     ; their accessories came from MQTT
    include_rooms =                           ; empty: every room
    exclude_rooms = Garage
    include_accessories =                     ; names or ids; empty: every accessory
    exclude_accessories = 42, Test Lamp
"""

from __future__ import annotations

import configparser
import re
from typing import List, Optional, Sequence

from homed.broker import BrokerAddress, read_credentials

__all__ = ["Settings", "load", "SettingsError", "DEFAULT_EXCLUDED_PROVIDERS"]

#: Accessories from these providers came from an MQTT broker (Zigbee2MQTT, MQTT
#: devices announced with Home Assistant discovery): exporting them back would
#: show Home Assistant every device twice and could loop commands.
DEFAULT_EXCLUDED_PROVIDERS = ("zigbee2mqtt", "mqtt")

# Home Assistant takes [a-zA-Z0-9_-] in a discovery topic's node and object ids.
_TOPIC_ID = re.compile(r"^[A-Za-z0-9_-]+$")


class SettingsError(ValueError):
    pass


def _split(text: str) -> List[str]:
    return [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]


class Settings:
    def __init__(self, broker: str = "mqtt://127.0.0.1:1883", username: Optional[str] = None,
                 password: Optional[str] = None, discovery_prefix: str = "homeassistant",
                 base_topic: str = "homed", node_id: str = "homed", socket_path: Optional[str] = None,
                 exclude_providers: Sequence[str] = DEFAULT_EXCLUDED_PROVIDERS,
                 include_rooms: Sequence[str] = (), exclude_rooms: Sequence[str] = (),
                 include_accessories: Sequence[str] = (), exclude_accessories: Sequence[str] = (),
                 client_id: Optional[str] = None, discovery: str = "entity"):
        try:
            address = BrokerAddress(broker)
        except ValueError as error:
            raise SettingsError(str(error)) from None
        self.broker = broker
        self.tls, self.host, self.port = address.tls, address.host, address.port
        self.username, self.password = username, password
        self.discovery_prefix = discovery_prefix.strip("/")
        self.base_topic = base_topic.strip("/")
        for name, topic in (("discovery prefix", self.discovery_prefix), ("base topic", self.base_topic)):
            if not topic or "+" in topic or "#" in topic:
                raise SettingsError(f"the {name} {topic!r} must be a topic without wildcards")
        if not _TOPIC_ID.match(node_id):
            raise SettingsError(f"node id {node_id!r}: Home Assistant takes only letters, digits, '_' and '-'")
        self.node_id = node_id
        if discovery not in ("entity", "device"):
            raise SettingsError(f"discovery {discovery!r}: entity (one config per entity, Home Assistant 2024.4 "
                                "and later) or device (one config per device, Home Assistant 2024.11 and later)")
        self.discovery = discovery
        self.socket_path = socket_path
        self.exclude_providers = {p for p in exclude_providers}
        self.include_rooms = {r.casefold() for r in include_rooms}
        self.exclude_rooms = {r.casefold() for r in exclude_rooms}
        self.include_accessories = {a.casefold() for a in include_accessories}
        self.exclude_accessories = {a.casefold() for a in exclude_accessories}
        self.client_id = client_id or f"homed-mqtt-{node_id}"

    @property
    def bridge_state_topic(self) -> str:
        """The bridge's own availability: online while it runs, offline as its last will."""
        return f"{self.base_topic}/bridge/state"


FLAG_KEYS = ("broker", "credentials", "discovery_prefix", "discovery", "base_topic", "node_id", "socket",
             "exclude_providers",
             "include_rooms", "exclude_rooms", "include_accessories", "exclude_accessories")
LIST_KEYS = ("exclude_providers", "include_rooms", "exclude_rooms", "include_accessories", "exclude_accessories")


def load(config_path: Optional[str] = None, flags: Optional[dict] = None) -> Settings:
    """Settings from the file (if any) with the flags given (not None) on top.
    Raises SettingsError naming the file, section and key that is wrong."""
    values: dict = {}
    if config_path:
        parser = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
        try:
            with open(config_path, "r") as f:
                parser.read_file(f)
        except OSError as error:
            raise SettingsError(f"config file {config_path}: {error.strerror or error}") from None
        except configparser.Error as error:
            raise SettingsError(f"config file {config_path}: {error}") from None
        known = {"mqtt": ("broker", "credentials", "discovery_prefix", "discovery", "base_topic", "node_id", "socket"),
                 "export": LIST_KEYS}
        for section in parser.sections():
            if section not in known:
                raise SettingsError(f"config file {config_path}: unknown section [{section}] "
                                    f"(known: {', '.join('[' + s + ']' for s in known)})")
            for key, value in parser.items(section):
                if key not in known[section]:
                    raise SettingsError(f"config file {config_path}: [{section}] has no key {key!r} "
                                        f"(known: {', '.join(known[section])})")
                values[key] = _split(value) if key in LIST_KEYS else value.strip()
    for key, value in (flags or {}).items():
        if value is not None:
            values[key] = list(value) if key in LIST_KEYS else value
    username = password = None
    credentials = values.pop("credentials", None)
    if credentials:
        try:
            username, password = read_credentials(credentials)
        except OSError as error:
            raise SettingsError(f"credentials file {credentials}: {error.strerror or error}") from None
    socket_path = values.pop("socket", None)
    return Settings(username=username, password=password, socket_path=socket_path, **values)

