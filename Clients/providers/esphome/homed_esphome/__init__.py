"""homed-esphome: ESPHome devices, over their native API (aioesphomeapi), as
homed accessories: one accessory per device, keyed by its MAC address."""

__version__ = "0.1.0"
