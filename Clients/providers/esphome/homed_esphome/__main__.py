"""`python -m homed_esphome`: the homed-esphome command."""

import sys

from .launch import main

sys.exit(main())
