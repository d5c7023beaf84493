"""The pairing as saved: the bridge's address, the application key the bridge
gave when its link button was pressed, and its certificate's SHA-256 (pinned:
the bridge's certificate is self-signed or signed by Signify's own root).
Written whole or not at all, mode 0600 in a directory of mode 0700."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from typing import Optional

__all__ = ["Pairing", "default_key_file", "save", "load"]


@dataclass
class Pairing:
    address: str  # HOST or HOST:PORT
    application_key: str
    client_key: str = ""  # for the entertainment API, which this provider does not use; kept for the user
    certificate_sha256: str = ""  # hex; "" when the pairing was made with --cafile


def default_key_file() -> str:
    """$STATE_DIRECTORY/bridge.json (systemd's StateDirectory=), else
    /var/lib/homed/hue/bridge.json as root, else under $XDG_STATE_HOME."""
    given = os.environ.get("STATE_DIRECTORY")
    if given:
        return os.path.join(given.split(":")[0], "bridge.json")
    if os.geteuid() == 0:
        return "/var/lib/homed/hue/bridge.json"
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "homed", "hue", "bridge.json")


def save(path: str, pairing: Pairing) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".bridge-", dir=directory)  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(asdict(pairing), f, indent=1, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def load(path: str) -> Optional[Pairing]:
    """The pairing, or None when there is no file; ValueError when it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not a pairing file ({error})") from None
    if not isinstance(data, dict) or not data.get("address") or not data.get("application_key"):
        raise ValueError(f"{path} is not a pairing file (no address or application_key)")
    return Pairing(str(data["address"]), str(data["application_key"]), str(data.get("client_key", "")),
                   str(data.get("certificate_sha256", "")))
