#!/usr/bin/env python3
"""How long the MQTT devices provider takes to bring a broker's discovered
devices into homed: a benchmark, not a test (nothing is asserted about time).

A real mosquitto and a real homed on loopback (the tests' kit); N devices, each
a Tasmota-like plug (a switch and a temperature sensor, abbreviated keys, a
template into a shared state topic, an availability topic), with their configs
and states retained; then the provider is started and the clock runs until
homed has every accessory (registered) and every value the devices retained
(seeded).

    HOMED_BIN=.build/release/homed .venv/bin/python -m Clients.providers.mqtt.bench.bench_discovery --devices 1000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]

import paho.mqtt.client as mqtt

from homed import pb
from homed_testkit import HomedProcess, homed_binary, plain
from homed_testkit.mqtt_broker import Mosquitto, free_port
from homed_testkit import installed_program

PROGRAM = installed_program("homed-mqtt-devices")


def device_messages(index: int):
    node = f"bench_{index:05d}"
    device = {"ids": [node], "name": f"Plug {index}", "mdl": "Sonoff S31", "mf": "Tasmota"}
    common = {"~": f"{node}/", "avty_t": "~tele/LWT", "pl_avail": "Online", "pl_not_avail": "Offline", "dev": device}
    yield f"homeassistant/switch/{node}_RL_1/config", json.dumps({
        **common, "name": f"Plug {index}", "stat_t": "~tele/STATE", "cmd_t": "~cmnd/POWER",
        "val_tpl": "{{value_json.POWER}}", "uniq_id": f"{node}_RL_1"})
    yield f"homeassistant/sensor/{node}_temp/config", json.dumps({
        **common, "name": f"Plug {index} temperature", "stat_t": "~tele/STATE", "dev_cla": "temperature",
        "unit_of_meas": "°C", "val_tpl": "{{ value_json.DS18B20.Temperature | round(1) }}", "uniq_id": f"{node}_temp"})
    yield f"{node}/tele/LWT", "Online"
    yield f"{node}/tele/STATE", json.dumps({"POWER": "ON" if index % 2 == 0 else "OFF",
                                            "DS18B20": {"Temperature": expected_temperature(index)}})


def expected_temperature(index: int) -> float:
    return round(15 + (index % 150) / 10, 1)


def publish_all(port: int, count: int) -> None:
    client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id="bench-devices")
    client.connect("127.0.0.1", port)
    client.loop_start()
    infos = []
    for index in range(count):
        for topic, payload in device_messages(index):
            infos.append(client.publish(topic, payload, qos=1, retain=True))
    for info in infos:
        info.wait_for_publish(30)
    client.disconnect()
    client.loop_stop()


def seeded(accessory, index: int) -> bool:
    values = {c.type_name: plain(c.value) for s in accessory.services for c in s.characteristics}
    return (values.get("On") is (index % 2 == 0) and values.get("CurrentTemperature") is not None
            and abs(values["CurrentTemperature"] - expected_temperature(index)) < 0.01)


def run(count: int, binary: str) -> dict:
    directory = tempfile.mkdtemp(prefix="homed-bench-mqtt-")
    broker = Mosquitto(directory, free_port())
    homed = HomedProcess(binary, directory, in_memory=True)
    provider = None
    try:
        broker.start()
        homed.start()
        publish_all(broker.port, count)
        log = open(os.path.join(directory, "provider.log"), "wb")
        started = time.monotonic()
        provider = subprocess.Popen([sys.executable, str(PROGRAM), "--socket", homed.socket_path, "--broker",
                                     broker.url, "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT)
        registered = None
        with homed.client() as client:
            while True:
                accessories = [a for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories
                               if a.provider == "mqtt"]
                now = time.monotonic()
                if registered is None and len(accessories) == count:
                    registered = now - started
                if registered is not None:
                    by_key = {a.provider_key: a for a in accessories}
                    if all(seeded(by_key[f"bench_{i:05d}"], i) for i in range(count)):
                        return {"devices": count, "entities": 2 * count, "registered_s": round(registered, 2),
                                "seeded_s": round(now - started, 2)}
                if now - started > 300 or provider.poll() is not None:
                    raise SystemExit(f"not done within 300 s: {len(accessories)} of {count} registered\n"
                                     + Path(directory, "provider.log").read_text()[-3000:])
                time.sleep(0.1)
    finally:
        if provider is not None and provider.poll() is None:
            provider.terminate()
            provider.wait(10)
        homed.kill()
        broker.kill()
        shutil.rmtree(directory, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--homed", default=homed_binary()[0], help="the homed binary (default: $HOMED_BIN, else "
                                                                   ".build/debug/homed)")
    args = parser.parse_args()
    for _ in range(args.runs):
        print(json.dumps(run(args.devices, args.homed)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
