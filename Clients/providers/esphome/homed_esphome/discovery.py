"""`homed-esphome discover`: ESPHome devices announced by mDNS
(`_esphomelib._tcp`), printed as JSON lines and as `[[device]]` tables to
paste into the configuration. The provider itself connects by the configured
address only; this is help for writing that file."""

from __future__ import annotations

import asyncio
import ipaddress
from typing import Dict, Iterable, Optional

SERVICE_TYPE = "_esphomelib._tcp.local."


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value or "")


def entry_from(name: str, addresses: Iterable[str], port: int, properties: Dict) -> Optional[dict]:
    """One device from its mDNS service (no I/O): its ESPHome name, an address
    (IPv4 first), its port, its MAC as the provider keys it, and whether it
    wants encryption (an `api_encryption` TXT record)."""
    props = {_text(k): _text(v) for k, v in (properties or {}).items()}
    short = name[: -len("." + SERVICE_TYPE)] if name.endswith("." + SERVICE_TYPE) else name.split(".", 1)[0]
    ordered = sorted(addresses, key=lambda a: ipaddress.ip_address(a).version)
    if not short or not ordered:
        return None
    mac = props.get("mac", "").replace(":", "").upper()
    return {"name": short, "host": ordered[0], "port": int(port),
            "mac": ":".join(mac[i:i + 2] for i in range(0, len(mac), 2)) if len(mac) == 12 else "",
            "friendly_name": props.get("friendly_name", ""), "version": props.get("version", ""),
            "encryption": bool(props.get("api_encryption"))}


def toml_of(entry: dict) -> str:
    lines = ["[[device]]", f'name = "{entry["name"]}"', f'host = "{entry["host"]}"']
    if entry["port"] != 6053:
        lines.append(f"port = {entry['port']}")
    if entry["encryption"]:
        lines.append(f"# encrypted: put `{entry['name']} = KEY` in the credentials file")
    return "\n".join(lines) + "\n"


async def discover(seconds: float):
    from zeroconf import ServiceStateChange
    from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

    zc = AsyncZeroconf()
    names = set()

    def changed(zeroconf, service_type, name, state_change):
        if state_change in (ServiceStateChange.Added, ServiceStateChange.Updated):
            names.add(name)

    browser = AsyncServiceBrowser(zc.zeroconf, [SERVICE_TYPE], handlers=[changed])
    try:
        await asyncio.sleep(seconds)
        found = []
        for name in sorted(names):
            info = AsyncServiceInfo(SERVICE_TYPE, name)
            if await info.async_request(zc.zeroconf, 3000):
                entry = entry_from(name, info.parsed_scoped_addresses(), info.port or 6053, info.properties)
                if entry is not None:
                    found.append(entry)
        return found
    finally:
        await browser.async_cancel()
        await zc.async_close()
