"""The v1 wire schema, loaded at run time from ``home_v1.desc``.

``home_v1.desc`` is the FileDescriptorSet that ``Scripts/generate-proto.sh``
writes from ``Protos/home_v1.proto`` (the single source of truth). Building the
message classes from it at run time means there is no generated ``_pb2.py`` and
no coupling between a protoc version and the installed ``protobuf`` runtime.

    from homed import pb
    req = pb.ReadCharacteristicsRequest(characteristic_ids=[7, 8])
"""

from __future__ import annotations

import os
from typing import Dict

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "home.v1"
SERVICE = "home.v1.HomeService"
DESCRIPTOR_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "home_v1.desc")


def _load_pool(path: str = DESCRIPTOR_PATH) -> descriptor_pool.DescriptorPool:
    with open(path, "rb") as f:
        fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file_proto in fds.file:
        pool.Add(file_proto)
    return pool


POOL = _load_pool()
FILE = POOL.FindFileByName("home_v1.proto")
SERVICE_DESCRIPTOR = POOL.FindServiceByName(SERVICE)


def _message_class(descriptor):
    get = getattr(message_factory, "GetMessageClass", None)
    if get is not None:  # protobuf >= 4.22
        return get(descriptor)
    return message_factory.MessageFactory(POOL).GetPrototype(descriptor)  # older runtimes


#: Every top-level message class of the schema, by short name ("Frame", "Value", ...).
MESSAGES: Dict[str, type] = {
    name: _message_class(desc) for name, desc in FILE.message_types_by_name.items()
}

#: Every top-level enum, by short name: {"StatusCode": {"OK": 0, ...}, ...}.
ENUMS: Dict[str, Dict[str, int]] = {
    name: {v.name: v.number for v in desc.values} for name, desc in FILE.enum_types_by_name.items()
}

# Top-level enum values as module constants (proto3 enum values share one scope
# per package, so they are unique): pb.NOT_FOUND, pb.EVENT_VALUE_CHANGED, ...
for _values in ENUMS.values():
    globals().update(_values)

globals().update(MESSAGES)


def status_name(code: int) -> str:
    """'NOT_FOUND' for 5; the number as text for an unknown code."""
    value = FILE.enum_types_by_name["StatusCode"].values_by_number.get(code)
    return value.name if value is not None else str(code)


def full_method_name(method: str) -> str:
    """'GetHome' -> 'home.v1.HomeService/GetHome'; a full name is returned as is."""
    return method if "/" in method else f"{SERVICE}/{method}"


def method_types(method: str):
    """(request class, response class, server_streaming) for a HomeService method,
    or None when the schema does not declare it."""
    service, _, name = full_method_name(method).rpartition("/")
    if service != SERVICE:
        return None
    desc = SERVICE_DESCRIPTOR.methods_by_name.get(name)
    if desc is None:
        return None
    # The schema declares Subscribe with a plain `returns` (protoc-c has no
    # streaming services), so streaming is known by name as well.
    streaming = bool(getattr(desc, "server_streaming", False)) or name == "Subscribe"
    return _message_class(desc.input_type), _message_class(desc.output_type), streaming


def serialize_request(request, request_class=None) -> bytes:
    """A request as bytes: a message of ``request_class`` (checked, when given),
    a dict in the message's JSON form (needs ``request_class``), raw bytes, or
    None (an empty request)."""
    if request is None:
        return b""
    if isinstance(request, (bytes, bytearray)):
        return bytes(request)
    if isinstance(request, dict):
        if request_class is None:
            raise TypeError("a dict request needs a method the schema declares")
        from google.protobuf import json_format
        return json_format.ParseDict(request, request_class()).SerializeToString()
    if request_class is not None and request.DESCRIPTOR.full_name != request_class.DESCRIPTOR.full_name:
        raise TypeError(f"expected {request_class.DESCRIPTOR.full_name}, got {request.DESCRIPTOR.full_name}")
    return request.SerializeToString()
