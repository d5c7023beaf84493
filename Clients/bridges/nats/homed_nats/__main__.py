"""`python -m homed_nats`: the homed-nats command."""

import sys

from .launch import main

sys.exit(main())
