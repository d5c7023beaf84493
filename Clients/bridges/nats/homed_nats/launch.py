"""The homed-nats command: its dependencies checked (homed.requirements) before
anything imports them, so that a wrong version is one sentence, not a traceback."""

from homed.requirements import check


def main() -> int:
    check("homed-nats", "homed-nats")
    from .command import main as run
    return run()


def remote() -> int:
    """homed-nats-remote: homed's protocol on a local socket, carried over NATS
    (what `homectl --nats URL …` starts)."""
    check("homed-nats", "homed-nats-remote")
    from .cli import main as run
    return run()
