"""The homed-hue command: its dependencies checked (homed.requirements) before
anything imports them, so that a wrong version is one sentence, not a traceback."""

from homed.requirements import check


def main() -> int:
    check("homed-hue", "homed-hue")
    from .command import main as run
    return run()
