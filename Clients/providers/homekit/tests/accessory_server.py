#!/usr/bin/env python3
"""A HAP-IP accessory served by HAP-python on loopback, as a real process for
the tests: a bridge with a lamp (Lightbulb with Brightness, and a hidden
TemperatureSensor), a switch, a temperature sensor, a button (StatelessProgrammableSwitch) and a gadget with a
custom characteristic (and a custom service, which homed cannot take).

    accessory_server.py --port P --state FILE [--pincode 031-45-154] [--layout 1|2]

mDNS is stubbed (the tests need no multicast) unless --mdns; the pairing is kept in --state,
so a restarted server is the same paired accessory. Layout 2 adds an outlet
(aid 7) and a Brightness to nothing else: HAP-python bumps its configuration
number (c#) when the database's hash changes.

stdout: one JSON object per line: {"event": "ready"}, {"event": "set", "aid",
"iid", "value"} for each value a controller wrote. stdin: JSON commands
{"set": [aid, "Characteristic", value]} (a change on the accessory's side,
notified to subscribed controllers) and {"press": [aid, value, …]} (presses
of a StatelessProgrammableSwitch, one EVENT message each), {"grow": true} (an
outlet, aid 8, added while running, and c# bumped: {"event": "grown", "config"}).

The gadget's custom "Gadget reply" has the write-response permission ("wr"):
a write that asks for the response ("r") gets "ok:" and the value written
back; {"event": "put", "items": [[aid, iid, r], …]} says what each PUT asked.

The gadget's custom "Gadget level" refuses writes by value, for the tests of
HAP errors: 13 → -70410 (invalid value), 19 → -70402 (the setter fails:
service communication failure), 17 → the process dies before it answers."""

import argparse
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from unittest import mock

from pyhap.accessory import Accessory, Bridge
from pyhap.accessory_driver import AccessoryDriver
from pyhap.characteristic import Characteristic
from pyhap.hap_handler import HAPServerHandler
from pyhap.hap_protocol import HAPServerProtocol
from pyhap.hap_server import HAPServer
from pyhap.service import Service

# HAP-python's own SRP server refuses about one right setup code in 85 (it drops
# leading zero bytes that controllers, like real accessories, keep: see
# Clients/bridges/homekit/homed_homekit/hapsrp.py). The accessory the provider is
# tested against pairs as real accessories do, so that no test fails on that bug.
from homed_homekit.hapsrp import PairSetupSteps, use_padded_verifier

GADGET_LEVEL = "5B1E0F6A-3C2D-4E8F-9A7B-000000000001"
GADGET_SERVICE = "5B1E0F6A-3C2D-4E8F-9A7B-0000000000AA"
GADGET_REPLY = "5B1E0F6A-3C2D-4E8F-9A7B-000000000003"


def emit(**event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


class _NoMdns:
    """Stands for zeroconf's AsyncZeroconf: the tests need no multicast."""

    def __init__(self, *args, **kwargs):
        pass

    async def async_register_service(self, *args, **kwargs):
        return None

    async def async_unregister_service(self, *args, **kwargs):
        return None

    async def async_update_service(self, *args, **kwargs):
        return None

    async def async_close(self):
        return None


class _PaddedHandler(PairSetupSteps, HAPServerHandler):
    pass


class _PaddedProtocol(HAPServerProtocol):
    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.handler = _PaddedHandler(self.accessory_driver, self.peername)


class _PaddedServer(HAPServer):
    async def async_start(self, loop) -> None:
        self.loop = loop
        self.server = await loop.create_server(
            lambda: _PaddedProtocol(loop, self.connections, self.accessory_handler), self._addr_port[0],
            self._addr_port[1])
        self.async_cleanup_connections()


class Driver(AccessoryDriver):
    """Answers -70410 for a write of 13 to the gadget's level, as a device that
    refuses a value does (HAP-python itself never answers it for a value); pairs
    with the padding real accessories use."""

    refuse = None  # the characteristic

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http_server = _PaddedServer(self.http_server._addr_port, self)

    def setup_srp_verifier(self):
        use_padded_verifier(self)

    def set_characteristics(self, chars_query, client_addr):
        queries = chars_query.get("characteristics", [])
        if any("value" in q for q in queries):
            # Which items asked for the write response (HAP's "r").
            emit(event="put", items=[[q.get("aid"), q.get("iid"), bool(q.get("r"))] for q in queries if "value" in q])
        refused = [q for q in queries if q.get("value") == 13
                   and self.accessory.get_characteristic(q.get("aid"), q.get("iid")) is self.refuse]
        if refused:
            return {"characteristics": [{"aid": q["aid"], "iid": q["iid"], "status": -70410} for q in queries]}
        return super().set_characteristics(chars_query, client_addr)


class HiddenService(Service):
    """A service with HAP's "hidden" flag, which HAP-python's Service never writes."""

    def to_HAP(self, include_value=True):
        return {**super().to_HAP(include_value), "hidden": True}


class ReadyBridge(Bridge):
    """Says "ready" once the driver runs it: after its HAP server listens."""

    async def run(self):
        emit(event="ready", config=self.driver.state.config_version)
        await super().run()


def build(driver, layout):
    bridge = ReadyBridge(driver, "Test bridge")
    bridge.set_info_service(firmware_revision="1.0.0", manufacturer="homed tests", model="Bridge", serial_number="B-1")
    accessories = {}

    lamp = Accessory(driver, "Desk lamp", aid=2)
    lamp.set_info_service(manufacturer="homed tests", model="Lamp", serial_number="L-2")
    light = lamp.add_preload_service("Lightbulb", chars=["Brightness"])
    light.configure_char("On", value=False)
    light.configure_char("Brightness", value=40)
    # The lamp driver's own sensor, hidden from users (as a device's internal services are).
    internal = HiddenService(uuid.UUID("0000008A-0000-1000-8000-0026BB765291"), "Driver temperature")
    internal.add_characteristic(driver.loader.get_char("CurrentTemperature"))
    internal.get_characteristic("CurrentTemperature").set_value(41.0, should_notify=False)
    lamp.add_service(internal)
    accessories[2] = lamp

    switch = Accessory(driver, "Fan switch", aid=3)
    switch.add_preload_service("Switch").configure_char("On", value=False)
    accessories[3] = switch

    sensor = Accessory(driver, "Hall sensor", aid=4)
    sensor.add_preload_service("TemperatureSensor").configure_char("CurrentTemperature", value=19.5)
    accessories[4] = sensor

    button = Accessory(driver, "Door button", aid=5)
    button.add_preload_service("StatelessProgrammableSwitch")
    accessories[5] = button

    gadget = Accessory(driver, "Gadget", aid=6)
    plug = driver.loader.get_service("Switch")
    plug.configure_char("On", value=True)
    level = Characteristic("Gadget level", uuid.UUID(GADGET_LEVEL), {
        "Format": "uint8", "Permissions": ["pr", "pw", "ev"], "minValue": 0, "maxValue": 20, "minStep": 1})
    level.set_value(5, should_notify=False)
    plug.add_characteristic(level)  # before add_service, which gives the iids
    # A write-response characteristic ("wr"): answers a write with "ok:" and the
    # value written when the controller asks for the response ("r").
    reply = Characteristic("Gadget reply", uuid.UUID(GADGET_REPLY), {
        "Format": "string", "Permissions": ["pr", "pw", "wr"]})
    reply.set_value("", should_notify=False)
    plug.add_characteristic(reply)
    gadget.add_service(plug)
    custom = Service(uuid.UUID(GADGET_SERVICE), "Gadget internals")
    custom.add_characteristic(Characteristic("Gadget mode", uuid.UUID("5B1E0F6A-3C2D-4E8F-9A7B-000000000002"),
                                             {"Format": "string", "Permissions": ["pr"]}))
    gadget.add_service(custom)
    accessories[6] = gadget

    if layout >= 2:
        outlet = Accessory(driver, "Extra outlet", aid=7)
        service = outlet.add_preload_service("Outlet")
        service.configure_char("On", value=True)
        service.configure_char("OutletInUse", value=True)
        accessories[7] = outlet

    for accessory in accessories.values():
        bridge.add_accessory(accessory)
    return bridge, accessories, level


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--pincode", default="031-45-154")
    parser.add_argument("--layout", type=int, default=1)
    parser.add_argument("--mac", default="AA:BB:CC:DD:EE:01")
    parser.add_argument("--mdns", action="store_true", help="advertise for real (zeroconf), not stubbed")
    args = parser.parse_args()
    import contextlib
    with contextlib.nullcontext() if args.mdns else mock.patch("pyhap.accessory_driver.AsyncZeroconf", _NoMdns):
        driver = Driver(port=args.port, address="127.0.0.1", persist_file=args.state,
                        pincode=args.pincode.encode(), mac=args.mac)
        bridge, accessories, level = build(driver, args.layout)
        driver.add_accessory(bridge)
        Driver.refuse = level

        def level_set(value):
            if value == 17:
                os._exit(3)  # gone mid-write: no answer
            if value == 19:
                raise RuntimeError("the gadget's motor is stuck")
            emit(event="set", aid=6, characteristic="Gadget level", value=value)
        level.setter_callback = level_set
        reply = accessories[6].get_service("Switch").get_characteristic("Gadget reply")

        def reply_set(value):
            emit(event="set", aid=6, characteristic="Gadget reply", value=value)
            reply.set_value(f"ok:{value}", should_notify=False)  # read afterwards, it is the response too
            return f"ok:{value}"  # HAP-python sends it when the write asked for it
        reply.setter_callback = reply_set
        for aid, accessory in accessories.items():
            for service in accessory.services:
                for char in service.characteristics:
                    if (char.display_name not in ("Gadget level", "Gadget reply")
                            and "pw" in char.properties.get("Permissions", [])):
                        char.setter_callback = (lambda name, a: lambda v: emit(event="set", aid=a,
                                                                               characteristic=name, value=v))(
                            char.display_name, aid)

        def commands():
            for line in sys.stdin:
                try:
                    command = json.loads(line)
                except ValueError:
                    continue
                driver.loop.call_soon_threadsafe(apply, command)

        def apply(command):
            if "set" in command:
                aid, name, value = command["set"]
                for service in accessories[aid].services:
                    for char in service.characteristics:
                        if char.display_name == name:
                            char.set_value(value)
            if "grow" in command:
                # The database changes while controllers stay connected: an outlet
                # added, the configuration number bumped (and advertised, were
                # mDNS not stubbed), as a firmware update without a restart does.
                outlet = Accessory(driver, "Late outlet", aid=8)
                service = outlet.add_preload_service("Outlet")
                service.configure_char("On", value=False)
                service.configure_char("OutletInUse", value=False)
                driver.accessory.add_accessory(outlet)
                accessories[8] = outlet
                driver.config_changed()
                emit(event="grown", config=driver.state.config_version)
            if "press_timed" in command:
                # One press, and when (CLOCK_MONOTONIC, which every process on
                # the machine shares): for the benchmark's event latency.
                aid, value = command["press_timed"]
                char = accessories[aid].get_service("StatelessProgrammableSwitch").get_characteristic(
                    "ProgrammableSwitchEvent")
                at = time.monotonic()
                char.set_value(value)
                emit(event="pressed", at=at)
            if "press" in command:
                # Presses [aid, value, value, …], 20 ms apart: HAP-python keeps one
                # event per characteristic until it sends (in the next loop
                # iteration), so presses within one iteration would be one EVENT.
                aid, *values = command["press"]
                char = accessories[aid].get_service("StatelessProgrammableSwitch").get_characteristic(
                    "ProgrammableSwitchEvent")
                for n, value in enumerate(values):
                    driver.loop.call_later(0.02 * n, char.set_value, value)

        threading.Thread(target=commands, daemon=True).start()
        driver.start()


if __name__ == "__main__":
    main()
