"""homed-zigbee2mqtt: Zigbee2MQTT's devices as homed accessories.

Layers, each a module with one job:
- values: numbers and names brought to what the daemon takes (no I/O);
- mapping: a bridge/devices entry as an accessory and its bindings (no I/O);
- echo: writes confirmed by the device's state echo (no I/O);
- bridge: the Zigbee2MQTT topics' payloads parsed and checked (no I/O);
- service: the provider itself, on paho-mqtt and homed.provider.
"""
