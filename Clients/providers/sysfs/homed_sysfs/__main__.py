"""`python -m homed_sysfs`: the homed-sysfs command."""

import sys

from .launch import main

sys.exit(main())
