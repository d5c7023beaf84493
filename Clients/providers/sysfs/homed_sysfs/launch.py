"""The homed-sysfs command: its dependencies checked (homed.requirements) before
anything imports them, so that a wrong version is one sentence, not a traceback."""

from homed.requirements import check


def main() -> int:
    check("homed-sysfs", "homed-sysfs")
    from .command import main as run
    return run()
