"""HAP's JSON values, formats, units and status codes as homed has them, and
back. No I/O here.

HAP's JSON (HAP spec, "IP Accessories": characteristic objects) writes a
format as a string ("uint8"), data and TLV8 values in base64, booleans as
true/false or 1/0, and a failed item as a negative status number."""

from __future__ import annotations

import base64
import binascii
import math
from typing import Optional, Tuple

from homed import pb

FORMATS = {
    "bool": pb.FORMAT_BOOL, "uint8": pb.FORMAT_UINT8, "uint16": pb.FORMAT_UINT16, "uint32": pb.FORMAT_UINT32,
    "uint64": pb.FORMAT_UINT64, "int": pb.FORMAT_INT, "float": pb.FORMAT_FLOAT, "string": pb.FORMAT_STRING,
    "tlv8": pb.FORMAT_TLV8, "data": pb.FORMAT_DATA,
}
UNITS = {
    "celsius": pb.UNIT_CELSIUS, "percentage": pb.UNIT_PERCENTAGE, "arcdegrees": pb.UNIT_ARC_DEGREES,
    "lux": pb.UNIT_LUX, "seconds": pb.UNIT_SECONDS,
}
_INTEGERS = (pb.FORMAT_UINT8, pb.FORMAT_UINT16, pb.FORMAT_UINT32, pb.FORMAT_UINT64, pb.FORMAT_INT)
_DATA = (pb.FORMAT_TLV8, pb.FORMAT_DATA)

# HAP status codes (HAP spec, "HAP Status Codes") and what a homed client
# should see for each. -70402 ("service communication failure": the accessory
# could not reach the device behind it) is the "No Response" of the Home app.
HAP_STATUS = {
    -70401: (pb.PERMISSION_DENIED, "insufficient privileges"),
    -70402: (pb.UNAVAILABLE, "the accessory could not reach the device (service communication failure)"),
    -70403: (pb.UNAVAILABLE, "the accessory is busy (resource busy)"),
    -70404: (pb.INVALID_ARGUMENT, "the characteristic is read-only"),
    -70405: (pb.INVALID_ARGUMENT, "the characteristic is write-only"),
    -70406: (pb.UNIMPLEMENTED, "notifications are not supported"),
    -70407: (pb.RESOURCE_EXHAUSTED, "the accessory is out of resources"),
    -70408: (pb.DEADLINE_EXCEEDED, "the accessory's operation timed out"),
    -70409: (pb.NOT_FOUND, "the characteristic does not exist on the accessory"),
    -70410: (pb.INVALID_ARGUMENT, "the accessory refused the value (invalid value in request)"),
    -70411: (pb.PERMISSION_DENIED, "insufficient authorization"),
}


def status_of_hap(status) -> Tuple[int, str]:
    """(homed code, message) for a HAP status; OK for 0."""
    try:
        number = int(status)
    except (TypeError, ValueError):
        return pb.UNKNOWN, f"HAP status {status!r}"
    if number == 0:
        return pb.OK, ""
    code, text = HAP_STATUS.get(number, (pb.UNKNOWN, "unknown HAP status"))
    return code, f"{text} (HAP status {number})"


def format_of(text) -> int:
    """A HAP format name as pb.Format (FORMAT_UNSPECIFIED when unknown)."""
    return FORMATS.get(str(text or "").lower(), pb.FORMAT_UNSPECIFIED)


def unit_of(text) -> int:
    return UNITS.get(str(text or "").lower(), pb.UNIT_NONE)


def from_hap(value, fmt: int):
    """A value from HAP's JSON as the Python value homed's format holds (bool,
    int, float, str, bytes). Raises ValueError when it is not of the format
    (an accessory that sends "abc" for a uint8)."""
    if value is None:
        raise ValueError("no value")
    if fmt == pb.FORMAT_BOOL:
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        raise ValueError(f"{value!r} is not a bool")
    if fmt in _INTEGERS:
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, (int, float)) and math.isfinite(value):
            return int(round(value))
        raise ValueError(f"{value!r} is not an integer")
    if fmt == pb.FORMAT_FLOAT:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
        raise ValueError(f"{value!r} is not a number")
    if fmt == pb.FORMAT_STRING:
        if isinstance(value, str):
            return value
        raise ValueError(f"{value!r} is not a string")
    if fmt in _DATA:
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not base64 data")
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as error:
            raise ValueError(f"{value[:40]!r} is not base64 data ({error})") from None
    raise ValueError(f"format {fmt} unknown")


def to_hap(value, fmt: int):
    """A homed value (as the provider's handlers get it) in HAP's JSON."""
    if fmt in _DATA:
        return base64.b64encode(bytes(value)).decode("ascii")
    if fmt == pb.FORMAT_BOOL:
        return bool(value)
    if fmt in _INTEGERS:
        return int(value)
    if fmt == pb.FORMAT_FLOAT:
        return float(value)
    return value


def number(value) -> Optional[float]:
    """A finite number from metadata, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)
