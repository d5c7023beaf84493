"""An HAP accessory database (the JSON of GET /accessories) as homed
accessories: one ``pb.ProvidedAccessory`` per aid, and the bindings between
homed's references and HAP's (aid, iid). No I/O here.

- Keys: the device id and the aid (``names.accessory_key``); services keyed by
  their iid. Both are stable for as long as the pairing lasts, so renames and
  restarts of either side keep the ids, rooms and scenes homed has.
- Types: a HAP type whose UUID is in the daemon's catalog is registered as
  that type, with the device's range, step, valid values and permissions as
  narrowing of the catalog's (the daemon takes narrowing only: whatever is
  wider is cut to the catalog's, and said). A characteristic type that is not
  in the catalog is a custom characteristic with the device's full metadata.
  A catalog characteristic that homed's service type does not take, and a
  service type homed does not know (homed has no custom service types), are
  left out, each with a note naming it: never registered half-way, which the
  daemon would refuse whole.
- AccessoryInformation gives the accessory's fields (the daemon builds that
  service); its Identify is bound, so homed's writes of it reach the device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from homed import pb
from homed.refs import INFORMATION_SERVICE, Ref

from . import hapvalues, names
from .catalog import Catalog, full_uuid, short_uuid

INFO = full_uuid("3E")
PROTOCOL_INFO = full_uuid("A2")  # HAPProtocolInformation: the protocol's own, nothing for a user
IDENTIFY, NAME = full_uuid("14"), full_uuid("23")
INFO_FIELDS = {full_uuid("20"): "manufacturer", full_uuid("21"): "model", full_uuid("30"): "serial_number",
               full_uuid("52"): "firmware_revision"}
MAX_LENGTH = 4_194_304  # the longest value the daemon takes

# The accessory's category from its first service, for bridged accessories
# (HAP gives a category only for the device as a whole, in its mDNS record).
CATEGORY_BY_SERVICE = {
    "Lightbulb": pb.CATEGORY_LIGHTBULB, "Switch": pb.CATEGORY_SWITCH, "Outlet": pb.CATEGORY_OUTLET,
    "Thermostat": pb.CATEGORY_THERMOSTAT, "Fan": pb.CATEGORY_FAN, "Fanv2": pb.CATEGORY_FAN,
    "GarageDoorOpener": pb.CATEGORY_GARAGE_DOOR_OPENER, "LockMechanism": pb.CATEGORY_DOOR_LOCK,
    "WindowCovering": pb.CATEGORY_WINDOW_COVERING, "Door": pb.CATEGORY_DOOR, "Window": pb.CATEGORY_WINDOW,
    "SecuritySystem": pb.CATEGORY_SECURITY_SYSTEM, "StatelessProgrammableSwitch": pb.CATEGORY_PROGRAMMABLE_SWITCH,
    "AirPurifier": pb.CATEGORY_AIR_PURIFIER, "HeaterCooler": pb.CATEGORY_AIR_HEATER,
    "HumidifierDehumidifier": pb.CATEGORY_AIR_HUMIDIFIER, "Valve": pb.CATEGORY_FAUCET,
    "IrrigationSystem": pb.CATEGORY_SPRINKLER, "Faucet": pb.CATEGORY_FAUCET, "Television": pb.CATEGORY_TELEVISION,
    "Doorbell": pb.CATEGORY_VIDEO_DOORBELL, "CameraRTPStreamManagement": pb.CATEGORY_IP_CAMERA,
}


@dataclass(frozen=True)
class Binding:
    """One homed characteristic and the HAP characteristic behind it."""

    aid: int
    iid: int
    ref: Ref
    fmt: int
    readable: bool
    events: bool
    event_only: bool
    label: str  # for log lines: "'Desk lamp' (key) Lightbulb.Brightness (aid 2, iid 10)"
    # The device says "wr": its writes ask for the write response (HAP's "r"),
    # the value the accessory answers with, which becomes homed's value.
    write_response: bool = False


@dataclass
class _Slot:
    """Where a characteristic's value goes in the accessory messages."""

    accessory: int
    service: int
    characteristic: int
    binding: Binding


@dataclass
class DeviceMap:
    """A device's accessory database as homed accessories."""

    device_id: str
    templates: List["pb.ProvidedAccessory"] = field(default_factory=list)  # without values
    bindings: Dict[Tuple[int, int], Binding] = field(default_factory=dict)
    by_ref: Dict[Ref, Binding] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)  # what was left out or cut, and why
    slots: List[_Slot] = field(default_factory=list)
    values: Dict[Tuple[int, int], object] = field(default_factory=dict)  # from the database

    @property
    def keys(self) -> List[str]:
        return [a.key for a in self.templates]

    def layout(self) -> List[bytes]:
        """The registration without values: equal layouts need no re-registration."""
        return [t.SerializeToString(deterministic=True) for t in self.templates]

    def accessories(self, values: Dict[Tuple[int, int], object], reachable: bool) -> List["pb.ProvidedAccessory"]:
        """The messages to register, with the values known (event-only ones never
        carry one: a press is an occurrence, not a state)."""
        out = []
        for template in self.templates:
            message = pb.ProvidedAccessory()
            message.CopyFrom(template)
            message.unreachable = not reachable
            out.append(message)
        for slot in self.slots:
            binding = slot.binding
            value = values.get((binding.aid, binding.iid))
            if value is None or binding.event_only:
                continue
            target = out[slot.accessory].services[slot.service].characteristics[slot.characteristic]
            target.value.CopyFrom(_pb_value(value, binding.fmt))
        return out


def _pb_value(value, fmt: int) -> "pb.Value":
    from homed.values import to_value
    return to_value(value, fmt)


def _text(value) -> str:
    """A string field of AccessoryInformation, as homed takes it (64 bytes, no control characters)."""
    return names.cut(" ".join(names._CONTROL.sub(" ", str(value or "")).split()))


def map_device(device_id: str, database: Sequence[dict], catalog: Catalog,
               device_category: int = 0) -> DeviceMap:
    """The homed accessories of one paired device. ``database``: the
    "accessories" list of GET /accessories; ``device_category``: the mDNS
    record's ``ci`` when known (0 otherwise), used for a device that is not a bridge."""
    result = DeviceMap(device_id.lower())
    entries = []
    for index, accessory in enumerate(database if isinstance(database, list) else []):
        try:
            entries.append((int(accessory["aid"]), accessory))
        except (KeyError, TypeError, ValueError):
            result.notes.append(f"accessory entry {index + 1} of {result.device_id} has no aid; left out")
    bridged = len(entries) > 1
    bridge_key = names.accessory_key(device_id, 1) if bridged else ""
    for aid, accessory in sorted(entries, key=lambda entry: entry[0]):
        mark = (len(result.templates), len(result.slots), dict(result.bindings), dict(result.by_ref),
                dict(result.values))
        try:
            _map_accessory(result, accessory, catalog, bridged, bridge_key, device_category)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            # A malformed entry (an iid that is no number, a service that is no
            # object): that accessory is left out whole, the others are not.
            del result.templates[mark[0]:]
            del result.slots[mark[1]:]
            result.bindings, result.by_ref, result.values = mark[2], mark[3], mark[4]
            result.notes.append(f"accessory {aid} of {result.device_id} is malformed in its database "
                                f"({type(error).__name__}: {error}); left out")
    return result


def _map_accessory(result: DeviceMap, accessory: dict, catalog: Catalog, bridged: bool, bridge_key: str,
                   device_category: int) -> None:
    aid = int(accessory["aid"])
    key = names.accessory_key(result.device_id, aid)
    services = accessory.get("services", [])
    info = next((s for s in services if full_uuid(s.get("type", "")) == INFO), None)
    message = pb.ProvidedAccessory(key=key)
    fields = {"name": ""}
    if info is not None:
        for characteristic in info.get("characteristics", []):
            uuid = full_uuid(characteristic.get("type", ""))
            if uuid == NAME:
                fields["name"] = characteristic.get("value") or ""
            elif uuid in INFO_FIELDS:
                setattr(message, INFO_FIELDS[uuid], _text(characteristic.get("value")))
    else:
        result.notes.append(f"accessory {aid} of {result.device_id} has no AccessoryInformation")
    message.name = names.name_or(fields["name"], f"HomeKit accessory {aid}")
    display = f"{message.name!r} ({key})"
    if bridged and aid != 1:
        message.bridge_key = bridge_key
    index = len(result.templates)
    primary_taken = False
    for service in services:
        uuid = full_uuid(service.get("type", ""))
        iid = int(service.get("iid", 0))
        if uuid == INFO:
            for characteristic in service.get("characteristics", []):
                if full_uuid(characteristic.get("type", "")) == IDENTIFY:
                    ref = Ref(key, INFORMATION_SERVICE, "Identify")
                    binding = Binding(aid, int(characteristic["iid"]), ref, pb.FORMAT_BOOL, False, False, False,
                                      f"{display} Identify (aid {aid}, iid {characteristic['iid']})")
                    result.bindings[(binding.aid, binding.iid)] = binding
                    result.by_ref[ref] = binding
            continue
        if uuid == PROTOCOL_INFO:
            continue
        service_type = catalog.service(uuid)
        if service_type is None:
            count = len(service.get("characteristics", []))
            result.notes.append(f"{display}: service {short_uuid(uuid)} (iid {iid}) is not a type homed knows "
                                f"(homed has no custom service types); left out with its {count} characteristics")
            continue
        provided, slots = _map_service(result, service, service_type, catalog, display, key, aid)
        if provided is None:
            continue
        if provided.primary:
            provided.primary = not primary_taken
            primary_taken = True
        service_index = len(message.services)
        message.services.append(provided)
        for characteristic_index, binding in slots:
            result.slots.append(_Slot(index, service_index, characteristic_index, binding))
    message.category = _category(message, aid, bridged, device_category)
    result.templates.append(message)


def _category(message, aid: int, bridged: bool, device_category: int) -> int:
    if bridged and aid == 1:
        return pb.CATEGORY_BRIDGE
    if not bridged and device_category in pb.ENUMS["AccessoryCategory"].values() and device_category != 0:
        return device_category
    for service in message.services:
        if service.type in CATEGORY_BY_SERVICE:
            return CATEGORY_BY_SERVICE[service.type]
        if service.type.endswith("Sensor"):
            return pb.CATEGORY_SENSOR
    return pb.CATEGORY_OTHER


def _map_service(result: DeviceMap, service: dict, service_type, catalog: Catalog, display: str, key: str,
                 aid: int):
    """(pb.ProvidedService, [(index, Binding)]), or (None, []) when the
    service cannot be registered (a required characteristic missing)."""
    iid = int(service.get("iid", 0))
    where = f"{display} {service_type.name} (iid {iid})"
    provided = pb.ProvidedService(type=service_type.name, key=names.service_key(iid),
                                  primary=bool(service.get("primary")), hidden=bool(service.get("hidden")))
    slots: List[Tuple[int, Binding]] = []
    seen = set()
    for characteristic in service.get("characteristics", []):
        uuid = full_uuid(characteristic.get("type", ""))
        c_iid = int(characteristic.get("iid", 0))
        catalog_type = catalog.characteristic(uuid)
        if catalog_type is not None:
            if not Catalog.allows(service_type, catalog_type.name):
                result.notes.append(f"{where}: characteristic {catalog_type.name} (iid {c_iid}) is not one homed's "
                                    f"{service_type.name} takes; left out")
                continue
            if uuid == NAME:
                provided.name = names.valid_or_empty(characteristic.get("value"))
            made = _catalog_characteristic(result, characteristic, catalog_type, f"{where}.{catalog_type.name}")
        else:
            made = _custom_characteristic(result, characteristic, uuid, f"{where}", seen)
        if made is None:
            continue
        if made.type_name in seen or (catalog_type is not None and catalog_type.name in seen):
            result.notes.append(f"{where}: a second characteristic {made.type_name or made.type} (iid {c_iid}); "
                                f"left out")
            continue
        name = catalog_type.name if catalog_type is not None else made.type_name
        seen.add(name)
        fmt = catalog_type.format if catalog_type is not None else made.metadata.format
        perms = made.properties if made.HasField("properties") else catalog_type.permissions
        binding = Binding(aid, c_iid, Ref(key, provided.key, name), fmt, perms.readable,
                          perms.supports_event_notification,
                          bool(catalog_type is not None and catalog_type.event_only),
                          f"{display} {service_type.name}.{name} (aid {aid}, iid {c_iid})",
                          "wr" in (characteristic.get("perms") or ()))
        value = characteristic.get("value")
        if value is not None and not binding.event_only:
            try:
                result.values[(aid, c_iid)] = hapvalues.from_hap(value, fmt)
            except ValueError as error:
                result.notes.append(f"{binding.label}: value not taken: {error}")
        result.bindings[(aid, c_iid)] = binding
        result.by_ref[binding.ref] = binding
        slots.append((len(provided.characteristics), binding))
        provided.characteristics.append(made)
    missing = [n for n in service_type.required_characteristics if n not in seen]
    if missing:
        result.notes.append(f"{where}: lacks {', '.join(missing)}, which homed's {service_type.name} requires; "
                            f"left out")
        for _, binding in slots:
            result.bindings.pop((binding.aid, binding.iid), None)
            result.by_ref.pop(binding.ref, None)
            result.values.pop((binding.aid, binding.iid), None)
        return None, []
    return provided, slots


def _perms(characteristic: dict):
    perms = set(characteristic.get("perms") or ())
    return pb.CharacteristicProperties(readable="pr" in perms, writable="pw" in perms,
                                       supports_event_notification="ev" in perms, hidden="hd" in perms,
                                       write_response="wr" in perms)


#: What an integer format holds: a device's range beyond it is cut.
FORMAT_BOUNDS = {
    pb.FORMAT_UINT8: (0, 2 ** 8 - 1), pb.FORMAT_UINT16: (0, 2 ** 16 - 1), pb.FORMAT_UINT32: (0, 2 ** 32 - 1),
    pb.FORMAT_UINT64: (0, 2 ** 64 - 1), pb.FORMAT_INT: (-2 ** 31, 2 ** 31 - 1),
}


def _catalog_characteristic(result: DeviceMap, characteristic: dict, catalog_type, where: str):
    """A catalog characteristic with the device's own metadata: permissions it
    drops, its range (narrower or wider than the catalog's, within the format),
    step, valid values and maximum length. A permission the catalog lacks is
    dropped, with a note."""
    made = pb.ProvidedCharacteristic(type=catalog_type.name)
    device = _perms(characteristic)
    allowed = catalog_type.permissions
    properties = pb.CharacteristicProperties(
        readable=device.readable and allowed.readable, writable=device.writable and allowed.writable,
        supports_event_notification=device.supports_event_notification and allowed.supports_event_notification,
        hidden=device.hidden, write_response=allowed.write_response)
    extra = [p for p in ("readable", "writable", "supports_event_notification")
             if getattr(device, p) and not getattr(allowed, p)]
    if extra:
        result.notes.append(f"{where}: the device says {', '.join(extra)}, which the catalog does not; dropped")
    if properties != allowed:
        made.properties.CopyFrom(properties)
    metadata = pb.CharacteristicMetadata()
    narrowed = False
    low = hapvalues.number(characteristic.get("minValue"))
    high = hapvalues.number(characteristic.get("maxValue"))
    # The device's range is its own, narrower or wider than the catalog's (homed
    # takes both); only what the format cannot hold is cut.
    format_low, format_high = FORMAT_BOUNDS.get(catalog_type.format, (None, None))
    if low is not None and format_low is not None and low < format_low:
        result.notes.append(f"{where}: minimum {low:g} is below what its format holds; the catalog's kept")
        low = None
    if high is not None and format_high is not None and high > format_high:
        result.notes.append(f"{where}: maximum {high:g} is above what its format holds; the catalog's kept")
        high = None
    if low is not None and high is not None and low > high:
        result.notes.append(f"{where}: minimum {low:g} above maximum {high:g}; the catalog's range kept")
        low = high = None
    if low is not None:
        metadata.min_value, narrowed = low, True
    if high is not None:
        metadata.max_value, narrowed = high, True
    step = hapvalues.number(characteristic.get("minStep"))
    if step is not None and step > 0 and not (catalog_type.HasField("step_value")
                                              and step == catalog_type.step_value):
        metadata.step_value, narrowed = step, True
    valid = characteristic.get("valid-values")
    if isinstance(valid, list) and valid:
        known = {v.value for v in catalog_type.valid_values}
        taken = sorted({int(v) for v in valid if isinstance(v, int) and (not known or v in known)})
        if taken and set(taken) != known:
            metadata.valid_values.extend(taken)
            narrowed = True
        elif not taken:
            result.notes.append(f"{where}: none of the valid values {valid} is the catalog's; the catalog's kept")
    length = characteristic.get("maxDataLen") or characteristic.get("maxLen")
    if isinstance(length, int) and 0 < length and length != catalog_type.max_length:
        metadata.max_length, narrowed = min(length, MAX_LENGTH), True
    if narrowed:
        made.metadata.CopyFrom(metadata)
    return made


def _custom_characteristic(result: DeviceMap, characteristic: dict, uuid: str, where: str, seen):
    """A type the catalog does not have: a custom characteristic with the
    device's full metadata (format, unit, range, step, valid values, length)."""
    c_iid = characteristic.get("iid")
    fmt = hapvalues.format_of(characteristic.get("format"))
    if fmt == pb.FORMAT_UNSPECIFIED:
        result.notes.append(f"{where}: custom characteristic {uuid} (iid {c_iid}) has format "
                            f"{characteristic.get('format')!r}, which homed does not know; left out")
        return None
    # (An Apple type the daemon's catalog lacks, a newer HAP type, is a custom
    # type to homed too, under its full UUID.)
    base = names.name_or(characteristic.get("description"), f"Custom {uuid[:8]}")
    type_name, n = base, 2
    while type_name in seen:
        type_name, n = names.cut(f"{base} {n}"), n + 1
    properties = _perms(characteristic)
    if not (properties.readable or properties.writable or properties.supports_event_notification):
        result.notes.append(f"{where}: custom characteristic {type_name} (iid {c_iid}) has no permission homed "
                            f"can serve; left out")
        return None
    metadata = pb.CharacteristicMetadata(format=fmt, unit=hapvalues.unit_of(characteristic.get("unit")))
    low = hapvalues.number(characteristic.get("minValue"))
    high = hapvalues.number(characteristic.get("maxValue"))
    if low is not None and high is not None and low > high:
        low = high = None
    if low is not None:
        metadata.min_value = low
    if high is not None:
        metadata.max_value = high
    step = hapvalues.number(characteristic.get("minStep"))
    if step is not None and step > 0:
        metadata.step_value = step
    valid = characteristic.get("valid-values")
    if isinstance(valid, list):
        metadata.valid_values.extend(sorted({int(v) for v in valid if isinstance(v, int)}))
    length = characteristic.get("maxDataLen") or characteristic.get("maxLen")
    if isinstance(length, int) and length > 0:
        metadata.max_length = min(length, MAX_LENGTH)
    return pb.ProvidedCharacteristic(type=uuid, type_name=type_name, properties=properties, metadata=metadata)


def describe(binding: Optional[Binding]) -> str:
    return binding.label if binding is not None else "an unknown characteristic"
