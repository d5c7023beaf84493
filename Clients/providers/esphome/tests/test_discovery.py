"""`homed-esphome discover`: the mDNS entries as configuration (no I/O), and the
installed command finding a service announced for real with zeroconf on
loopback (a random name, so that runs on one network never see each other's)."""

import asyncio
import json
import random
import socket
import subprocess

from homed_esphome.discovery import SERVICE_TYPE, entry_from, toml_of

from .esp_helpers import PROGRAM


def test_an_announced_device_as_a_configuration_entry():
    entry = entry_from("kitchen-light." + SERVICE_TYPE, ["fe80::1", "192.168.1.40"], 6053,
                       {b"mac": b"a4cf12b3c4d5", b"friendly_name": b"Kitchen light", b"version": b"2025.6.0",
                        b"api_encryption": b"Noise_NNpsk0_25519_ChaChaPoly_SHA256"})
    assert entry == {"name": "kitchen-light", "host": "192.168.1.40", "port": 6053, "mac": "A4:CF:12:B3:C4:D5",
                     "friendly_name": "Kitchen light", "version": "2025.6.0", "encryption": True}
    assert toml_of(entry) == ('[[device]]\nname = "kitchen-light"\nhost = "192.168.1.40"\n'
                              "# encrypted: put `kitchen-light = KEY` in the credentials file\n")
    plain = entry_from("porch." + SERVICE_TYPE, ["10.0.0.9"], 6054, {b"mac": b"short"})
    assert plain["mac"] == "" and not plain["encryption"]
    assert "port = 6054" in toml_of(plain)
    assert entry_from("nowhere." + SERVICE_TYPE, [], 6053, {}) is None


def test_discover_lists_a_device_announced_by_mdns():
    from zeroconf import ServiceInfo
    from zeroconf.asyncio import AsyncZeroconf

    name = f"homed-test-{random.getrandbits(32):08x}"

    async def run():
        zc = AsyncZeroconf(interfaces=["127.0.0.1"])
        info = ServiceInfo(SERVICE_TYPE, f"{name}.{SERVICE_TYPE}", port=6055, server=f"{name}.local.",
                           addresses=[socket.inet_aton("127.0.0.1")], properties={"mac": "aabbccddeeff"})
        await zc.async_register_service(info)
        try:
            process = await asyncio.create_subprocess_exec(PROGRAM, "discover", "--seconds", "3",
                                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = await asyncio.wait_for(process.communicate(), 30)
            return process.returncode, out.decode(), err.decode()
        finally:
            await zc.async_close()

    code, out, err = asyncio.run(run())
    assert code == 0, err
    found = [json.loads(line) for line in out.splitlines() if line.strip()]
    ours = [e for e in found if e["name"] == name]
    assert ours == [{"name": name, "host": "127.0.0.1", "port": 6055, "mac": "AA:BB:CC:DD:EE:FF",
                     "friendly_name": "", "version": "", "encryption": False}]
    assert f'name = "{name}"' in err
