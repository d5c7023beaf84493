"""`python -m homed_mqtt_devices`: the homed-mqtt-devices command."""

import sys

from .launch import main

sys.exit(main())
