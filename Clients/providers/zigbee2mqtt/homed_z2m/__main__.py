"""`python -m homed_z2m`: the homed-zigbee2mqtt command."""

import sys

from .launch import main

sys.exit(main())
