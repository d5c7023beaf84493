"""A replica of homed's home: built from ``GetHome``, kept by a subscription's
messages, named the way homectl names things. No I/O: the caller makes the
calls, feeds the answers in, and asks the replica what to call next.

    home = homed.home.Home()
    home.load(client.get_home())                     # GetHome, put together from its pages
    request = home.resume(pb.SubscribeRequest())     # from where the replica stands
    for message in client.subscribe(request):
        changes = home.apply(message)                # values, reachability, layout
        if home.needs_load:                          # a layout change, a resync
            home.load(client.get_home())
        home.value(home.resolve_characteristic("Kitchen/Lamp/Brightness"))

The rules (docs/notifications.md):

- ``load`` takes a whole ``GetHomeResponse``: the state after every event up to
  its ``seq``. Values and reachability the replica got from events above that
  ``seq`` are newer than the response's, and kept; events at or below it are
  already in it, and ``apply`` skips them. So a load is never a step back, whatever
  the order in which the answer and the stream's messages arrive.
- ``apply`` takes every ``SubscribeResponse`` as received: the replica's
  ``cursor`` (a :class:`homed.StreamCursor`) drops what a resume repeats, and
  ``resume(request)`` sets a request to resume from it. A ``RESYNC`` marker (a
  restarted daemon, events no longer held) starts the journal anew: the snapshot
  pages that follow are applied, and the home must be loaded again (ids may
  name other objects now).
- Layout events are applied as far as they tell (a rename, a move, a removal, a
  room or zone added); what they do not carry (an accessory's services, a
  trigger's new settings) comes with the next load, which ``needs_load`` asks for.

The objects are the schema's own messages (``pb.Home``, ``pb.Accessory``,
``pb.Characteristic``, …), kept current in place: a characteristic's ``value``
and an accessory's ``reachable`` are what the last event said. Treat them as
read-only; the replica replaces them on a load.

Paths are homectl's (Sources/HomeModel/Graph/HomeGraph+Paths.swift and
+Lookup.swift): ``resolve_path("Living Room/Lamp/On")``, ``path_of(id)``, and
the messages and status codes of a name that matches nothing or several things.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Set, Tuple

from . import proto as pb
from .cursor import StreamCursor

__all__ = ["Home", "Changes", "PathError", "plain", "quoted"]


def plain(value) -> object:
    """A ``pb.Value``'s content (``True``, ``40``, ``"text"``, ``b"data"``), None when it holds nothing."""
    if value is None:
        return None
    kind = value.WhichOneof("kind")
    return None if kind is None else getattr(value, kind)


class PathError(Exception):
    """A name that resolves to nothing, or to several things: homectl's message and
    status code (``pb.NOT_FOUND``, ``pb.INVALID_ARGUMENT``)."""

    def __init__(self, code: int, message: str, depth: int = 0):
        super().__init__(message)
        self.code, self.message, self.depth = code, message, depth


class Changes:
    """What one message changed in the replica.

    - ``events``: the events applied, in order (those the loaded home did not
      already hold): values, reachability, layout, primary home, scenes run,
      triggers fired, audit notes.
    - ``earlier``: the message's other new events, at or below the loaded home's
      ``seq``: their state is in the home already, but an occurrence among them
      (a button press) still happened, and only the stream tells it.
    - ``values``: ids of the characteristics whose value an event or a snapshot page set.
    - ``reachability``: ids of the accessories whose reachability an event set.
    - ``layout``: a layout (or primary home) event came.
    - ``resync``: the message was a ``RESYNC`` marker.
    """

    __slots__ = ("events", "earlier", "values", "reachability", "layout", "resync")

    def __init__(self):
        self.events: List = []
        self.earlier: List = []
        self.values: Set[int] = set()
        self.reachability: Set[int] = set()
        self.layout = False
        self.resync = False

    def __bool__(self) -> bool:
        return bool(self.events or self.values or self.layout or self.resync)

    def __repr__(self) -> str:
        return (f"Changes(events={len(self.events)}, earlier={len(self.earlier)}, values={sorted(self.values)}, "
                f"reachability={sorted(self.reachability)}, layout={self.layout}, resync={self.resync})")


# Which repeated field of pb.Home holds each kind of object a home holds directly.
_HOME_FIELDS = {pb.OBJECT_ROOM: "rooms", pb.OBJECT_ZONE: "zones", pb.OBJECT_ACCESSORY: "accessories",
                pb.OBJECT_SERVICE_GROUP: "service_groups", pb.OBJECT_ACTION_SET: "action_sets",
                pb.OBJECT_TRIGGER: "triggers"}
_KIND_NAMES = {pb.OBJECT_HOME: "home", pb.OBJECT_ROOM: "room", pb.OBJECT_ZONE: "zone",
               pb.OBJECT_ACCESSORY: "accessory", pb.OBJECT_SERVICE: "service",
               pb.OBJECT_CHARACTERISTIC: "characteristic", pb.OBJECT_SERVICE_GROUP: "service group",
               pb.OBJECT_ACTION_SET: "action set", pb.OBJECT_TRIGGER: "trigger"}


def _with_article(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


class Home:
    """The replica. Empty until the first :meth:`load`."""

    def __init__(self):
        #: The journal the replica's sequence numbers belong to ("" before anything came).
        self.journal_id = ""
        #: The ``seq`` of the last GetHome loaded (None before the first).
        self.loaded_seq: Optional[int] = None
        #: The highest sequence number the replica reflects: a load's, an event's,
        #: or a marker's that says everything the subscription selects up to it was sent.
        self.seq = 0
        #: Where the subscription stands: ``apply`` feeds it, ``resume`` uses it.
        self.cursor = StreamCursor()
        #: Homes by id, in the daemon's order (``order``), as ``pb.Home`` messages.
        self.homes: Dict[int, object] = {}
        self.order: List[int] = []
        self.rooms: Dict[int, object] = {}
        self.zones: Dict[int, object] = {}
        self.accessories: Dict[int, object] = {}
        self.services: Dict[int, object] = {}
        self.characteristics: Dict[int, object] = {}
        self.service_groups: Dict[int, object] = {}
        self.action_sets: Dict[int, object] = {}
        self.triggers: Dict[int, object] = {}
        self._home_of: Dict[int, int] = {}        # any object below a home -> its home
        self._accessory_of: Dict[int, int] = {}   # service or characteristic -> its accessory
        self._service_of: Dict[int, int] = {}     # characteristic -> its service
        self._value_seq: Dict[int, int] = {}      # characteristic -> seq of the event that set its value
        self._reach_seq: Dict[int, int] = {}      # accessory -> seq of the event that set its reachability
        self._early: Dict[int, Tuple[int, object, int]] = {}  # unknown characteristic -> (seq, value, time)
        self._early_reach: Dict[int, Tuple[int, bool]] = {}
        self._layout_seq = 0                      # the last layout event's seq (0: none since the load)
        self._resynced = False                    # a RESYNC came after the last load

    # -- feeding it ----------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self.loaded_seq is not None

    @property
    def needs_load(self) -> bool:
        """True when only a GetHome can bring the replica up to date: never loaded,
        a layout event newer than the last load, or a resync since it."""
        return self.loaded_seq is None or self._resynced or self._layout_seq > self.loaded_seq

    def resume(self, request):
        """``request`` (a ``pb.SubscribeRequest``) set to resume where the replica
        stands: after its cursor's point, else after the loaded home's ``seq``."""
        return self.cursor.resume(request)

    def load(self, response) -> bool:
        """Takes in a whole ``GetHomeResponse`` (every page put together, as
        ``client.get_home()`` gives it; every home, or the one the replica follows).
        The replica keeps the response's messages and changes them: give it one
        nothing else uses. Returns False, and changes nothing, for a response
        older than the one loaded last (two loads whose answers crossed)."""
        # Within one journal, sequence numbers compare: what the replica got
        # from events above the response's seq is newer than the response.
        same_journal = bool(self.journal_id) and response.journal_id == self.journal_id
        if same_journal and self.loaded_seq is not None and not self._resynced and response.seq < self.loaded_seq:
            return False
        kept: Dict[int, Tuple[object, int, int]] = {}
        kept_reach: Dict[int, Tuple[bool, int]] = {}
        if same_journal:
            # Newer than the response: what events above its seq said.
            for cid, seq in self._value_seq.items():
                char = self.characteristics.get(cid)
                if seq > response.seq and char is not None:
                    kept[cid] = (char.value if char.HasField("value") else None, char.last_updated_ms, seq)
            for aid, seq in self._reach_seq.items():
                accessory = self.accessories.get(aid)
                if seq > response.seq and accessory is not None:
                    kept_reach[aid] = (accessory.reachable, seq)
            for cid, (seq, value, when) in self._early.items():
                if seq > response.seq and kept.get(cid, (None, 0, 0))[2] < seq:
                    kept[cid] = (value, when, seq)
            for aid, (seq, reachable) in self._early_reach.items():
                if seq > response.seq and kept_reach.get(aid, (None, 0))[1] < seq:
                    kept_reach[aid] = (reachable, seq)
        else:
            self._layout_seq = 0
        self.journal_id = response.journal_id
        self._index(list(response.homes))
        self._value_seq, self._reach_seq, self._early, self._early_reach = {}, {}, {}, {}
        for cid, (value, when, seq) in kept.items():
            char = self.characteristics.get(cid)
            if char is not None:
                _set_value(char, value, when)
                self._value_seq[cid] = seq
        for aid, (reachable, seq) in kept_reach.items():
            if aid in self.accessories:
                self.accessories[aid].reachable = reachable
                self._reach_seq[aid] = seq
        self.loaded_seq = response.seq
        self.seq = max(self.seq, response.seq) if same_journal else response.seq
        self._resynced = False
        if self.cursor.resume_seq is None or self.cursor.journal_id != response.journal_id:
            # Nothing followed yet, or in another journal: the subscription
            # starts where this home stands.
            self.cursor = StreamCursor(response.journal_id, response.seq)
        return True

    def apply(self, message) -> Changes:
        """Takes in one ``SubscribeResponse``, as received; returns what it changed."""
        changes = Changes()
        events = self.cursor.accept(message)
        kind = message.marker.kind if message.HasField("marker") else pb.MARKER_NONE
        if kind == pb.MARKER_RESYNC:
            # Another journal, or one that lost what we missed: nothing of the
            # old numbering compares with the new, and ids may name other objects.
            changes.resync = True
            self._resynced = True
            self.journal_id = message.journal_id
            self.seq = message.marker.seq
            self._value_seq, self._reach_seq, self._early, self._early_reach = {}, {}, {}, {}
            self._layout_seq = 0
        elif message.journal_id and message.journal_id != self.journal_id:
            if self.journal_id and self.loaded_seq is not None:
                # Another journal without a resync marker (a subscription made
                # afresh after the daemon restarted): the loaded home was another's.
                self._resynced = True
                self._value_seq, self._reach_seq, self._early, self._early_reach = {}, {}, {}, {}
                self._layout_seq = 0
            self.journal_id = message.journal_id
            self.seq = 0
        if kind in (pb.MARKER_SUBSCRIBED, pb.MARKER_SNAPSHOT_END, pb.MARKER_HEARTBEAT):
            # Everything the subscription selects up to there has been sent.
            self.seq = max(self.seq, message.marker.seq)
        skip_to = self.loaded_seq if self.loaded_seq is not None and not self._resynced else 0
        removed: Dict[int, int] = {}
        if message.snapshot:
            at = message.marker.seq if kind != pb.MARKER_NONE else self.cursor.highest_seq or 0
            for char in message.snapshot:
                if at > skip_to or not skip_to:
                    self._set(char.id, char.value if char.HasField("value") else None, char.last_updated_ms, at)
                    changes.values.add(char.id)
        for event in events:
            if event.seq <= skip_to:
                changes.earlier.append(event)  # already in the home loaded at loaded_seq
                continue
            self.seq = max(self.seq, event.seq)
            body = event.WhichOneof("body")
            if body == "value":
                change = event.value
                self._set(change.characteristic_id, change.value, event.time_ms, event.seq)
                changes.values.add(change.characteristic_id)
            elif body == "reachability":
                aid = event.reachability.accessory_id
                accessory = self.accessories.get(aid)
                if accessory is None:
                    self._early_reach[aid] = (event.seq, event.reachability.reachable)
                else:
                    accessory.reachable = event.reachability.reachable
                    self._reach_seq[aid] = event.seq
                changes.reachability.add(aid)
            elif body == "layout":
                if event.layout.action == pb.LAYOUT_REMOVED:
                    removed[event.layout.object_id] = event.layout.object
                else:
                    if removed:
                        self._remove(removed)  # before what comes after them
                        removed = {}
                    self._apply_layout(event.layout)
                self._layout_seq = event.seq
                changes.layout = True
            elif body == "primary_home_id":
                for home in self.homes.values():
                    home.primary = home.id == event.primary_home_id
                changes.layout = True
            changes.events.append(event)
        if removed:
            self._remove(removed)
        return changes

    def written(self, cid: int, value, seq: int) -> bool:
        """This connection's write of ``value`` (a ``pb.Value``, as the write sent
        it) that took effect at ``seq`` (its result's ``seq``), for a subscription
        that leaves out its own changes (``exclude_own``): applied as its event
        would have been. False, and nothing changed, when it changed nothing (seq
        0) or the replica holds a newer value."""
        if not seq or seq <= self._value_seq.get(cid, 0) or seq <= self._early.get(cid, (0,))[0]:
            return False
        if self.loaded_seq is not None and not self._resynced and seq <= self.loaded_seq:
            return False
        char = self.characteristics.get(cid)
        self._set(cid, value, char.last_updated_ms if char is not None else 0, seq)
        return True

    def _set(self, cid: int, value, when: int, seq: int) -> None:
        char = self.characteristics.get(cid)
        if char is None:
            # Not in the home yet (an accessory added since the load): kept for
            # the load that brings it, in case that load is older than this value.
            self._early[cid] = (seq, value, when)
            return
        _set_value(char, value, when)
        self._value_seq[cid] = seq

    def _apply_layout(self, change) -> None:
        oid, name = change.object_id, change.name
        if change.action == pb.LAYOUT_MOVED and change.object == pb.OBJECT_ACCESSORY:
            if oid in self.accessories and change.parent_id:
                self.accessories[oid].room_id = change.parent_id
        elif change.action == pb.LAYOUT_UPDATED and name:
            target = self.object(oid)
            if target is not None and change.object != pb.OBJECT_CHARACTERISTIC and hasattr(target, "name"):
                target.name = name
        elif change.action == pb.LAYOUT_ADDED and oid not in self._home_of and oid not in self.homes:
            home = self.homes.get(change.home_id)
            if change.object == pb.OBJECT_HOME:
                added = pb.Home(id=oid, name=name)
                self.homes[oid] = added
                self.order.append(oid)
            elif home is not None and change.object == pb.OBJECT_ROOM:
                self.rooms[oid] = _appended(home.rooms, id=oid, name=name, home_id=home.id)
                self._home_of[oid] = home.id
            elif home is not None and change.object == pb.OBJECT_ZONE:
                self.zones[oid] = _appended(home.zones, id=oid, name=name, home_id=home.id)
                self._home_of[oid] = home.id
            # An accessory, service or characteristic added: its content comes with the load.

    def _remove(self, removed: Dict[int, int]) -> None:
        """Takes out the objects of one message's removals ({id: ObjectKind}) with
        what they hold: each container is scanned once however many of its items
        go (a provider removing a thousand accessories sends a thousand events)."""
        containers: Dict[int, Tuple[object, Set[int]]] = {}

        def take(repeated, oid: int) -> None:
            containers.setdefault(id(repeated), (repeated, set()))[1].add(oid)

        gone: List[object] = []
        for oid, kind in removed.items():
            if kind == pb.OBJECT_HOME:
                home = self.homes.pop(oid, None)
                if home is not None:
                    self.order.remove(oid)
                    gone.extend(list(home.rooms) + list(home.zones) + list(home.accessories)
                                + list(home.service_groups) + list(home.action_sets) + list(home.triggers))
                continue
            target = self.object(oid)
            if target is None:
                continue
            if kind == pb.OBJECT_CHARACTERISTIC:
                service = self.services.get(self._service_of.get(oid, 0))
                if service is not None:
                    take(service.characteristics, oid)
            elif kind == pb.OBJECT_SERVICE:
                accessory = self.accessories.get(self._accessory_of.get(oid, 0))
                if accessory is not None:
                    take(accessory.services, oid)
            elif kind in _HOME_FIELDS:
                home = self.homes.get(self._home_of.get(oid, 0))
                if home is not None:
                    take(getattr(home, _HOME_FIELDS[kind]), oid)
            else:
                continue
            gone.append(target)
        for repeated, ids in containers.values():
            for index in [i for i, item in enumerate(repeated) if item.id in ids][::-1]:
                del repeated[index]
        for obj in gone:
            self._forget(obj)

    def _forget(self, obj) -> None:
        for table in (self.rooms, self.zones, self.accessories, self.services, self.characteristics,
                      self.service_groups, self.action_sets, self.triggers, self._home_of, self._accessory_of,
                      self._service_of, self._value_seq, self._reach_seq):
            table.pop(obj.id, None)
        for service in getattr(obj, "services", ()):
            self._forget(service)
        for char in getattr(obj, "characteristics", ()):
            self._forget(char)

    def _index(self, homes: List) -> None:
        self.homes = {h.id: h for h in homes}
        self.order = [h.id for h in homes]
        self.rooms, self.zones, self.accessories, self.services, self.characteristics = {}, {}, {}, {}, {}
        self.service_groups, self.action_sets, self.triggers = {}, {}, {}
        self._home_of, self._accessory_of, self._service_of = {}, {}, {}
        for home in homes:
            for table, objects in ((self.rooms, home.rooms), (self.zones, home.zones),
                                   (self.service_groups, home.service_groups), (self.action_sets, home.action_sets),
                                   (self.triggers, home.triggers)):
                for obj in objects:
                    table[obj.id] = obj
                    self._home_of[obj.id] = home.id
            for accessory in home.accessories:
                self.accessories[accessory.id] = accessory
                self._home_of[accessory.id] = home.id
                for service in accessory.services:
                    self.services[service.id] = service
                    self._home_of[service.id] = home.id
                    self._accessory_of[service.id] = accessory.id
                    for char in service.characteristics:
                        self.characteristics[char.id] = char
                        self._home_of[char.id] = home.id
                        self._accessory_of[char.id] = accessory.id
                        self._service_of[char.id] = service.id

    # -- reading it ----------------------------------------------------------------

    def ordered_homes(self) -> List:
        return [self.homes[h] for h in self.order]

    def value(self, cid: int):
        """The characteristic's current ``pb.Value``, None when it has none (or is unknown)."""
        char = self.characteristics.get(cid)
        return char.value if char is not None and char.HasField("value") else None

    def object(self, oid: int):
        """The message of any object by id, None when unknown."""
        for table in (self.homes, self.rooms, self.accessories, self.services, self.characteristics, self.zones,
                      self.service_groups, self.action_sets, self.triggers):
            found = table.get(oid)
            if found is not None:
                return found
        return None

    def kind_of(self, oid: int) -> Optional[str]:
        """"home", "room", "zone", "accessory", "service", "characteristic",
        "service group", "action set", "trigger", or None."""
        for kind, table in (("home", self.homes), ("room", self.rooms), ("accessory", self.accessories),
                            ("service", self.services), ("characteristic", self.characteristics),
                            ("zone", self.zones), ("service group", self.service_groups),
                            ("action set", self.action_sets), ("trigger", self.triggers)):
            if oid in table:
                return kind
        return None

    def home_of(self, oid: int) -> Optional[object]:
        """The home any object is in (a home is its own)."""
        return self.homes.get(oid) or self.homes.get(self._home_of.get(oid, 0))

    def accessory_of(self, oid: int) -> Optional[object]:
        """The accessory of a service or characteristic (an accessory is its own)."""
        return self.accessories.get(oid) or self.accessories.get(self._accessory_of.get(oid, 0))

    def service_of(self, cid: int) -> Optional[object]:
        return self.services.get(self._service_of.get(cid, 0))

    def room_of(self, accessory) -> Optional[object]:
        """The room an accessory (a message or an id) is in: its home's default room when unassigned."""
        if isinstance(accessory, int):
            accessory = self.accessories.get(accessory)
        if accessory is None:
            return None
        return self.rooms.get(self._room_id(accessory))

    def _room_id(self, accessory) -> int:
        if accessory.room_id:
            return accessory.room_id
        home = self.home_of(accessory.id)
        return home.default_room_id if home is not None else 0

    # -- paths: homectl's names ------------------------------------------------------

    def segment(self, service) -> str:
        """A service's part of a path: its type's name, or its own name when its
        accessory has several services of that type."""
        accessory = self.accessory_of(service.id)
        siblings = list(accessory.services) if accessory is not None else [service]
        same = [s for s in siblings if s.type == service.type and s.type_name == service.type_name]
        return service.name if len(same) > 1 else service.type_name

    def path_of(self, oid: int) -> Optional[str]:
        """homectl's path of an object: ``Home/Room/Accessory/Service/Characteristic``,
        shorter higher up; ``Home/Name`` for zones, groups, scenes and triggers."""
        if oid in self.homes:
            return self.homes[oid].name
        if oid in self.rooms:
            home = self.home_of(oid)
            return f"{home.name}/{self.rooms[oid].name}" if home is not None else None
        if oid in self.accessories:
            above = self.path_of(self._room_id(self.accessories[oid]))
            return f"{above}/{self.accessories[oid].name}" if above else None
        if oid in self.services:
            above = self.path_of(self._accessory_of.get(oid, 0))
            return f"{above}/{self.segment(self.services[oid])}" if above else None
        if oid in self.characteristics:
            above = self.path_of(self._service_of.get(oid, 0))
            return f"{above}/{self.characteristics[oid].type_name}" if above else None
        for table in (self.zones, self.service_groups, self.action_sets, self.triggers):
            if oid in table:
                home = self.home_of(oid)
                return f"{home.name}/{table[oid].name}" if home is not None else None
        return None

    def resolve_path(self, path: str) -> int:
        """The id a path names (homectl's ``resolve(path:)``): an id; ``Room/Accessory``;
        ``Room/Accessory/Characteristic`` (or a service); ``Room/Accessory/Service/Characteristic``;
        any of these after a home's name; names without regard to case. Raises :class:`PathError`."""
        if not path:
            raise PathError(pb.INVALID_ARGUMENT, "an empty path names nothing")
        if _digits(path):
            if self.kind_of(int(path)) is None:
                raise PathError(pb.NOT_FOUND, f"no object with id {path}")
            return int(path)
        parts = path.split("/")
        if any(not p for p in parts):
            raise PathError(pb.INVALID_ARGUMENT, f"the path {quoted(path, 200)} has an empty part")
        if not self.homes:
            raise PathError(pb.NOT_FOUND, f"there are no homes, so nothing is named {quoted(path)}")
        homes = self.ordered_homes()
        home = next((h for h in homes if _same_name(h.name, parts[0])), None)
        if home is not None:
            return self._resolve(parts[1:], home, path)
        matches, deepest = [], None
        for home in homes:
            try:
                matches.append((home, self._resolve(parts, home, path)))
            except PathError as error:
                if deepest is None or error.depth > deepest.depth:
                    deepest = error
        if len(matches) == 1:
            return matches[0][1]
        if not matches:
            raise deepest or PathError(pb.NOT_FOUND, f"nothing is named {quoted(path)}")
        candidates = [f"{h.name}/{path} (id {oid})" for h, oid in matches]
        raise PathError(pb.INVALID_ARGUMENT, f"{quoted(path)} names objects in {len(matches)} homes: "
                                             f"{_listed(candidates)}; start the path with the home's name")

    def _resolve(self, parts: List[str], home, path: str) -> int:
        if not parts:
            return home.id
        if len(parts) > 4:
            raise PathError(pb.INVALID_ARGUMENT, f"the path {quoted(path, 200)} has too many parts; the longest form "
                                                 f"is Home/Room/Accessory/Service/Characteristic", 4)
        room = next((r for r in home.rooms if _same_name(r.name, parts[0])), None)
        if room is None:
            raise PathError(pb.NOT_FOUND, f"home {quoted(home.name)} has no room named {quoted(parts[0])}; its rooms "
                                          f"are {_listed([r.name for r in home.rooms])}", 0)
        if len(parts) == 1:
            return room.id
        in_room = [a for a in home.accessories if self._room_id(a) == room.id]
        named = [a for a in in_room if _same_name(a.name, parts[1])]
        if not named:
            rest = "it has none" if not in_room else "its accessories are " + _listed([a.name for a in in_room])
            raise PathError(pb.NOT_FOUND, f"room {quoted(room.name)} has no accessory named {quoted(parts[1])}; "
                                          f"{rest}", 1)
        if len(named) > 1:
            raise PathError(pb.INVALID_ARGUMENT, f"{quoted(parts[1])} names {len(named)} accessories in room "
                                                 f"{quoted(room.name)} ({_ids(named)}); use an id", 1)
        accessory = named[0]
        if len(parts) == 2:
            return accessory.id
        if len(parts) == 3:
            return self._char_or_service(parts[2], accessory, room)
        return self._char_of_service(parts[3], parts[2], accessory)

    @staticmethod
    def _matching_services(services, part: str) -> List:
        # Type first: a service's name defaults to its accessory's, so in
        # "Thermostat/Thermostat" the part means the Thermostat service.
        by_type = [s for s in services if _same_type_name(s.type_name, part)]
        return by_type or [s for s in services if _same_name(s.name, part)]

    def _char_or_service(self, part: str, accessory, room) -> int:
        pairs = [(s, c) for s in accessory.services for c in s.characteristics]
        matching = [(s, c) for s, c in pairs if _same_type_name(c.type_name, part)]
        if len(matching) == 1:
            return matching[0][1].id
        if len(matching) > 1:
            type_name = matching[0][1].type_name
            paths = [f"{room.name}/{accessory.name}/{self.segment(s)}/{type_name} (id {c.id})" for s, c in matching]
            raise PathError(pb.INVALID_ARGUMENT, f"accessory {quoted(accessory.name)} has {len(matching)} "
                                                 f"{type_name} characteristics; name the service: {_listed(paths)}", 2)
        services = self._matching_services(accessory.services, part)
        if len(services) == 1:
            return services[0].id
        if len(services) > 1:
            raise PathError(pb.INVALID_ARGUMENT, f"{quoted(part)} names {len(services)} services of accessory "
                                                 f"{quoted(accessory.name)} ({_ids(services)}); use an id", 2)
        names: List[str] = []
        for _, c in pairs:
            if c.type_name not in names:
                names.append(c.type_name)
        raise PathError(pb.NOT_FOUND, f"accessory {quoted(accessory.name)} has no characteristic or service named "
                                      f"{quoted(part)}; its characteristics are {_listed(names, 30)}", 2)

    def _char_of_service(self, part: str, service_part: str, accessory) -> int:
        services = self._matching_services(accessory.services, service_part)
        if not services:
            described = [f"{s.type_name} ({quoted(s.name)})" for s in accessory.services]
            raise PathError(pb.NOT_FOUND, f"accessory {quoted(accessory.name)} has no service named "
                                          f"{quoted(service_part)}; its services are {_listed(described)}", 2)
        candidates = [c for s in services for c in s.characteristics]
        matching = [c for c in candidates if _same_type_name(c.type_name, part)]
        if len(matching) == 1:
            return matching[0].id
        if len(matching) > 1:
            raise PathError(pb.INVALID_ARGUMENT, f"{quoted(service_part + '/' + part)} names {len(matching)} "
                                                 f"characteristics of accessory {quoted(accessory.name)} "
                                                 f"({_ids(matching)}); use an id", 3)
        raise PathError(pb.NOT_FOUND, f"service {quoted(service_part)} of accessory {quoted(accessory.name)} has no "
                                      f"characteristic named {quoted(part)}; its characteristics are "
                                      f"{_listed([c.type_name for c in candidates], 30)}", 3)

    def _wrong_kind(self, text: str, oid: int, expected: str) -> PathError:
        what = self.kind_of(oid)
        return PathError(pb.INVALID_ARGUMENT, f"{quoted(text)} is {_with_article(what) if what else 'an object'} "
                                              f"(id {oid}), not {_with_article(expected)}")

    def resolve_home(self, text: Optional[str] = None) -> int:
        """A home by id or name (without regard to case); None: the primary home."""
        if text is None:
            primary = next((h.id for h in self.ordered_homes() if h.primary), None)
            if primary is None:
                raise PathError(pb.NOT_FOUND, "there are no homes; add one with: homectl homes add NAME")
            return primary
        if _digits(text):
            if int(text) not in self.homes:
                raise PathError(pb.NOT_FOUND, f"no home with id {text}")
            return int(text)
        for home in self.ordered_homes():
            if home.name.lower() == text.lower():
                return home.id
        raise PathError(pb.NOT_FOUND, f"no home is named {quoted(text)}; the homes are "
                                      f"{_names([h.name for h in self.ordered_homes()])}")

    def resolve_room(self, text: str, home_id: Optional[int] = None) -> int:
        """A room by id, path (``Demo Home/Kitchen``) or name, in ``home_id`` or in every home."""
        if _digits(text):
            if int(text) not in self.rooms:
                raise PathError(pb.NOT_FOUND, f"no room with id {text}")
            return int(text)
        if "/" in text:
            oid = self.resolve_path(text)
            if oid not in self.rooms:
                raise self._wrong_kind(text, oid, "room")
            return oid
        return self._unique(text, "room", [(r.id, r.home_id or h.id, r.name)
                                           for h in self._scope(home_id) for r in h.rooms], home_id)

    def resolve_named(self, text: str, kind: str, home_id: Optional[int] = None) -> int:
        """A zone, service group, action set or trigger (``kind``: "zone", "service group",
        "action set", "trigger"): an id, ``Home/Name``, or a name in ``home_id`` or every home."""
        field = {"zone": "zones", "service group": "service_groups", "action set": "action_sets",
                 "trigger": "triggers", "room": "rooms"}[kind]
        if _digits(text):
            if self.kind_of(int(text)) != kind:
                raise PathError(pb.NOT_FOUND, f"no {kind} with id {text}")
            return int(text)
        scope, name = self._scope(home_id), text
        slash = text.find("/")
        if slash >= 0:
            home = next((h for h in self.ordered_homes() if h.name.lower() == text[:slash].lower()), None)
            if home is not None:
                scope, name = [home], text[slash + 1:]
        candidates = [(o.id, h.id, o.name) for h in scope for o in getattr(h, field)]
        return self._unique(name, kind, candidates, scope[0].id if len(scope) == 1 else None)

    def _scope(self, home_id: Optional[int]) -> List:
        if home_id is None:
            return self.ordered_homes()
        return [self.homes[home_id]] if home_id in self.homes else []

    def _unique(self, name: str, kind: str, candidates, home_id: Optional[int]) -> int:
        matches = [c for c in candidates if c[2].lower() == name.lower()]
        if len(matches) == 1:
            return matches[0][0]
        place = f"home {quoted(self.homes[home_id].name)}" if home_id in self.homes else "any home"
        if not matches:
            every = [c[2] for c in candidates]
            raise PathError(pb.NOT_FOUND, f"{place} has no {kind} named {quoted(name)}; there "
                                          f"{'are none' if not every else 'are ' + _names(every)}")
        shown = [f"{self.homes[h].name if h in self.homes else '?'}/{n} (id {i})" for i, h, n in matches]
        raise PathError(pb.INVALID_ARGUMENT, f"{quoted(name)} names {len(matches)} {kind}s: {_names(shown)}; "
                                             f"start with the home's name or use the id")

    def resolve_accessory(self, text: str) -> int:
        """An accessory by id, path (``Living Room/Lamp``) or a name alone that names one accessory of all homes."""
        if _digits(text):
            if int(text) not in self.accessories:
                raise PathError(pb.NOT_FOUND, f"no accessory with id {text}")
            return int(text)
        if "/" not in text:
            every = [a for h in self.ordered_homes() for a in h.accessories]
            named = [a for a in every if a.name.lower() == text.lower()]
            if len(named) == 1:
                return named[0].id
            if len(named) > 1:
                shown = [f"{self.path_of(a.id) or a.name} (id {a.id})" for a in named]
                raise PathError(pb.INVALID_ARGUMENT, f"{quoted(text)} names {len(named)} accessories: "
                                                     f"{_names(shown)}; give its room too (Room/Accessory) or its id")
            try:
                other = self.resolve_path(text)
            except PathError:
                raise PathError(pb.NOT_FOUND, f"no accessory is named {quoted(text)}; the accessories are "
                                              f"{_names(sorted((a.name for a in every), key=str.lower))}") from None
            if other not in self.accessories:
                raise self._wrong_kind(text, other, "accessory")
            return other
        oid = self.resolve_path(text)
        if oid not in self.accessories:
            raise self._wrong_kind(text, oid, "accessory")
        return oid

    def resolve_service(self, text: str) -> int:
        """A service by id or path, or an accessory meaning its primary service
        (or its one service besides AccessoryInformation)."""
        if _digits(text) and int(text) in self.services:
            return int(text)
        if _digits(text) and int(text) not in self.accessories:
            raise PathError(pb.NOT_FOUND, f"no service with id {text}")
        try:
            found = self.resolve_path(text)
            if found in self.services:
                return found
        except PathError:
            pass
        accessory = self.accessories[self.resolve_accessory(text)]
        main = [s for s in accessory.services if s.primary]
        others = [s for s in accessory.services if s.type_name != "AccessoryInformation"]
        chosen = main[0] if len(main) == 1 else others[0] if len(others) == 1 else None
        if chosen is None:
            shown = [f"{self.path_of(s.id) or s.name} (id {s.id})" for s in accessory.services]
            raise PathError(pb.INVALID_ARGUMENT, f"accessory {quoted(text)} has several services; name one: "
                                                 f"{_names(shown)}")
        return chosen.id

    def resolve_renamable(self, text: str) -> int:
        """Anything a person can rename (homectl rename): an id or a path, then an
        accessory by name, then a zone, group, scene or trigger by name."""
        if _digits(text):
            if self.kind_of(int(text)) is None:
                raise PathError(pb.NOT_FOUND, f"no object with id {text}")
            return int(text)
        try:
            return self.resolve_path(text)
        except PathError as error:
            path_error = error
        for attempt in (lambda: self.resolve_accessory(text),
                        *(lambda kind=kind: self.resolve_named(text, kind)
                          for kind in ("zone", "service group", "action set", "trigger"))):
            try:
                return attempt()
            except PathError:
                pass
        raise path_error

    def resolve_characteristic(self, path: str) -> int:
        """A path that must name a characteristic; it may also start with an
        accessory's name alone (``Lamp/On``) when that names one accessory."""
        try:
            oid = self.resolve_path(path)
        except PathError as error:
            slash = path.find("/")
            try:
                accessory_path = self.path_of(self.resolve_accessory(path[:slash])) if slash > 0 else None
            except PathError:
                accessory_path = None
            if not accessory_path:
                raise error from None
            oid = self.resolve_path(accessory_path + path[slash:])
        if oid not in self.characteristics:
            what = self.kind_of(oid)
            example = self._example_under(oid)
            example = f"{path}/{example}" if example else f"{path}/On"
            raise PathError(pb.INVALID_ARGUMENT, f"{path} is {_with_article(what) if what else 'an object'} "
                                                 f"(id {oid}), not a characteristic; add the characteristic's name, "
                                                 f"e.g. {example}")
        return oid

    def _example_under(self, oid: int) -> Optional[str]:
        if oid in self.rooms:
            for accessory in sorted((a for a in self.accessories.values() if a.room_id == oid), key=lambda a: a.id):
                rest = self._example_under(accessory.id)
                if rest:
                    return f"{accessory.name}/{rest}"
            return None
        service = self.services.get(oid)
        if oid in self.accessories:
            services = [s for s in self.accessories[oid].services if s.type_name != "AccessoryInformation"]
            service = next((s for s in services if s.primary), services[0] if services else None)
        if service is None:
            return None
        return next((c.type_name for c in service.characteristics if c.type_name != "Name"), None)


# -- helpers --------------------------------------------------------------------------

def _set_value(char, value, when: int) -> None:
    if value is None or value.WhichOneof("kind") is None:
        char.ClearField("value")
    else:
        char.value.CopyFrom(value)
    char.last_updated_ms = when


def _appended(repeated, **fields):
    item = repeated.add()
    for name, value in fields.items():
        setattr(item, name, value)
    return item


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _same_name(a: str, b: str) -> bool:
    return a == b or a.lower() == b.lower()


def _same_type_name(type_name: str, part: str) -> bool:
    # As the catalog looks names up: without case, spaces ignored.
    return type_name.lower().replace(" ", "") == part.lower().replace(" ", "")


def _ids(objects: Iterable) -> str:
    return "ids " + ", ".join(str(o.id) for o in objects)


def _listed(names: List[str], limit: int = 10) -> str:
    if not names:
        return "none"
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown


def _names(names: List[str], limit: int = 10) -> str:
    return _listed([quoted(n) for n in names], limit) if names else "none"


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or 0x7F <= code <= 0x9F


def quoted(text: str, limit: int = 40) -> str:
    """A name quoted as homed's messages quote it: escaped, cut after ``limit`` characters."""
    out = []
    for ch in text[:limit]:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif _is_control(ch):
            # A control character never reaches a terminal raw.
            out.append(f"\\u{{{ord(ch):X}}}")
        else:
            out.append(ch)
    return '"' + "".join(out) + ("…" if len(text) > limit else "") + '"'
