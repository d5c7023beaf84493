"""Where the daemon's socket is, and where that answer came from.

The source matters in error messages: a socket path from a forgotten
``HOMED_SOCKET`` is a common surprise, so a client that finds nothing listening
says whether the path was given, came from the environment, or is the default.
"""

from __future__ import annotations

import os
from typing import Optional, Tuple

#: ``resolve_socket_path``'s sources, as error messages name them.
SOURCE_ARGUMENT = "the `path` argument"
SOURCE_ENVIRONMENT = "$HOMED_SOCKET"
SOURCE_DEFAULT = "the default for this user"


def default_socket_path() -> str:
    """$HOMED_SOCKET, else $XDG_RUNTIME_DIR/homed/homed.sock, else
    /run/homed/homed.sock as root, else /tmp/homed-$UID/homed.sock (the order
    docs/protocol.md gives, as homectl and the daemon use it)."""
    return resolve_socket_path(None)[0]


def resolve_socket_path(path: Optional[str]) -> Tuple[str, str]:
    """(the socket path to use, where it came from): ``path`` when given, else
    the default of :func:`default_socket_path`, with one of ``SOURCE_*``."""
    if path:
        return path, SOURCE_ARGUMENT
    env = os.environ.get("HOMED_SOCKET")
    if env:
        return env, SOURCE_ENVIRONMENT
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "homed", "homed.sock"), SOURCE_DEFAULT
    if os.geteuid() == 0:
        return "/run/homed/homed.sock", SOURCE_DEFAULT
    return f"/tmp/homed-{os.getuid()}/homed.sock", SOURCE_DEFAULT


def nothing_listens(error: OSError) -> bool:
    """True for the connect errors that mean no daemon is there: no socket file
    (ENOENT), or a socket file nobody serves (ECONNREFUSED)."""
    return isinstance(error, (FileNotFoundError, ConnectionRefusedError))
