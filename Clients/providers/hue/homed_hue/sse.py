"""Server-sent events, with no I/O: lines in, events out (the bridge's
/eventstream/clip/v2 sends `id:` and `data:` lines, an event ending at a blank
line, and comments such as `: hi` when the stream opens)."""

from __future__ import annotations

from typing import List, Optional, Tuple

__all__ = ["SseParser"]


class SseParser:
    def __init__(self):
        self._data: List[str] = []
        self._id: Optional[str] = None
        self.last_id: Optional[str] = None

    def feed(self, line: str) -> Optional[Tuple[Optional[str], str]]:
        """One line (without its end of line); returns (id, data) at an event's end."""
        line = line.rstrip("\r\n")
        if not line:
            if not self._data:
                self._id = None
                return None
            event = (self._id, "\n".join(self._data))
            if self._id is not None:
                self.last_id = self._id
            self._data, self._id = [], None
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "id":
            self._id = value
        return None
