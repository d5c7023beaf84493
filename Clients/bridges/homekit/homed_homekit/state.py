"""The bridge's state directory: what must survive restarts.

    ids.json           aid/iid of every homed accessory, service, characteristic (ids.py)
    setup.json         each bridge's setup code and setup id (the QR code's content)
    bridge-N.state     each bridge's HAP identity and paired controllers (HAP-python's file)

Files are written to a temporary file and renamed, so a crash never leaves one
half-written; the directory is 0700, as it holds the bridges' private keys.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from typing import Dict, Optional

from .setupcode import new_pincode, new_setup_id


def default_state_dir() -> str:
    if os.environ.get("STATE_DIRECTORY"):          # systemd's StateDirectory=
        return os.environ["STATE_DIRECTORY"].split(":")[0]
    if os.geteuid() == 0:
        return "/var/lib/homed/homekit"
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "homed", "homekit")


class StateDir:
    def __init__(self, path: str):
        self.path = path
        os.makedirs(path, mode=0o700, exist_ok=True)

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def bridge_state_file(self, index: int) -> str:
        return self.file(f"bridge-{index}.state")

    def load(self, name: str) -> Optional[dict]:
        try:
            with open(self.file(name), encoding="utf-8") as f:
                return json.load(f)
        except FileNotFoundError:
            return None

    def save(self, name: str, data: dict) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.path, prefix=f".{name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.file(name))
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def bridge_setup(self, index: int, rng: Optional[random.Random] = None) -> Dict[str, str]:
        """Bridge ``index``'s setup code and setup id, made once and kept."""
        setup = self.load("setup.json") or {}
        entry = setup.get(str(index))
        if entry is None:
            rng = rng or random.SystemRandom()
            entry = {"pincode": new_pincode(rng), "setup_id": new_setup_id(rng)}
            setup[str(index)] = entry
            self.save("setup.json", setup)
        return entry

    def paired_controllers(self, index: int) -> Optional[int]:
        """How many controllers are paired with bridge ``index`` (None: never started)."""
        data = self.load(f"bridge-{index}.state")
        return None if data is None else len(data.get("paired_clients", {}))
