"""homed-sysfs: Linux LEDs, backlights and hwmon sensors as homed accessories (README.md)."""
