"""The homed-esphome command: its dependencies checked (homed.requirements) before
anything imports them, so that a wrong version is one sentence, not a traceback."""

from homed.requirements import check


def main() -> int:
    check("homed-esphome", "homed-esphome")
    from .command import main as run
    return run()
