"""`python -m homed_hue`: the homed-hue command."""

import sys

from .launch import main

sys.exit(main())
