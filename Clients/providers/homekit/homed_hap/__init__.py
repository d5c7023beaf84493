"""homed-homekit-provider: HAP-IP accessories (paired with aiohomekit) as homed
accessories. The no-I/O layers are `catalog`, `mapping`, `hapvalues` and `names`;
`store` reads and writes the pairing files; `device` and `service` do the I/O
(README.md)."""
