"""The home as a remote command sees it: homed's layout (the bucket's `layout`
key, GetHome's homes) with homectl's way of naming things, so that a remote
`get`/`set`/`watch` takes the same paths and says the same words as homectl
(Sources/HomeModel/Graph/HomeGraph+Paths.swift and +Lookup.swift are the
originals; tests/test_nats_cli.py holds the two side by side on real output).
No I/O.

    graph = Graph(homes)                   # [home.v1.Home]
    cid = graph.resolve_characteristic("Kitchen/Lamp/Brightness")
    graph.path_of(cid)                     # "Test Home/Kitchen/Lamp/Lightbulb/Brightness"
"""

from __future__ import annotations

import base64
import math
import time
from typing import Dict, List, Optional

from homed import pb

__all__ = ["Graph", "PathError", "iso_time", "value_json", "value_names", "spaced"]


class PathError(Exception):
    """A name that resolves to nothing (or to several things): homectl's message and status code."""

    def __init__(self, code: int, message: str, depth: int = 0):
        super().__init__(message)
        self.code, self.message, self.depth = code, message, depth


def quoted(text: str, limit: int = 40) -> str:
    out = []
    for ch in text[:limit]:
        out.append({'"': '\\"', "\\": "\\\\", "\n": "\\n"}.get(ch, ch if ch.isprintable() else "?"))
    return '"' + "".join(out) + ("…" if len(text) > limit else "") + '"'


def listed(names: List[str], limit: int = 10) -> str:
    if not names:
        return "none"
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown


def names_quoted(names: List[str], limit: int = 10) -> str:
    return listed([quoted(n) for n in names], limit) if names else "none"


def same_name(a: str, b: str) -> bool:
    return a == b or a.lower() == b.lower()


def same_type_name(type_name: str, part: str) -> bool:
    return type_name.lower().replace(" ", "") == part.lower().replace(" ", "")


NOUNS = {"home": "a home", "room": "a room", "accessory": "an accessory", "service": "a service",
         "characteristic": "a characteristic", "zone": "a zone", "service-group": "a service group",
         "action-set": "an action set", "trigger": "a trigger"}


class Graph:
    def __init__(self, homes):
        self.order: List[int] = [h.id for h in homes]
        self.homes = {h.id: h for h in homes}
        self.rooms, self.accessories, self.services, self.characteristics = {}, {}, {}, {}
        self.others: Dict[int, str] = {}
        for home in homes:
            for room in home.rooms:
                self.rooms[room.id] = room
            for accessory in home.accessories:
                self.accessories[accessory.id] = accessory
                for service in accessory.services:
                    self.services[service.id] = service
                    for char in service.characteristics:
                        self.characteristics[char.id] = char
            for kind, objects in (("zone", home.zones), ("service-group", home.service_groups),
                                  ("action-set", home.action_sets), ("trigger", home.triggers)):
                for obj in objects:
                    self.others[obj.id] = kind

    # -- what an id is -----------------------------------------------------------------

    def kind_of(self, oid: int) -> Optional[str]:
        for kind, table in (("home", self.homes), ("room", self.rooms), ("accessory", self.accessories),
                            ("service", self.services), ("characteristic", self.characteristics)):
            if oid in table:
                return kind
        return self.others.get(oid)

    def accessory_room(self, accessory) -> int:
        return accessory.room_id or self.homes[accessory.home_id].default_room_id if accessory.home_id in self.homes \
            else accessory.room_id

    def home_of_accessory(self, accessory) -> int:
        if accessory.home_id:
            return accessory.home_id
        return next((h.id for h in self.homes.values() if any(a.id == accessory.id for a in h.accessories)), 0)

    def segment(self, service) -> str:
        """A service's path part: its type, unless its accessory has two of that type."""
        accessory = self.accessories.get(self._service_accessory(service.id))
        siblings = list(accessory.services) if accessory else [service]
        same = [s for s in siblings if s.type == service.type and s.type_name == service.type_name]
        return service.name if len(same) > 1 else service.type_name

    def _service_accessory(self, service_id: int) -> int:
        service = self.services.get(service_id)
        for char in (service.characteristics if service else ()):
            return char.accessory_id
        for accessory in self.accessories.values():
            if any(s.id == service_id for s in accessory.services):
                return accessory.id
        return 0

    def path_of(self, oid: int) -> Optional[str]:
        if oid in self.homes:
            return self.homes[oid].name
        if oid in self.rooms:
            room = self.rooms[oid]
            home = self.homes.get(room.home_id) or next((h for h in self.homes.values()
                                                         if any(r.id == oid for r in h.rooms)), None)
            return f"{home.name}/{room.name}" if home else None
        if oid in self.accessories:
            accessory = self.accessories[oid]
            above = self.path_of(self.accessory_room(accessory))
            return f"{above}/{accessory.name}" if above else None
        if oid in self.services:
            above = self.path_of(self._service_accessory(oid))
            return f"{above}/{self.segment(self.services[oid])}" if above else None
        if oid in self.characteristics:
            char = self.characteristics[oid]
            above = self.path_of(char.service_id)
            return f"{above}/{char.type_name}" if above else None
        return None

    # -- names to ids (homectl's rules and words) --------------------------------------

    def resolve_path(self, path: str) -> int:
        if not path:
            raise PathError(pb.INVALID_ARGUMENT, "an empty path names nothing")
        if path.isdigit() and path.isascii():
            if self.kind_of(int(path)) is None:
                raise PathError(pb.NOT_FOUND, f"no object with id {path}")
            return int(path)
        parts = path.split("/")
        if any(not p for p in parts):
            raise PathError(pb.INVALID_ARGUMENT, f"the path {quoted(path, 200)} has an empty part")
        if not self.homes:
            raise PathError(pb.NOT_FOUND, f"there are no homes, so nothing is named {quoted(path)}")
        homes = [self.homes[h] for h in self.order]
        home = next((h for h in homes if same_name(h.name, parts[0])), None)
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
                                             f"{listed(candidates)}; start the path with the home's name")

    def _resolve(self, parts: List[str], home, path: str) -> int:
        if not parts:
            return home.id
        if len(parts) > 4:
            raise PathError(pb.INVALID_ARGUMENT, f"the path {quoted(path, 200)} has too many parts; the longest form "
                                                 f"is Home/Room/Accessory/Service/Characteristic", 4)
        room = next((r for r in home.rooms if same_name(r.name, parts[0])), None)
        if room is None:
            raise PathError(pb.NOT_FOUND, f"home {quoted(home.name)} has no room named {quoted(parts[0])}; its rooms "
                                          f"are {listed([r.name for r in home.rooms])}", 0)
        if len(parts) == 1:
            return room.id
        in_room = [a for a in home.accessories if self.accessory_room(a) == room.id]
        named = [a for a in in_room if same_name(a.name, parts[1])]
        if not named:
            rest = "it has none" if not in_room else "its accessories are " + listed([a.name for a in in_room])
            raise PathError(pb.NOT_FOUND, f"room {quoted(room.name)} has no accessory named {quoted(parts[1])}; "
                                          f"{rest}", 1)
        if len(named) > 1:
            raise PathError(pb.INVALID_ARGUMENT, f"{quoted(parts[1])} names {len(named)} accessories in room "
                                                 f"{quoted(room.name)} (ids {', '.join(str(a.id) for a in named)}); "
                                                 f"use an id", 1)
        accessory = named[0]
        if len(parts) == 2:
            return accessory.id
        if len(parts) == 3:
            return self._char_or_service(parts[2], accessory, room)
        return self._char_of_service(parts[3], parts[2], accessory)

    def _matching_services(self, services, part):
        by_type = [s for s in services if same_type_name(s.type_name, part)]
        return by_type or [s for s in services if same_name(s.name, part)]

    def _char_or_service(self, part, accessory, room) -> int:
        pairs = [(s, c) for s in accessory.services for c in s.characteristics]
        matching = [(s, c) for s, c in pairs if same_type_name(c.type_name, part)]
        if len(matching) == 1:
            return matching[0][1].id
        if len(matching) > 1:
            type_name = matching[0][1].type_name
            paths = [f"{room.name}/{accessory.name}/{self.segment(s)}/{type_name} (id {c.id})" for s, c in matching]
            raise PathError(pb.INVALID_ARGUMENT, f"accessory {quoted(accessory.name)} has {len(matching)} "
                                                 f"{type_name} characteristics; name the service: {listed(paths)}", 2)
        services = self._matching_services(list(accessory.services), part)
        if len(services) == 1:
            return services[0].id
        if len(services) > 1:
            raise PathError(pb.INVALID_ARGUMENT, f"{quoted(part)} names {len(services)} services of accessory "
                                                 f"{quoted(accessory.name)} (ids "
                                                 f"{', '.join(str(s.id) for s in services)}); use an id", 2)
        names: List[str] = []
        for _, c in pairs:
            if c.type_name not in names:
                names.append(c.type_name)
        raise PathError(pb.NOT_FOUND, f"accessory {quoted(accessory.name)} has no characteristic or service named "
                                      f"{quoted(part)}; its characteristics are {listed(names, 30)}", 2)

    def _char_of_service(self, part, service_part, accessory) -> int:
        services = self._matching_services(list(accessory.services), service_part)
        if not services:
            described = [f"{s.type_name} ({quoted(s.name)})" for s in accessory.services]
            raise PathError(pb.NOT_FOUND, f"accessory {quoted(accessory.name)} has no service named "
                                          f"{quoted(service_part)}; its services are {listed(described)}", 2)
        candidates = [c for s in services for c in s.characteristics]
        matching = [c for c in candidates if same_type_name(c.type_name, part)]
        if len(matching) == 1:
            return matching[0].id
        if len(matching) > 1:
            raise PathError(pb.INVALID_ARGUMENT, f"{quoted(service_part + '/' + part)} names {len(matching)} "
                                                 f"characteristics of accessory {quoted(accessory.name)} (ids "
                                                 f"{', '.join(str(c.id) for c in matching)}); use an id", 3)
        raise PathError(pb.NOT_FOUND, f"service {quoted(service_part)} of accessory {quoted(accessory.name)} has no "
                                      f"characteristic named {quoted(part)}; its characteristics are "
                                      f"{listed([c.type_name for c in candidates], 30)}", 3)

    def _wrong_kind(self, text, oid, expected) -> PathError:
        return PathError(pb.INVALID_ARGUMENT, f"{quoted(text)} is {NOUNS.get(self.kind_of(oid), 'an object')} "
                                              f"(id {oid}), not {NOUNS[expected]}")

    def resolve_home(self, text: str) -> int:
        if text.isdigit():
            if int(text) not in self.homes:
                raise PathError(pb.NOT_FOUND, f"no home with id {text}")
            return int(text)
        homes = [self.homes[h] for h in self.order]
        for home in homes:
            if home.name.lower() == text.lower():
                return home.id
        raise PathError(pb.NOT_FOUND, f"no home is named {quoted(text)}; the homes are "
                                      f"{names_quoted([h.name for h in homes])}")

    def resolve_room(self, text: str) -> int:
        if text.isdigit():
            if int(text) not in self.rooms:
                raise PathError(pb.NOT_FOUND, f"no room with id {text}")
            return int(text)
        if "/" in text:
            oid = self.resolve_path(text)
            if oid not in self.rooms:
                raise self._wrong_kind(text, oid, "room")
            return oid
        candidates = [(r, h) for h in (self.homes[i] for i in self.order) for r in h.rooms]
        matches = [(r, h) for r, h in candidates if r.name.lower() == text.lower()]
        if len(matches) == 1:
            return matches[0][0].id
        if not matches:
            raise PathError(pb.NOT_FOUND, f"any home has no room named {quoted(text)}; there are "
                                          f"{names_quoted([r.name for r, _ in candidates])}" if candidates else
                            f"any home has no room named {quoted(text)}; there are none")
        raise PathError(pb.INVALID_ARGUMENT, f"{quoted(text)} names {len(matches)} rooms: "
                                             f"{names_quoted([f'{h.name}/{r.name} (id {r.id})' for r, h in matches])}"
                                             f"; start with the home's name or use the id")

    def resolve_accessory(self, text: str) -> int:
        if text.isdigit():
            if int(text) not in self.accessories:
                raise PathError(pb.NOT_FOUND, f"no accessory with id {text}")
            return int(text)
        if "/" not in text:
            every = [a for h in self.order for a in self.homes[h].accessories]
            named = [a for a in every if a.name.lower() == text.lower()]
            if len(named) == 1:
                return named[0].id
            if len(named) > 1:
                shown = [f"{self.path_of(a.id) or a.name} (id {a.id})" for a in named]
                raise PathError(pb.INVALID_ARGUMENT, f"{quoted(text)} names {len(named)} accessories: "
                                                     f"{names_quoted(shown)}; give its room too (Room/Accessory) or "
                                                     f"its id")
            try:
                other = self.resolve_path(text)
            except PathError:
                raise PathError(pb.NOT_FOUND, f"no accessory is named {quoted(text)}; the accessories are "
                                              f"{names_quoted(sorted((a.name for a in every), key=str.lower))}") \
                    from None
            if other not in self.accessories:
                raise self._wrong_kind(text, other, "accessory")
            return other
        oid = self.resolve_path(text)
        if oid not in self.accessories:
            raise self._wrong_kind(text, oid, "accessory")
        return oid

    def resolve_characteristic(self, path: str) -> int:
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
            what = NOUNS.get(self.kind_of(oid), "an object")
            example = self._example_under(oid)
            example = f"{path}/{example}" if example else f"{path}/On"
            raise PathError(pb.INVALID_ARGUMENT, f"{path} is {what} (id {oid}), not a characteristic; add the "
                                                 f"characteristic's name, e.g. {example}")
        return oid

    def _example_under(self, oid: int) -> Optional[str]:
        if oid in self.rooms:
            for accessory in sorted((a for a in self.accessories.values() if self.accessory_room(a) == oid),
                                    key=lambda a: a.id):
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

    def readable_of(self, text: str) -> List[int]:
        """`get`'s argument: a characteristic, or every readable one of an accessory."""
        try:
            return [self.resolve_characteristic(text)]
        except PathError as error:
            first = error
        try:
            accessory = self.accessories[self.resolve_accessory(text)]
        except PathError:
            raise first from None
        readable = [c.id for s in accessory.services for c in s.characteristics if c.properties.readable]
        if not readable:
            raise PathError(pb.INVALID_ARGUMENT, f"accessory {quoted(accessory.name)} has no readable characteristic")
        return readable


# -- values as homectl's JSON shows them ------------------------------------------------

def value_json(value):
    """A home.v1.Value as homectl's -o json writes it (data as base64)."""
    kind = value.WhichOneof("kind") if value is not None else None
    if kind is None:
        return None
    if kind == "data_value":
        return base64.b64encode(value.data_value).decode()
    if kind == "float_value":
        v = value.float_value
        return v if math.isfinite(v) else None
    return getattr(value, kind)


def iso_time(ms: int) -> str:
    """homectl's time: 2026-11-26T10:13:35.831Z."""
    whole, millis = divmod(int(ms), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"


# What homectl calls enumerated values where HAP's identifier says something else
# (Sources/homectl/Output/ValueNames.swift); other names are the catalog's, spaced.
FOR_PEOPLE = {
    "ContactSensorState": {0: "Closed", 1: "Open"},
    "LockCurrentState": {0: "Unlocked", 1: "Locked", 2: "Jammed", 3: "Unknown"},
    "LockTargetState": {0: "Unlocked", 1: "Locked"},
    "LeakDetected": {0: "No leak", 1: "Leak"},
    "SmokeDetected": {0: "No smoke", 1: "Smoke"},
    "CarbonMonoxideDetected": {0: "Normal", 1: "CO detected"},
    "CarbonDioxideDetected": {0: "Normal", 1: "CO2 detected"},
    "OccupancyDetected": {0: "Not occupied", 1: "Occupied"},
    "StatusLowBattery": {0: "Normal", 1: "Low"},
}


def spaced(identifier: str) -> str:
    """"NotCharging" → "Not charging"; all-capital words stay."""
    words, current = [], ""
    for i, ch in enumerate(identifier):
        nxt = identifier[i + 1] if i + 1 < len(identifier) else ""
        prev = identifier[i - 1] if i else ""
        if ch.isupper() and current and (prev.islower() or nxt.islower()):
            words.append(current)
            current = ""
        current += ch
    if current:
        words.append(current)
    return " ".join(w if i == 0 or w.isupper() else w.lower() for i, w in enumerate(words))


def value_names(char, catalog: Dict[str, Dict[int, str]]) -> Dict[int, str]:
    """{number: person's name} of an enumerated characteristic (catalog: {type uuid: {number: HAP name}})."""
    names = {}
    for number in char.metadata.valid_values:
        name = FOR_PEOPLE.get(char.type_name, {}).get(number)
        if name is None and number in catalog.get(char.type, {}):
            name = spaced(catalog[char.type][number])
        if name is not None:
            names[number] = name
    return names


def value_name(char, value, catalog) -> Optional[str]:
    if char is None or value is None or not char.metadata.valid_values:
        return None
    kind = value.WhichOneof("kind")
    if kind not in ("int_value", "uint_value"):
        return None
    return value_names(char, catalog).get(int(getattr(value, kind)))


def parse_value(text: str, char, catalog) -> object:
    """What a person typed, in the characteristic's format (homectl's ValueParser)."""
    name = f"characteristic {char.id} ({char.type_name})"
    fmt = char.metadata.format
    if fmt == pb.FORMAT_BOOL:
        low = text.lower()
        if low in ("true", "on", "yes", "1"):
            return pb.Value(bool_value=True)
        if low in ("false", "off", "no", "0"):
            return pb.Value(bool_value=False)
        raise PathError(pb.INVALID_ARGUMENT, f"{name} takes true or false, not '{text}'")
    if fmt in (pb.FORMAT_UINT8, pb.FORMAT_UINT16, pb.FORMAT_UINT32, pb.FORMAT_UINT64):
        if text.isdigit() and text.isascii():
            return pb.Value(uint_value=int(text))
        if text.startswith("-") and text[1:].isdigit():
            return pb.Value(int_value=int(text))
        names = value_names(char, catalog)
        wanted = _squeezed(text)
        for number in char.metadata.valid_values:
            candidates = [names.get(number), catalog.get(char.type, {}).get(number)]
            if number >= 0 and any(c is not None and _squeezed(c) == wanted for c in candidates):
                return pb.Value(uint_value=number)
        if names:
            shown = ", ".join(f"{n} ({v})" for v, n in names.items())
            raise PathError(pb.INVALID_ARGUMENT, f"{name} takes one of {shown}, not '{text}'")
        raise PathError(pb.INVALID_ARGUMENT, f"{name} takes a whole number, not '{text}'")
    if fmt == pb.FORMAT_INT:
        try:
            return pb.Value(int_value=int(text))
        except ValueError:
            raise PathError(pb.INVALID_ARGUMENT, f"{name} takes a whole number, not '{text}'") from None
    if fmt == pb.FORMAT_FLOAT:
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise PathError(pb.INVALID_ARGUMENT, f"{name} takes a number, not '{text}'")
        return pb.Value(float_value=number)
    if fmt == pb.FORMAT_STRING:
        return pb.Value(string_value=text)
    try:
        return pb.Value(data_value=base64.b64decode(text + "=" * (-len(text) % 4), validate=True))
    except ValueError:
        raise PathError(pb.INVALID_ARGUMENT, f"{name} takes base64 data, not '{text}'") from None


def _squeezed(text: str) -> str:
    return "".join(ch for ch in text.lower() if not ch.isspace() and ch not in "_-")
