"""A database that changes under a running provider, connection up: the
accessory adds an outlet and bumps its configuration number (c#); zeroconf's
new record reaches aiohomekit's pairing (mDNS is stubbed: the test hands the
record in, as aiohomekit's browser would) and the provider registers again.
The provider runs in this process here, so that the test can be zeroconf."""

import asyncio
import os
import threading

from aiohomekit.model.categories import Categories
from aiohomekit.model.feature_flags import FeatureFlags
from aiohomekit.model.status_flags import StatusFlags
from aiohomekit.zeroconf import HomeKitService

from .hk_helpers import DEVICE, KEYS, Setup, key, wait_accessories, wait_for
from homed_hap.service import HomeKitProvider, Settings


class InProcess:
    """The provider on an event loop of its own thread."""

    def __init__(self, settings):
        self.loop = asyncio.new_event_loop()
        self.provider = None
        self.settings = settings
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.provider = HomeKitProvider(self.settings)
        self.loop.run_until_complete(self.provider.run())

    def start(self):
        self.thread.start()
        wait_for(lambda: self.provider is not None and DEVICE in self.provider.links, 15, "the device link")
        return self

    def call(self, function, *args):
        self.loop.call_soon_threadsafe(function, *args)

    def stop(self):
        if self.provider is not None:
            self.call(self.provider.stopping.set)
        self.thread.join(10)


def record(port, config_num):
    return HomeKitService(name="Test bridge", id=DEVICE, model="Bridge", feature_flags=FeatureFlags(0),
                          status_flags=StatusFlags(0), config_num=config_num, state_num=1,
                          category=Categories.BRIDGE, protocol_version="1.1", type="_hap._tcp.local.",
                          address="127.0.0.1", addresses=["127.0.0.1"], port=port)


def test_a_higher_configuration_number_re_registers_the_database_without_a_reconnection(homed, accessory, workdir,
                                                                                        processes):
    setup = Setup(homed, accessory, workdir, processes)
    setup.pair()
    running = InProcess(Settings(setup.state_dir, homed.socket_path, mdns=False, write_timeout=3,
                                 read_timeout=3)).start()
    try:
        with homed.client() as client:
            found = wait_accessories(client, KEYS, None)
            link = running.provider.links[DEVICE]
            connection = link.pairing.connection.transport
            accessory.send({"grow": True})
            grown = accessory.process.expect("grown")
            running.call(link.pairing._async_description_update, record(accessory.port, grown["config"]))
            again = wait_accessories(client, KEYS + [key(8)], None)
            assert again[key(8)].name == "Late outlet" and again[key(8)].bridge_id == found[key(1)].id
            assert {k: again[k].id for k in KEYS} == {k: a.id for k, a in found.items()}
            assert link.pairing.connection.transport is connection  # the same session all along
            saved = open(os.path.join(setup.state_dir, "pairings", "aa-bb-cc-dd-ee-01.json")).read()
            assert "Late outlet" in saved  # the next start registers it at once
    finally:
        running.stop()
