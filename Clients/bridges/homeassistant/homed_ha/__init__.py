"""homed-mqtt: homed's home in Home Assistant, by MQTT discovery.

Layers, each a module with one job:
- config: the settings, from an INI file and flags (reads only those files);
- model: homed's home as plain values (no I/O);
- discovery: accessories as Home Assistant entities and their configs (no I/O);
- payloads: state payloads from values, writes from commands (no I/O);
- topics: which entity a command topic names, which config topics are ours (no I/O);
- commands: Home Assistant's commands as homed writes, on a thread and connection of their own;
- service: the bridge itself, on paho-mqtt and homed's Client with a StreamCursor.
"""
