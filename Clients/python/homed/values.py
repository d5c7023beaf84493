"""Values and errors as a provider's handlers give them and the wire carries
them: Python values to ``pb.Value`` and back in a characteristic's format, and
a handler's error to a status code and message. No I/O here."""

from __future__ import annotations

import errno
import math
from typing import Tuple

from . import proto as pb
from .errors import HomedError

_UINT_MAX = {
    pb.FORMAT_UINT8: 0xFF, pb.FORMAT_UINT16: 0xFFFF, pb.FORMAT_UINT32: 0xFFFFFFFF,
    pb.FORMAT_UINT64: 0xFFFFFFFFFFFFFFFF,
}
_DATA_FORMATS = (pb.FORMAT_TLV8, pb.FORMAT_DATA)

# -- values -------------------------------------------------------------------

def _integral(value, what: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    raise TypeError(f"{what} takes an integer, not {value!r}")


def _format_name(fmt: int) -> str:
    for name, number in pb.ENUMS["Format"].items():
        if number == fmt:
            return name[len("FORMAT_"):].lower()
    return str(fmt)


def to_value(value, fmt: int = pb.FORMAT_UNSPECIFIED):
    """A Python value as a ``pb.Value`` of the characteristic format ``fmt``
    (``pb.FORMAT_*``). FORMAT_UNSPECIFIED picks the kind from the Python type
    (``int`` travels as ``int_value``, which the daemon accepts for every numeric
    format). A ``pb.Value`` is returned as it is. Raises TypeError or ValueError
    for a value the format cannot take."""
    if isinstance(value, pb.Value):
        return value
    if value is None:
        raise TypeError("None is not a value")
    if fmt == pb.FORMAT_BOOL:
        if isinstance(value, bool):
            return pb.Value(bool_value=value)
        number = _integral(value, "a bool characteristic")
        if number not in (0, 1):
            raise ValueError(f"a bool characteristic takes True, False, 0 or 1, not {value!r}")
        return pb.Value(bool_value=bool(number))
    if fmt in _UINT_MAX:
        number = _integral(value, "an unsigned characteristic")
        if not 0 <= number <= _UINT_MAX[fmt]:
            raise ValueError(f"{number} is outside 0…{_UINT_MAX[fmt]} of {_format_name(fmt)}")
        return pb.Value(uint_value=number)
    if fmt == pb.FORMAT_INT:
        number = _integral(value, "an int characteristic")
        if not -2 ** 31 <= number < 2 ** 31:
            raise ValueError(f"{number} is outside the 32-bit range of an int characteristic")
        return pb.Value(int_value=number)
    if fmt == pb.FORMAT_FLOAT:
        if isinstance(value, (bool, str, bytes, bytearray)) or not isinstance(value, (int, float)):
            raise TypeError(f"a float characteristic takes a number, not {value!r}")
        return pb.Value(float_value=float(value))
    if fmt == pb.FORMAT_STRING:
        if not isinstance(value, str):
            raise TypeError(f"a string characteristic takes a str, not {value!r}")
        return pb.Value(string_value=value)
    if fmt in _DATA_FORMATS:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"a data characteristic takes bytes, not {value!r}")
        return pb.Value(data_value=bytes(value))
    # No format known: by the Python type.
    if isinstance(value, bool):
        return pb.Value(bool_value=value)
    if isinstance(value, int):
        if value >= 2 ** 63:
            return pb.Value(uint_value=value)
        return pb.Value(int_value=value)
    if isinstance(value, float):
        return pb.Value(float_value=value)
    if isinstance(value, str):
        return pb.Value(string_value=value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return pb.Value(data_value=bytes(value))
    raise TypeError(f"{value!r} is not a value (bool, int, float, str or bytes)")


def from_value(value, fmt: int = pb.FORMAT_UNSPECIFIED):
    """A ``pb.Value`` as a Python value of the format ``fmt``: bool, int, float,
    str or bytes (None for an empty Value)."""
    kind = value.WhichOneof("kind")
    if kind is None:
        return None
    raw = getattr(value, kind)
    if fmt == pb.FORMAT_BOOL and kind in ("bool_value", "int_value", "uint_value"):
        return bool(raw)
    if (fmt in _UINT_MAX or fmt == pb.FORMAT_INT) and kind in ("bool_value", "int_value", "uint_value"):
        return int(raw)
    if fmt == pb.FORMAT_FLOAT and kind in ("int_value", "uint_value", "float_value"):
        return float(raw)
    return raw


_ERRNO_CODES = {
    errno.EINVAL: pb.INVALID_ARGUMENT, errno.ERANGE: pb.OUT_OF_RANGE, errno.ENOSPC: pb.RESOURCE_EXHAUSTED,
    errno.EROFS: pb.FAILED_PRECONDITION, errno.ENOTSUP: pb.UNIMPLEMENTED,
}


def status_of(error) -> Tuple[int, str]:
    """(code, message) for what a handler gave as an error: a HomedError, an
    exception (PermissionError → PERMISSION_DENIED, FileNotFoundError →
    NOT_FOUND, TimeoutError → DEADLINE_EXCEEDED, an OSError with errno EINVAL →
    INVALID_ARGUMENT, ERANGE → OUT_OF_RANGE, ENOSPC → RESOURCE_EXHAUSTED, EROFS →
    FAILED_PRECONDITION, ENOTSUP → UNIMPLEMENTED, any other → UNAVAILABLE,
    ValueError/TypeError → INVALID_ARGUMENT, else INTERNAL), a (code, message)
    pair, a code, or a message (UNKNOWN)."""
    if isinstance(error, HomedError):
        return error.code, error.message
    if isinstance(error, BaseException):
        text = str(error) or type(error).__name__
        if isinstance(error, OSError) and error.strerror:  # without the "[Errno 13]"
            text = f"{error.strerror}: {error.filename}" if error.filename else error.strerror
        if isinstance(error, PermissionError):
            return pb.PERMISSION_DENIED, text
        if isinstance(error, FileNotFoundError):
            return pb.NOT_FOUND, text
        if isinstance(error, TimeoutError):
            return pb.DEADLINE_EXCEEDED, text
        if isinstance(error, OSError):
            return _ERRNO_CODES.get(error.errno, pb.UNAVAILABLE), text
        if isinstance(error, (ValueError, TypeError)):
            return pb.INVALID_ARGUMENT, text
        return pb.INTERNAL, f"{type(error).__name__}: {text}"
    if isinstance(error, tuple) and len(error) == 2:
        return int(error[0]), str(error[1])
    if isinstance(error, int) and not isinstance(error, bool):
        return error, pb.status_name(error)
    return pb.UNKNOWN, str(error)


def set_status(item, error) -> None:
    """Sets ``code`` and ``message`` of an answer or one of its items from a
    handler's error (see :func:`status_of`); never OK."""
    code, message = status_of(error)
    item.code = code if code != pb.OK else pb.UNKNOWN
    item.message = message


_set_status = set_status  # the name it had
