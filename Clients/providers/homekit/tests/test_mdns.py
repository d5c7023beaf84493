"""mDNS for real, as the provider runs when not told otherwise: `discover`
lists an accessory HAP-python advertises, and a running provider follows the
configuration number (c#) the accessory advertises when its database changes.
Each accessory here has a random device id, so that runs on one network never
see each other's. These need multicast DNS on this machine's network; where
there is none (a probe of zeroconf's own finds nothing), they are skipped,
saying so: the stubbed tests cover the rest."""

import asyncio
import json
import os
import random
import socket

import pytest

from .hk_helpers import CODE, Accessory, accessories, run_cli, start_provider, wait_accessories, wait_for


def _multicast_works() -> bool:
    from zeroconf import ServiceInfo
    from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

    async def probe():
        name = f"homed-probe-{random.getrandbits(32):08x}._homed-probe._tcp.local."
        info = ServiceInfo("_homed-probe._tcp.local.", name, port=9, addresses=[socket.inet_aton("127.0.0.1")])
        ours, theirs = AsyncZeroconf(), AsyncZeroconf()
        try:
            await ours.async_register_service(info)
            found = AsyncServiceInfo("_homed-probe._tcp.local.", name)
            return await found.async_request(theirs.zeroconf, 3000)
        finally:
            await ours.async_close()
            await theirs.async_close()
    try:
        return bool(asyncio.run(probe()))
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not _multicast_works(), reason="no multicast DNS on this machine's network")


def random_mac():
    return ":".join(f"{random.getrandbits(8):02X}" for _ in range(6))


def test_discover_lists_an_advertised_accessory(workdir, processes):
    mac = random_mac()
    accessory = Accessory(workdir, processes, mac=mac, mdns=True).start()
    state = os.path.join(workdir, "state")

    def listed():
        result = run_cli(state, "discover", "--seconds", "2")
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        return [line for line in lines if line["device"] == mac.lower()]
    [found] = wait_for(listed, 20, f"{mac} discovered")
    assert found["address"] == accessory.address and found["paired"] is False and found["category"] == 2
    assert run_cli(state, "pair", accessory.address, stdin=CODE + "\n").returncode == 0
    [found] = wait_for(lambda: [d for d in listed() if d["paired"]], 20, f"{mac} paired in its record")


def test_a_running_provider_follows_the_advertised_configuration_number(homed, workdir, processes):
    mac = random_mac()
    accessory = Accessory(workdir, processes, mac=mac, mdns=True).start()
    state = os.path.join(workdir, "state")
    assert run_cli(state, "pair", accessory.address, stdin=CODE + "\n").returncode == 0
    provider = start_provider(homed, state, processes, mdns=True)
    keys = [f"{mac.lower()}/{aid}" for aid in range(1, 7)]
    with homed.client() as client:
        wait_accessories(client, keys, provider)
        accessory.send({"grow": True})
        accessory.process.expect("grown")
        found = wait_accessories(client, keys + [f"{mac.lower()}/8"], provider, timeout=30)
        assert found[f"{mac.lower()}/8"].name == "Late outlet"
        assert "connection lost" not in provider.log()  # the same session all along
        assert len(accessories(client)) == 7
