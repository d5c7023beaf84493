"""homed's model as HAP's: accessories, services and characteristics as HAP
describes them, values both ways, and homed's statuses as HAP's. No I/O.

homed's model *is* HAP's (types by HAP UUID, properties, metadata), so the
mapping is mostly renaming; what needs care is a controller's JSON value, which
is checked here strictly, so that a wrong type gets HAP's -70410 instead of
being coerced into something the user did not ask for.
"""

from __future__ import annotations

import base64
import binascii
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from homed import pb

# HAP status codes (HAP spec, table 6-11), as HAP-python's const.HAP_SERVER_STATUS.
SUCCESS = 0
INSUFFICIENT_PRIVILEGES = -70401
SERVICE_COMMUNICATION_FAILURE = -70402  # what the Home app shows as "No Response"
RESOURCE_BUSY = -70403
READ_ONLY_CHARACTERISTIC = -70404
WRITE_ONLY_CHARACTERISTIC = -70405
OUT_OF_RESOURCE = -70407
OPERATION_TIMED_OUT = -70408
RESOURCE_DOES_NOT_EXIST = -70409
INVALID_VALUE_IN_REQUEST = -70410

FORMATS = {
    pb.FORMAT_BOOL: "bool", pb.FORMAT_UINT8: "uint8", pb.FORMAT_UINT16: "uint16", pb.FORMAT_UINT32: "uint32",
    pb.FORMAT_UINT64: "uint64", pb.FORMAT_INT: "int", pb.FORMAT_FLOAT: "float", pb.FORMAT_STRING: "string",
    pb.FORMAT_TLV8: "tlv8", pb.FORMAT_DATA: "data",
}
UNITS = {pb.UNIT_CELSIUS: "celsius", pb.UNIT_PERCENTAGE: "percentage", pb.UNIT_ARC_DEGREES: "arcdegrees",
         pb.UNIT_LUX: "lux", pb.UNIT_SECONDS: "seconds"}
UNSIGNED = {"uint8", "uint16", "uint32", "uint64"}
BINARY = {"tlv8", "data"}

# Characteristics whose every occurrence is an event (a button press): never
# merged, and read as null (HAP spec; HAP-python's ALWAYS_NULL).
PROGRAMMABLE_SWITCH_EVENT = "00000073-0000-1000-8000-0026BB765291"
BUTTON_EVENT = "00000126-0000-1000-8000-0026BB765291"
EVENT_TYPES = {PROGRAMMABLE_SWITCH_EVENT, BUTTON_EVENT}
ALWAYS_NULL = {PROGRAMMABLE_SWITCH_EVENT}

ACCESSORY_INFORMATION = "0000003E-0000-1000-8000-0026BB765291"
NAME = "00000023-0000-1000-8000-0026BB765291"
HAP_CATEGORY_OTHER = 1


@dataclass
class CharSpec:
    key: str                    # "c<homed id>": what the iid is allocated for
    homed_id: int
    type: str                   # the HAP UUID, upper case, as homed gives it
    name: str                   # homed's type name: HAP's "description"
    format: str
    perms: List[str]
    props: Dict[str, Any]       # minValue, maxValue, minStep, unit, ValidValues, maxLen
    value: Any = None           # HAP JSON value, None when homed has none


@dataclass
class ServiceSpec:
    key: str                    # "s<homed id>"
    homed_id: int
    type: str
    name: str
    primary: bool
    hidden: bool
    linked_keys: List[str]
    chars: List[CharSpec] = field(default_factory=list)


@dataclass
class AccessorySpec:
    homed_id: int
    name: str
    category: int               # HAP's category number (homed's enum has HAP's numbers)
    reachable: bool
    services: List[ServiceSpec] = field(default_factory=list)

    def signature(self) -> Tuple:
        """What a controller caches of the accessory (its structure, no values):
        when it changes, the bridge's configuration number must change."""
        return (self.name, self.category, tuple(
            (s.key, s.type, s.name, s.primary, s.hidden, tuple(s.linked_keys),
             tuple((c.key, c.type, c.format, tuple(c.perms), tuple(sorted(
                 (k, str(v)) for k, v in c.props.items()))) for c in s.chars))
            for s in self.services))


def permissions(properties) -> List[str]:
    perms = []
    if properties.readable:
        perms.append("pr")
    if properties.writable:
        perms.append("pw")
    if properties.supports_event_notification:
        perms.append("ev")
    if properties.hidden:
        perms.append("hd")
    if properties.write_response:
        perms.append("wr")
    return perms


def char_props(characteristic) -> Dict[str, Any]:
    """HAP-python's property names for homed's metadata."""
    meta = characteristic.metadata
    fmt = FORMATS.get(meta.format, "data")
    props: Dict[str, Any] = {}
    if meta.WhichOneof("min_present"):
        props["minValue"] = _number(meta.min_value, fmt)
    if meta.WhichOneof("max_present"):
        props["maxValue"] = _number(meta.max_value, fmt)
    if meta.WhichOneof("step_present"):
        props["minStep"] = _number(meta.step_value, fmt)
    if meta.unit in UNITS:
        props["unit"] = UNITS[meta.unit]
    if meta.valid_values:
        props["ValidValues"] = {str(v): int(v) for v in meta.valid_values}
    if fmt == "string" and meta.max_length:
        # HAP caps a string's maxLen at 256; homed may allow more.
        props["maxLen"] = min(int(meta.max_length), 256)
    return props


def _number(x: float, fmt: str):
    return int(x) if fmt != "float" and float(x).is_integer() else x


def accessory_spec(accessory) -> AccessorySpec:
    """One homed Accessory (as GetHome gives it) as HAP describes it."""
    spec = AccessorySpec(accessory.id, accessory.name, int(accessory.category) or HAP_CATEGORY_OTHER,
                         accessory.reachable)
    for service in accessory.services:
        s = ServiceSpec(f"s{service.id}", service.id, service.type.upper(), service.name or accessory.name,
                        service.primary, service.hidden, [f"s{i}" for i in service.linked_service_ids])
        for c in service.characteristics:
            fmt = FORMATS.get(c.metadata.format, "data")
            value = to_hap(c.value, fmt) if c.HasField("value") else None
            if c.type.upper() in ALWAYS_NULL:
                value = None
            elif s.type == ACCESSORY_INFORMATION and c.type.upper() == NAME:
                value = accessory.name  # the name a user gave in homed is the one HomeKit shows
            s.chars.append(CharSpec(f"c{c.id}", c.id, c.type.upper(), c.type_name or c.type, fmt,
                                    permissions(c.properties), char_props(c), value))
        spec.services.append(s)
    return spec


def to_hap(value, fmt: str) -> Any:
    """A homed pb.Value as HAP's JSON value (None when it holds nothing)."""
    kind = value.WhichOneof("kind")
    if kind is None:
        return None
    raw = getattr(value, kind)
    if fmt in BINARY:
        return base64.b64encode(raw).decode("ascii") if isinstance(raw, bytes) else str(raw)
    if fmt == "bool":
        return bool(raw)
    if fmt == "float":
        return float(raw)
    if fmt in UNSIGNED or fmt == "int":
        return int(raw)
    return raw


class BadValue(ValueError):
    """A controller's value that does not suit the characteristic's format."""


def from_hap(value: Any, fmt: str):
    """A controller's JSON value as the pb.Value homed takes, or BadValue.

    Strict on kinds (a string for a number is refused, not parsed); lenient
    where controllers are known to differ: iOS writes bools as 0/1, and some
    controllers write integral numbers as 50.0."""
    if fmt == "bool":
        if isinstance(value, bool):
            return pb.Value(bool_value=value)
        if isinstance(value, int) and value in (0, 1):
            return pb.Value(bool_value=bool(value))
        raise BadValue(f"{value!r} is not a bool")
    if fmt in UNSIGNED or fmt == "int":
        number = _integral(value)
        if number is None:
            raise BadValue(f"{value!r} is not an integer")
        if fmt in UNSIGNED:
            if number < 0:
                raise BadValue(f"{value!r} is negative for an unsigned format")
            return pb.Value(uint_value=number)
        return pb.Value(int_value=number)
    if fmt == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise BadValue(f"{value!r} is not a finite number")
        return pb.Value(float_value=float(value))
    if fmt == "string":
        if not isinstance(value, str):
            raise BadValue(f"{value!r} is not a string")
        return pb.Value(string_value=value)
    if fmt in BINARY:
        if not isinstance(value, str):
            raise BadValue(f"{value!r} is not base64 text")
        try:
            return pb.Value(data_value=base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            raise BadValue(f"{value[:40]!r} is not valid base64") from None
    raise BadValue(f"format {fmt} is not writable")


def _integral(value) -> Optional[int]:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def hap_status(code: int) -> int:
    """homed's status of a write item as the HAP status a controller expects."""
    return {
        pb.OK: SUCCESS,
        pb.INVALID_ARGUMENT: INVALID_VALUE_IN_REQUEST,
        pb.OUT_OF_RANGE: INVALID_VALUE_IN_REQUEST,
        pb.NOT_FOUND: RESOURCE_DOES_NOT_EXIST,
        pb.PERMISSION_DENIED: INSUFFICIENT_PRIVILEGES,
        pb.RESOURCE_EXHAUSTED: OUT_OF_RESOURCE,
        pb.ABORTED: RESOURCE_BUSY,
        pb.DEADLINE_EXCEEDED: OPERATION_TIMED_OUT,
        # The accessory's provider is away: the Home app's "No Response".
        pb.UNAVAILABLE: SERVICE_COMMUNICATION_FAILURE,
    }.get(code, SERVICE_COMMUNICATION_FAILURE)
