"""The topics the bridge subscribes to, and what a received topic names (no I/O)."""

from __future__ import annotations

from typing import List, Optional, Tuple

__all__ = ["Topics"]


class Topics:
    def __init__(self, settings):
        self.prefix = settings.discovery_prefix
        self.base = settings.base_topic
        self.node = settings.node_id
        self.ha_status = f"{self.prefix}/status"

    def subscriptions(self) -> List[str]:
        return [
            f"{self.base}/+/set", f"{self.base}/+/set/+",  # commands
            self.ha_status,  # Home Assistant's birth message: send every config again
            f"{self.prefix}/+/{self.node}/+/config",  # our configs kept by the broker (stale ones are removed)
        ]

    def availability(self, accessory_id: int) -> str:
        return f"{self.base}/{accessory_id}/availability"

    def command(self, topic: str) -> Optional[Tuple[str, str]]:
        """`<base>/<object>/set[/<field>]` -> (object, field or ""), else None."""
        if not topic.startswith(self.base + "/"):
            return None
        parts = topic[len(self.base) + 1:].split("/")
        if len(parts) == 2 and parts[1] == "set":
            return parts[0], ""
        if len(parts) == 3 and parts[1] == "set":
            return parts[0], parts[2]
        return None

    def is_our_config(self, topic: str) -> bool:
        """`<prefix>/<component>/<node>/<object>/config` with our node id (the
        component `device` for device-based discovery)."""
        if not topic.startswith(self.prefix + "/"):
            return False
        parts = topic[len(self.prefix) + 1:].split("/")
        return len(parts) == 4 and parts[1] == self.node and parts[3] == "config"

    def is_device_config(self, topic: str) -> bool:
        """`<prefix>/device/<node>/a<accessory id>/config`: device-based discovery."""
        return self.is_our_config(topic) and topic[len(self.prefix) + 1:].startswith("device/")
