"""The pairings, one file per paired device in the state directory:
``<state>/pairings/<device id>.json``, mode 0600 in a directory of mode 0700
(they hold the controller's long-term secret key). Each holds aiohomekit's
pairing data and the accessory database last read, so that after a restart
the accessories are registered (unreachable) before the device answers.

A file is written whole or not at all (a temporary file, fsync, rename), so a
pairing interrupted at any point leaves no file behind."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional

log = logging.getLogger("homed-homekit.store")


def default_state_dir() -> str:
    """$STATE_DIRECTORY (systemd's StateDirectory=), else /var/lib/homed/homekit
    as root, else $XDG_STATE_HOME/homed/homekit (~/.local/state/homed/homekit)."""
    given = os.environ.get("STATE_DIRECTORY")
    if given:
        return given.split(":")[0]
    if os.geteuid() == 0:
        return "/var/lib/homed/homekit"
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "homed", "homekit")


@dataclass
class Record:
    """One paired device as stored."""

    device_id: str
    pairing: Dict[str, object]
    database: List[dict] = field(default_factory=list)
    config_num: int = 0
    category: int = 0

    @property
    def address(self) -> str:
        return f"{self.pairing.get('AccessoryIP')}:{self.pairing.get('AccessoryPort')}"


def file_name(device_id: str) -> str:
    return device_id.lower().replace(":", "-") + ".json"


class Store:
    """The pairing files of one state directory."""

    def __init__(self, state_dir: str):
        self.state_dir = state_dir
        self.directory = os.path.join(state_dir, "pairings")

    def _ensure(self) -> None:
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        os.chmod(self.directory, 0o700)

    def path(self, device_id: str) -> str:
        return os.path.join(self.directory, file_name(device_id))

    def save(self, record: Record) -> None:
        self._ensure()
        target = self.path(record.device_id)
        temporary = f"{target}.tmp-{os.getpid()}"
        data = json.dumps({"device_id": record.device_id.lower(), "pairing": record.pairing,
                           "database": record.database, "config_num": record.config_num,
                           "category": record.category}, sort_keys=True).encode()
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, data)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            os.unlink(temporary)
            raise
        os.close(fd)
        os.replace(temporary, target)
        self._sync_directory()

    def _sync_directory(self) -> None:
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def remove(self, device_id: str) -> bool:
        try:
            os.unlink(self.path(device_id))
        except FileNotFoundError:
            return False
        self._sync_directory()
        return True

    def load(self, device_id: str) -> Optional[Record]:
        try:
            with open(self.path(device_id), "rb") as f:
                return self._record(json.load(f))
        except FileNotFoundError:
            return None

    def names(self) -> List[str]:
        try:
            return sorted(n for n in os.listdir(self.directory) if n.endswith(".json"))
        except FileNotFoundError:
            return []

    def load_all(self) -> List[Record]:
        """Every readable pairing; a file that cannot be read is logged and skipped."""
        records = []
        for name in self.names():
            path = os.path.join(self.directory, name)
            try:
                with open(path, "rb") as f:
                    records.append(self._record(json.load(f)))
            except (OSError, ValueError, KeyError, TypeError) as error:
                log.error("pairing file %s cannot be read (%s); that device is left out", path, error)
        return records

    @staticmethod
    def _record(data: dict) -> Record:
        pairing = data["pairing"]
        if not isinstance(pairing, dict) or "AccessoryPairingID" not in pairing:
            raise ValueError("no AccessoryPairingID in it")
        return Record(str(data["device_id"]).lower(), pairing, list(data.get("database") or []),
                      int(data.get("config_num") or 0), int(data.get("category") or 0))
