"""Home Assistant's commands as homed writes, on a thread and a connection of
their own (named after the bridge: the writes' origin in homed's events), so a
slow write never holds up the subscription or the MQTT thread."""

from __future__ import annotations

import json
import logging
import queue
import threading
from typing import Callable, Optional, Tuple

from homed import Client, HomedError, Unavailable, pb

from .discovery import Entity
from .model import plain
from .payloads import BadCommand, writes_for

log = logging.getLogger("homed-mqtt")

__all__ = ["CommandWriter", "plan"]

_CODE_NAMES = {number: name for name, number in pb.ENUMS["StatusCode"].items()}
QUEUE_LIMIT = 10000


class CommandWriter:
    """`submit(topic, object id, field, payload)` from any thread. `lookup(topic,
    object id, field, payload)`, called on the writer's thread, gives (entity,
    writes) as `plan` makes them from what the bridge holds (writes None:
    nothing to write, already said in the log)."""

    def __init__(self, socket_path: Optional[str], client_name: str,
                 lookup: Callable[[str, str, str, bytes], Tuple[Optional[Entity], Optional[dict]]]):
        self.socket_path = socket_path
        self.client_name = client_name
        self.lookup = lookup
        self.queue: "queue.Queue" = queue.Queue(maxsize=QUEUE_LIMIT)
        self.count = 0
        self.thread = threading.Thread(target=self._run, name="homed-mqtt-commands", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.queue.put(None)

    def submit(self, topic: str, object_id: str, field: str, payload: bytes) -> None:
        try:
            self.queue.put_nowait((topic, object_id, field, payload))
        except queue.Full:
            log.error("%s: command %r dropped: %d commands are waiting for homed", topic, payload[:80], QUEUE_LIMIT)

    def _run(self) -> None:
        client: Optional[Client] = None
        while True:
            item = self.queue.get()
            if item is None:
                break
            self.count += 1
            client = self._apply(client, *item)
        if client is not None:
            client.close()

    def _apply(self, client: Optional[Client], topic: str, object_id: str, field: str,
               payload: bytes) -> Optional[Client]:
        """One command; returns the connection to use for the next."""
        entity, writes = self.lookup(topic, object_id, field, payload)
        if entity is None or writes is None:
            return client  # logged by lookup
        try:
            if client is None:
                client = Client.connect(self.socket_path, client_name=self.client_name, call_timeout=10)
            response = client.write(writes)
        except (Unavailable, OSError) as error:
            log.error("%s: entity %s: the write could not reach homed (%s); dropped", topic, entity.label, error)
            if client is not None:
                client.close()
            return None
        except HomedError as error:  # the call refused whole (a role without writes, say)
            log.error("%s: entity %s: homed refused the write: %s", topic, entity.label, error)
            return client
        roles = {char.id: role for role, char in entity.chars.items()}
        for result in response.results:
            if result.code != pb.OK:
                cid = result.characteristic_id
                log.error("%s: entity %s: homed refused %s (characteristic %d) = %s: %s: %s", topic, entity.label,
                          roles.get(cid, "?"), cid, json.dumps(plain(writes[cid])),
                          _CODE_NAMES.get(result.code, str(result.code)), result.message)
        return client


def plan(entity: Optional[Entity], topic: str, object_id: str, field: str, payload: bytes, values: dict):
    """(entity, writes) for a command, or (entity or None, None) when nothing is
    to be written — said in the log with the topic, the entity and the payload."""
    if entity is None:
        log.warning("%s: no entity %r is exported (payload %r); nothing written", topic, object_id, payload[:80])
        return None, None
    try:
        return entity, writes_for(entity, field, payload, values)
    except BadCommand as why:
        log.error("%s: entity %s: bad command %r: %s; nothing written", topic, entity.label, payload[:80], why)
        return entity, None
