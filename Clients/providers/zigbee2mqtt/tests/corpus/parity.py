#!/usr/bin/env python3
"""How close the mapping is to homebridge-z2m, device by device: homebridge-z2m
documents, for every device it supports (`docs/devices/<vendor>/<model>.md`,
generated from Zigbee2MQTT's definitions), the HomeKit services and
characteristics it exposes. This maps the corpus devices those pages name
(through their link to the device's zigbee2mqtt.io page) and compares:

    python3 tests/corpus/parity.py --homebridge ~/src/homebridge-z2m   # a checkout or git dir
    python3 tests/corpus/parity.py --homebridge DIR --write             # tests/corpus/homebridge-z2m.json

What homebridge-z2m's pages say of the corpus devices is committed as
homebridge-z2m.json (written by --write, never by hand; --check compares), so
that the parity test runs without a homebridge-z2m checkout.

A device is at parity when homed has, for every service homebridge-z2m lists,
a service of that type (an Outlet stands for a Switch) with every
characteristic listed. Compared on HAP's own services; homebridge-z2m's
custom Eve services (electrical measurements, air pressure as a service of
its own) and Adaptive Lighting are counted apart. The two describe
Zigbee2MQTT's definitions of different dates (the corpus' commit, the one
homebridge-z2m built its pages from), so a difference can be a device that
changed meanwhile.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, List, Set, Tuple

HERE = Path(__file__).resolve().parent
PROVIDER = HERE.parents[1]

#: homebridge-z2m's service names -> HAP's (None: not one of HAP's).
SERVICES = {"Lightbulb": "Lightbulb", "Battery": "BatteryService", "Switch": "Switch",
            "Stateless Programmable Switch": "StatelessProgrammableSwitch", "Temperature Sensor": "TemperatureSensor",
            "Humidity Sensor": "HumiditySensor", "Occupancy Sensor": "OccupancySensor", "Thermostat": "Thermostat",
            "Light Sensor": "LightSensor", "Window Covering": "WindowCovering", "Contact Sensor": "ContactSensor",
            "Leak Sensor": "LeakSensor", "Lock Mechanism": "LockMechanism", "Smoke Sensor": "SmokeSensor",
            "Carbon Dioxide Sensor": "CarbonDioxideSensor", "Motion Sensor": "MotionSensor",
            "Air Quality Sensor": "AirQualitySensor", "Carbon Monoxide Sensor": "CarbonMonoxideSensor",
            "Electrical Sensor": None, "Air Pressure Sensor": None}
CHARACTERISTICS = {"Volatile Organic Compounds Density": "VOCDensity",
                   "Particulate Matter 2.5 Density": "PM2.5Density", "Particulate Matter 10 Density": "PM10Density"}
#: homed's service that stands for homebridge-z2m's.
STANDS_FOR = {"Outlet": "Switch"}


def _pages(source: Path) -> Dict[str, str]:
    """{page path: text} of docs/devices from a checkout or a git directory."""
    if (source / "docs" / "devices").is_dir():
        return {str(p): p.read_text(encoding="utf-8") for p in sorted((source / "docs" / "devices").glob("*/*.md"))}
    names = subprocess.run(["git", "--git-dir", str(source), "ls-tree", "-r", "--name-only", "HEAD", "docs/devices"],
                           check=True, capture_output=True, text=True).stdout.split()
    out = {}
    for name in names:
        if name.count("/") == 3 and name.endswith(".md"):
            out[name] = subprocess.run(["git", "--git-dir", str(source), "show", f"HEAD:{name}"], check=True,
                                       capture_output=True, text=True).stdout
    return out


def documented(source: Path) -> Dict[str, Tuple[Dict[str, Set[str]], Set[str]]]:
    """{zigbee2mqtt.io page name: ({service: {characteristics}}, {other: custom services, features})}."""
    out = {}
    for text in _pages(source).values():
        link = re.search(r"zigbee2mqtt\.io/devices/([^)]+)\.html", text)
        if not link or "# Services and characteristics" not in text:
            continue
        services: Dict[str, Set[str]] = defaultdict(set)
        other: Set[str] = set()
        current = None
        section = text.split("# Services and characteristics", 1)[1].split("\n# Related", 1)[0]
        for line in section.split("\n"):
            top = re.match(r"^\* \[([^\]]+)\]", line)
            sub = re.match(r"^  \* (.+?)\s*$", line)
            if top:
                name = top.group(1)
                current = SERVICES.get(name, "?")
                if current in (None, "?"):
                    other.add(name)
                    current = None
            elif sub and current:
                services[current].add(CHARACTERISTICS.get(sub.group(1), sub.group(1).replace(" ", "")))
        out[link.group(1)] = (dict(services), other)
    return out


DOCUMENTED = HERE / "homebridge-z2m.json"


def extract(docs, devices: List[dict]) -> str:
    """The committed form of what ``documented`` read: only the corpus devices' pages."""
    pages = {page_name(d["definition"]["model"]) for d in devices}
    kept = {page: {"services": {s: sorted(c) for s, c in sorted(services.items())}, "other": sorted(other)}
            for page, (services, other) in sorted(docs.items()) if page in pages}
    return "{\n" + ",\n".join(f"{json.dumps(page)}: {json.dumps(entry, sort_keys=True)}"
                                for page, entry in kept.items()) + "\n}\n"


def load(path: Path = DOCUMENTED):
    """``documented``'s result, from the committed extract."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {page: ({s: set(c) for s, c in entry["services"].items()}, set(entry["other"]))
            for page, entry in data.items()}


def page_name(model: str) -> str:
    return re.sub(r"[/| :]", "_", model)  # the page name zigbee2mqtt.io gives a model


def compare(devices: List[dict], docs, map_device, unsupported) -> dict:
    compared, at_parity = 0, 0
    missing: Counter = Counter()
    examples: Dict[str, List[str]] = defaultdict(list)
    others: Counter = Counter()
    for device in devices:
        model = device["definition"]["model"]
        doc = docs.get(page_name(model))
        if doc is None:
            continue
        wanted, other = doc
        others.update(other)
        compared += 1
        try:
            services = map_device(device).accessory["services"]
        except unsupported:
            services = []
        have: Dict[str, Set[str]] = defaultdict(set)
        for service in services:
            chars = {c.get("type_name") or c["type"] for c in service["characteristics"]}
            have[service["type"]] |= chars
            if service["type"] in STANDS_FOR:
                have[STANDS_FOR[service["type"]]] |= chars | {"On"}
        gaps = []
        for stype, chars in wanted.items():
            if stype not in have:
                gaps.append(f"{stype} (no service)")
            else:
                gaps.extend(f"{stype}.{c}" for c in sorted(chars - have[stype]))
        if not gaps:
            at_parity += 1
        for gap in gaps:
            missing[gap] += 1
            if len(examples[gap]) < 4:
                examples[gap].append(model)
    return {"compared": compared, "at_parity": at_parity, "missing": missing, "examples": examples,
            "others": others}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--homebridge", type=Path, help="a homebridge-z2m checkout or git directory "
                        "(default: the committed homebridge-z2m.json)")
    parser.add_argument("--write", action="store_true", help="write what the pages say to homebridge-z2m.json")
    parser.add_argument("--check", action="store_true", help="fail if homebridge-z2m.json is not what the pages say")
    parser.add_argument("--gaps", type=int, default=40, help="how many kinds of gap to list")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(PROVIDER))
    from homed_z2m.mapping import Unsupported, map_device
    from tests.corpus_coverage import corpus_devices

    devices = corpus_devices()
    if args.write or args.check:
        if args.homebridge is None:
            parser.error("--write and --check read the pages: give --homebridge")
        text = extract(documented(args.homebridge), devices)
        if args.check:
            same = DOCUMENTED.read_text(encoding="utf-8") == text
            print(f"{DOCUMENTED.name} is {'' if same else 'not '}what the pages give")
            return 0 if same else 1
        DOCUMENTED.write_text(text, encoding="utf-8")
    docs = documented(args.homebridge) if args.homebridge else load()
    result = compare(devices, docs, map_device, Unsupported)
    share = 100.0 * result["at_parity"] / max(result["compared"], 1)
    print(f"corpus devices homebridge-z2m documents: {result['compared']}; with every HAP service and "
          f"characteristic it lists: {result['at_parity']} ({share:.1f} %)")
    print("outside HAP's services (counted apart): "
          + ", ".join(f"{n} {c}" for n, c in result["others"].most_common()))
    for gap, count in result["missing"].most_common(args.gaps):
        print(f"  {count:5d}  {gap}  (e.g. {', '.join(result['examples'][gap])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
