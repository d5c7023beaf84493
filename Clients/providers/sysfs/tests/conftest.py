"""The sysfs provider's tests: a real homed (Clients/python/tests/homed_testkit.py)
and the provider run as a real process against a fake sysfs tree."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROVIDER_DIR = HERE.parent
REPO = PROVIDER_DIR.parents[2]
for path in (REPO / "Clients" / "python" / "tests", REPO / "Clients" / "python", PROVIDER_DIR):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from provider_fixtures import homed, processes, workdir  # noqa: E402,F401
