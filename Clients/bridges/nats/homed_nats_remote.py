#!/usr/bin/env python3
"""homed-nats-remote: `homectl watch | get | set` from another machine, through
NATS (homed_nats/cli.py; README.md, "From the command line"); what
`homectl --nats URL watch | get | set` runs in its place.

    homed-nats-remote [--server URL]… [--site NAME] [--user-file FILE | --creds FILE] \\
        watch [--home H] [--room R] [--accessory A] [--characteristic PATH] [--kind K] [--snapshot] [-C N] [-W S]
    homed-nats-remote … get [--fresh] [--home H] PATH…
    homed-nats-remote … set [--home H] [--if CURRENT] PATH VALUE
    (-o text|json|yaml before or after the command; yaml is get's and set's)

This file runs from the source tree and, installed as PREFIX/bin/homed-nats-remote
(Scripts/install.sh, the Debian package), with its modules in PREFIX/lib/homed/python.
"""

import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
# Installed: PREFIX/bin/ → PREFIX/lib/homed/python (homed_nats, and the Python client
# `homed` unless the system has it). In the source tree: beside this file, and
# Clients/python for the client.
INSTALLED = os.path.join(os.path.dirname(HERE), "lib", "homed", "python")
for path in (os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"), INSTALLED, HERE):
    if os.path.isdir(os.path.join(path, "homed")) or os.path.isdir(os.path.join(path, "homed_nats")):
        sys.path.insert(0, path)
# Installed, no byte code beside the modules: the files there are the install's
# manifest's (or the package's), and uninstalling leaves nothing behind.
sys.dont_write_bytecode = sys.dont_write_bytecode or os.path.isdir(INSTALLED)

try:
    import nats  # noqa: F401 - said plainly when missing, rather than a traceback
    import google.protobuf  # noqa: F401
except ImportError as missing:
    print(f"homed-nats-remote: needs the Python package {missing.name or missing} "
          f"(pip install nats-py protobuf)", file=sys.stderr)
    sys.exit(14)

from homed_nats.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
