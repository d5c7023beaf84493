"""homed-hue: a Philips Hue bridge's devices as homed accessories (CLIP v2).

Layers, each a module with one job:
- resources: the bridge's resources, kept current by its events (no I/O);
- mapping: devices and their resources as accessories and bindings (no I/O);
- writes: PUT bodies and the writes waiting for the bridge's event (no I/O);
- sse: server-sent events parsed (no I/O);
- keyfile: the pairing saved (mode 0600);
- bridge, pairing: the CLIP v2 API over HTTPS (aiohttp);
- service: the provider itself, on homed.aio.Provider.
"""
