#!/usr/bin/env python3
"""homed-nats-remote: `homectl watch | get | set -o json` from another machine,
through NATS (homed_nats/cli.py; README.md, "From the command line").

    homed_nats_remote.py [--server URL]… [--site NAME] [--user-file FILE | --creds FILE] \\
        watch [--home H] [--room R] [--accessory A] [--characteristic PATH] [--kind K] [--snapshot] [-C N] [-W S]
    homed_nats_remote.py … get [--fresh] PATH…
    homed_nats_remote.py … set [--if CURRENT] PATH VALUE
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))

from homed_nats.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
