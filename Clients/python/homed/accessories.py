"""Accessories as a provider gives them: ``pb.ProvidedAccessory`` messages made
from messages or plain dicts, and the same without their values. No I/O here."""

from __future__ import annotations

import copy
from typing import List, Mapping, Tuple

from google.protobuf import json_format

from . import proto as pb
from .values import to_value

__all__ = ["accessory_message", "without_values", "enum_number"]


def _squeezed(name: str) -> str:
    return "".join(c for c in name.upper() if c not in " _-")


def enum_number(enum: str, prefix: str, value):
    """An enum given as its number, or its name in any of the spellings homed
    takes everywhere (homectl, simulation files, JSON): with or without the
    prefix, any case, words joined by spaces, "-", "_" or nothing ("window
    covering", "WINDOW_COVERING", "CATEGORY_WINDOW_COVERING", "windowCovering")."""
    if isinstance(value, int):
        return value
    names = pb.ENUMS[enum]
    wanted = _squeezed(str(value).strip())
    for name, number in names.items():
        if wanted in (_squeezed(name), _squeezed(name[len(prefix):]) if name.startswith(prefix) else None):
            return number
    raise ValueError(f"unknown {enum} {value!r}; one of {', '.join(sorted(names))}")


def accessory_message(accessory) -> "pb.ProvidedAccessory":
    """A ``pb.ProvidedAccessory`` from a message (copied) or a plain dict.

    A dict uses the message's field names (snake_case or the JSON camelCase);
    enums may be numbers or names with or without their prefix (``"category":
    "SENSOR"``, ``"format": "float"``, ``"unit": "celsius"``); a characteristic's
    ``"value"`` is a plain Python value (or a ``pb.Value``), converted with the
    characteristic's metadata format when it gives one; a characteristic may be
    just its type (``"On"``)."""
    if isinstance(accessory, pb.ProvidedAccessory):
        message = pb.ProvidedAccessory()
        message.CopyFrom(accessory)
        return message
    if not isinstance(accessory, Mapping):
        raise TypeError(f"an accessory is a pb.ProvidedAccessory or a dict, not {type(accessory).__name__}")
    data = copy.deepcopy(dict(accessory))
    if "category" in data:
        data["category"] = enum_number("AccessoryCategory", "CATEGORY_", data["category"])
    values: List[Tuple[int, int, object, int]] = []
    for s_index, service in enumerate(data.get("services", ())):
        characteristics = service.get("characteristics", [])
        for c_index, characteristic in enumerate(characteristics):
            if isinstance(characteristic, str):
                characteristics[c_index] = characteristic = {"type": characteristic}
            metadata = characteristic.get("metadata")
            fmt = pb.FORMAT_UNSPECIFIED
            if metadata:
                for field, enum, prefix in (("format", "Format", "FORMAT_"), ("unit", "Unit", "UNIT_")):
                    if field in metadata:
                        metadata[field] = enum_number(enum, prefix, metadata[field])
                fmt = metadata.get("format", fmt)
            if "value" in characteristic:
                value = characteristic.pop("value")
                if value is not None:
                    values.append((s_index, c_index, value, fmt))
    message = json_format.ParseDict(data, pb.ProvidedAccessory())
    for s_index, c_index, value, fmt in values:
        message.services[s_index].characteristics[c_index].value.CopyFrom(to_value(value, fmt))
    return message


def without_values(accessory) -> "pb.ProvidedAccessory":
    """A copy with no characteristic values: registered so, the daemon reads the
    values from the devices instead."""
    message = pb.ProvidedAccessory()
    message.CopyFrom(accessory)
    for service in message.services:
        for characteristic in service.characteristics:
            characteristic.ClearField("value")
    return message
