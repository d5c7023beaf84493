"""An MQTT broker's address and credentials as homed's MQTT providers and bridges
take them (no I/O but reading the credentials file, and no MQTT library: each
program brings its own client)."""

from __future__ import annotations

from typing import Dict, Optional, Tuple
from urllib.parse import urlparse

__all__ = ["BrokerAddress", "read_credentials"]


class BrokerAddress:
    """`mqtt://host[:port]` (1883) or `mqtts://host[:port]` (8883); a bare
    `host[:port]` means mqtt://."""

    def __init__(self, url: str = "mqtt://127.0.0.1:1883"):
        parsed = urlparse(url if "://" in url else "mqtt://" + url)
        if parsed.scheme not in ("mqtt", "mqtts"):
            raise ValueError(f"broker URL {url!r}: the scheme is mqtt:// or mqtts://")
        self.tls = parsed.scheme == "mqtts"
        self.host = parsed.hostname or "127.0.0.1"
        try:
            port = parsed.port
        except ValueError:
            raise ValueError(f"broker URL {url!r}: the port is not a number from 1 to 65535") from None
        self.port = port or (8883 if self.tls else 1883)

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def read_credentials(path: str) -> Tuple[Optional[str], Optional[str]]:
    """`username=…` and `password=…` lines (a file, so that they are never on
    a command line, where every user of the machine can read them)."""
    found: Dict[str, str] = {}
    with open(path, "r") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            key, value = line.split("=", 1)
            found[key.strip().lower()] = value.strip()
    return found.get("username"), found.get("password")
