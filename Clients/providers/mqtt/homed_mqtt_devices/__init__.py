"""homed-mqtt-devices: devices announced with Home Assistant's MQTT discovery
(Tasmota, ESPHome, Shelly, OpenMQTTGateway) as homed accessories.

Layers, each a module with one job:
- abbreviations: discovery's abbreviated keys expanded, `~` put in (no I/O);
- templates: the value templates devices send, without Jinja (no I/O);
- discovery: config topics and payloads read, device-based ones split (no I/O);
- values: numbers, colours, units and names brought to HAP's (no I/O);
- bindings, components: one entity as HAP services and bindings (no I/O);
- accessory: a device's entities as one accessory (no I/O);
- echo: writes confirmed by the state topic's echo (no I/O);
- service: the provider itself, on paho-mqtt and homed.provider.
"""
