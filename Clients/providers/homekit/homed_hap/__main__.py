"""`python -m homed_hap`: the homed-homekit-provider command."""

import sys

from .launch import main

sys.exit(main())
