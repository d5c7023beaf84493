"""`python -m homed_ha`: the homed-mqtt command."""

import sys

from .launch import main

sys.exit(main())
