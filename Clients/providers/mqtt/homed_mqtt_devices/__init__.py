"""homed-mqtt-devices: devices announced with Home Assistant's MQTT discovery
(Tasmota, ESPHome, Shelly, OpenMQTTGateway), with Tasmota's own discovery and
Shelly Gen2+ devices' RPC, as homed accessories.

Layers, each a module with one job:
- abbreviations: discovery's abbreviated keys expanded, `~` put in (no I/O);
- templates: the value templates devices send, without Jinja (no I/O);
- discovery: config topics and payloads read, device-based ones split (no I/O);
- values: numbers, colours, units and names brought to HAP's (no I/O);
- bindings, components: one entity as HAP services and bindings (no I/O);
- tasmota, tasmota_lights, tasmota_sensors, tasmota_states: Tasmota's own
  discovery as entities (no I/O); tasmota_source: read on the broker;
- shelly, shelly_rpc: a Shelly Gen2+ device's answers as entities, its RPC
  (no I/O); shelly_source: the devices asked on the broker;
- native_entity: what those two share (no I/O);
- accessory: a device's entities as one accessory (no I/O);
- echo_errors: writes confirmed by the state's echo, or refused by the device (no I/O);
- service: the provider itself, on paho-mqtt and homed.provider.
"""
