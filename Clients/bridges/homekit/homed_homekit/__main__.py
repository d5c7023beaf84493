"""`python -m homed_homekit`: the homed-homekit command."""

import sys

from .launch import main

sys.exit(main())
