"""What the threaded and the asyncio providers share besides their core: the
settings, a session as a driver holds it, and the views of the core they both
offer (ids, refs, counters). No I/O here: the drivers connect, call and wait."""

from __future__ import annotations

import contextlib
from typing import Dict, List, Optional, Sequence

from .accessories import accessory_message
from .commands import Job
from .errors import HomedError
from .provider_core import Change, ProviderCore, Reconnecting
from .refs import Ref

__all__ = ["ProviderBase", "Session"]


class Session:
    """One connection's command stream, as a driver holds it: ``ended`` is the
    driver's Event (threading's or asyncio's), set when the stream ends, and
    ``reason`` the error it ended with."""

    def __init__(self, client, stream, ended):
        self.client = client
        self.stream = stream
        self.ended = ended
        self.reason: Optional[HomedError] = None


class ProviderBase:
    """What both providers hold and tell of themselves: their settings and the
    views of their core. The drivers set ``_session`` (a :class:`Session`
    once registered) and ``_error``, and ``_guard`` to their lock when other
    threads change the core."""

    _session: Optional[Session] = None
    _error: Optional[BaseException] = None
    _guard = contextlib.nullcontext()

    def __init__(self, provider_id: str, accessories: Sequence, on_read, on_write, socket_path: Optional[str],
                 client_name: Optional[str], home_id: int, on_registered, call_timeout: float,
                 min_backoff: float, max_backoff: float, max_frame_size: int, takeover_wait: float):
        self.provider_id = provider_id
        self.on_read = on_read
        self.on_write = on_write
        self.socket_path = socket_path
        self.client_name = client_name or f"provider {provider_id}"
        self.on_registered = on_registered
        self.call_timeout = call_timeout
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.max_frame_size = max_frame_size
        self.takeover_wait = takeover_wait
        self._core = ProviderCore(provider_id, accessories, home_id)

    def _reconnecting(self) -> Reconnecting:
        return Reconnecting(self.min_backoff, self.max_backoff, self.takeover_wait, self.provider_id)

    def _change_client(self, change: Change):
        """The connection to tell a change to, counted as a registration under
        way (see ``_registration_over``); None when it waits for the next
        registration."""
        with self._guard:
            session = self._session if change.now and self.connected else None
            if session is None:
                return None
            self._core.registering += 1
            return session.client

    def _handler(self, job: Job):
        """The handler of a read or write command (None when there is none)."""
        return self.on_read if job.kind == "read" else self.on_write

    @property
    def home_id(self) -> int:
        """The home new accessories go to (0: the primary home)."""
        return self._core.home_id

    @home_id.setter
    def home_id(self, home_id: int) -> None:
        self._core.home_id = home_id

    @property
    def known_keys(self) -> List[str]:
        """The keys the daemon knew from this provider when the stream last opened."""
        return self._core.known_keys

    @property
    def ping_interval_ms(self) -> int:
        """The daemon's ping interval (ms), from the last ``opened``."""
        return self._core.ping_interval_ms

    @property
    def error(self) -> Optional[BaseException]:
        """Why :meth:`run` ended, if it ended with an error."""
        return self._error

    @property
    def connected(self) -> bool:
        """True while registered on a live connection."""
        session = self._session
        return session is not None and not session.ended.is_set()

    def _connected_session(self):
        session = self._session
        if session is None or session.ended.is_set():
            raise self._core.not_connected()
        return session

    @property
    def registrations(self) -> int:
        """How many registrations succeeded (each reconnection adds one, and each update)."""
        return self._core.registrations

    @property
    def stats(self) -> Dict[str, int]:
        """Counters: ``pings``, ``reads``, ``writes`` (commands answered),
        ``late`` (commands whose deadline passed before they could be handled:
        not handled), ``answers_dropped`` (answers the daemon no longer waited
        for), ``registrations``, ``sessions``, ``reconnects``."""
        with self._guard:
            return self._core.stats

    def _count(self, name: str) -> None:
        with self._guard:
            self._core.count(name)

    @property
    def accessories(self) -> List[object]:
        """The accessories as they are registered now (copies)."""
        with self._guard:
            return [accessory_message(a) for a in self._core.accessories.values()]

    @property
    def refs(self) -> List[Ref]:
        """Every characteristic registered, as refs."""
        with self._guard:
            return list(self._core.table.ids)

    def id_of(self, ref) -> Optional[int]:
        """The daemon's id of a characteristic, once registered."""
        with self._guard:
            return self._core.table.ids.get(Ref(*ref))

    def ref_of(self, characteristic_id: int) -> Optional[Ref]:
        with self._guard:
            return self._core.table.refs.get(characteristic_id)

    def accessory_id(self, key: str) -> Optional[int]:
        """The daemon's id of an accessory, once registered."""
        with self._guard:
            return self._core.table.accessory_ids.get(key)

    def characteristic(self, ref):
        """The ``pb.Characteristic`` as last registered (format, range, …), or None."""
        with self._guard:
            return self._core.table.characteristic(ref)
