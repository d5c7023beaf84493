"""Typed errors: one exception class per status code, shared by the
synchronous client (``homed.Client``) and the asyncio one (``homed.aio``).

Every error is a :class:`HomedError` with ``code``, ``message`` and
``code_name``, so code written against the one class keeps working; the
subclasses let a caller catch just what it can handle::

    try:
        await client.call("ChangeLayout", request)
    except homed.InvalidArgument as error:   # the request was wrong: say so
        print(error.message)
    except homed.Unavailable:                # the daemon went away: try later
        ...

:func:`error_for` (also ``HomedError.from_status``) makes the right class for a
status that came off the wire.
"""

from __future__ import annotations

from typing import Dict, Optional

from . import proto as pb

__all__ = [
    "HomedError", "error_for", "Cancelled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
    "AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
    "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated", "DaemonNotRunning",
]


class HomedError(Exception):
    """A call (or the connection) ended with a non-OK status.

    ``HomedError(code, message)`` works as it always did; the status codes' own
    classes below take the message alone (``NotFound("no lamp")``)."""

    def __init__(self, code: int, message: str):
        self.code = int(code)
        self.message = message
        super().__init__(f"{pb.status_name(self.code)}: {message}")

    @property
    def code_name(self) -> str:
        return pb.status_name(self.code)

    @staticmethod
    def from_status(code: int, message: str) -> "HomedError":
        """The error of the class for ``code`` (see :func:`error_for`)."""
        return error_for(code, message)

    def copy(self) -> "HomedError":
        """A fresh error with the same code and message, to raise in several
        places (each raise gets its own traceback)."""
        return error_for(self.code, self.message)


class _StatusError(HomedError):
    """A HomedError whose class fixes the code."""

    CODE = pb.UNKNOWN

    def __init__(self, message: str = ""):
        super().__init__(self.CODE, message)


def _status_class(name: str, code: int, doc: str) -> type:
    return type(name, (_StatusError,), {"CODE": code, "__doc__": doc, "__module__": __name__})


Cancelled = _status_class("Cancelled", pb.CANCELLED, "CANCELLED: the call was cancelled (by its caller).")
Unknown = _status_class("Unknown", pb.UNKNOWN, "UNKNOWN: an error with no better code.")
InvalidArgument = _status_class(
    "InvalidArgument", pb.INVALID_ARGUMENT, "INVALID_ARGUMENT: the request (or an item of it) is wrong.")
DeadlineExceeded = _status_class(
    "DeadlineExceeded", pb.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED: no answer within the call's deadline.")
NotFound = _status_class("NotFound", pb.NOT_FOUND, "NOT_FOUND: what the request names does not exist.")
AlreadyExists = _status_class(
    "AlreadyExists", pb.ALREADY_EXISTS, "ALREADY_EXISTS: e.g. a provider id another connection serves.")
PermissionDenied = _status_class(
    "PermissionDenied", pb.PERMISSION_DENIED, "PERMISSION_DENIED: the connection's role does not allow it.")
ResourceExhausted = _status_class(
    "ResourceExhausted", pb.RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED: too large, or too many.")
FailedPrecondition = _status_class(
    "FailedPrecondition", pb.FAILED_PRECONDITION, "FAILED_PRECONDITION: not possible in the current state.")
Aborted = _status_class("Aborted", pb.ABORTED, "ABORTED: e.g. another item of an atomic batch failed.")
OutOfRange = _status_class("OutOfRange", pb.OUT_OF_RANGE, "OUT_OF_RANGE: a value outside what is allowed.")
Unimplemented = _status_class(
    "Unimplemented", pb.UNIMPLEMENTED, "UNIMPLEMENTED: e.g. a method the daemon does not know.")
Internal = _status_class("Internal", pb.INTERNAL, "INTERNAL: a bug, or a peer breaking the protocol.")
Unavailable = _status_class(
    "Unavailable", pb.UNAVAILABLE, "UNAVAILABLE: the daemon is not there (any more): try again later.")
DataLoss = _status_class("DataLoss", pb.DATA_LOSS, "DATA_LOSS: data was lost or corrupted.")
Unauthenticated = _status_class("Unauthenticated", pb.UNAUTHENTICATED, "UNAUTHENTICATED.")

_BY_CODE: Dict[int, type] = {cls.CODE: cls for cls in (
    Cancelled, Unknown, InvalidArgument, DeadlineExceeded, NotFound, AlreadyExists, PermissionDenied,
    ResourceExhausted, FailedPrecondition, Aborted, OutOfRange, Unimplemented, Internal, Unavailable, DataLoss,
    Unauthenticated)}


def error_for(code: int, message: str) -> HomedError:
    """The exception for a status: an instance of the code's class
    (``error_for(pb.NOT_FOUND, "…")`` is a :class:`NotFound`), or a plain
    :class:`HomedError` for a code this schema does not name (or OK)."""
    cls = _BY_CODE.get(int(code))
    return cls(message) if cls is not None else HomedError(code, message)


class DaemonNotRunning(Unavailable, ConnectionError):
    """Nothing listens on the socket (ENOENT: no socket file; ECONNREFUSED: a
    socket file that nobody serves). The message says which path, where the
    path came from and how to start homed.

    It is also a ``ConnectionError`` (an ``OSError``, with ``errno`` and
    ``filename``), so code written when connecting raised ``OSError`` keeps
    working."""

    def __init__(self, path: str, source: str, cause: Optional[OSError] = None):
        reason = (cause.strerror or str(cause)) if cause is not None else "nothing listens there"
        message = (f"cannot reach homed: no daemon is listening on {path} ({reason}); the socket path is "
                   f"from {source}. Start it with `homed` (or `homed --demo` to try it), or set HOMED_SOCKET "
                   f"to its socket")
        super().__init__(message)
        self.path = path
        self.source = source
        self.errno = cause.errno if cause is not None else None
        self.strerror = reason
        self.filename = path

    def __str__(self) -> str:  # HomedError's text, not OSError's "[Errno 2] …"
        return Exception.__str__(self)

    def copy(self) -> "HomedError":
        return Unavailable(self.message)


class SocketNotPermitted(PermissionDenied, PermissionError):
    """The socket is there but this process may not open it (EACCES): a user
    outside the socket's group. No restart of homed mends it, so a provider
    ends (exit status 2) rather than retrying. The message says the socket's
    mode, owner and group and how to join the group.

    It is also a ``PermissionError`` (an ``OSError``), as connecting raised before."""

    def __init__(self, path: str, cause: Optional[OSError] = None):
        import grp
        import os
        import pwd
        try:
            info = os.stat(path)
            owner = _name(pwd.getpwuid, info.st_uid)
            group = _name(grp.getgrgid, info.st_gid)
            where = f"{path} (mode {info.st_mode & 0o7777:04o}, owner {owner}, group {group})"
        except OSError:
            where, group = path, None
        me = _name(pwd.getpwuid, os.getuid())
        if group is None or group.isdigit():
            fix = "ask its owner for access"
        else:
            fix = f"join group {group}: `sudo usermod -aG {group} {me}`, then log in again (or restart the service)"
        super().__init__(f"permission denied on {where}: you ({me}, uid {os.getuid()}) may not open homed's socket; {fix}")
        self.path = path
        self.errno = cause.errno if cause is not None else None
        self.strerror = cause.strerror if cause is not None else "Permission denied"
        self.filename = path

    def __str__(self) -> str:
        return Exception.__str__(self)

    def copy(self) -> "HomedError":
        return PermissionDenied(self.message)


def _name(lookup, number: int) -> str:
    try:
        return lookup(number)[0]
    except KeyError:
        return str(number)
