"""How much of the Zigbee2MQTT corpus (tests/corpus/devices-N.json) the mapping
brings into homed, with no broker and no daemon:

    python3 tests/corpus_coverage.py            # from the provider's folder

prints the devices in the corpus, the devices registered with at least one
service, and the exposes left out, by type and by name. An expose counts as
used when one of its properties (a composite's: one of its features') is bound
to a characteristic, or is the `action` a button service listens to;
test_corpus.py keeps these numbers from going down.
"""

from __future__ import annotations

import functools
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


@functools.lru_cache(maxsize=1)
def corpus() -> dict:
    """The corpus (its files joined), read once (callers copy what they change)."""
    devices: list = []
    whole: dict = {}
    for path in sorted(CORPUS.glob("devices-*.json"), key=lambda p: int(p.stem.split("-")[1])):
        part = json.loads(path.read_text(encoding="utf-8"))
        whole.update({k: v for k, v in part.items() if k != "devices"})
        devices += part["devices"]
    assert devices, f"no corpus in {CORPUS}"
    return dict(whole, devices=devices)


def corpus_devices() -> List[dict]:
    return corpus()["devices"]


def by_model(model: str, vendor: Optional[str] = None) -> dict:
    """One corpus entry by its model (and vendor, where two vendors share a model)."""
    found = [d for d in corpus_devices() if d["definition"]["model"] == model
             and (vendor is None or d["definition"]["vendor"] == vendor)]
    if len(found) != 1:
        raise KeyError(f"{len(found)} corpus devices of model {model!r}" + (f" by {vendor!r}" if vendor else ""))
    return found[0]


@dataclass
class Coverage:
    devices: int = 0
    registered: int = 0
    services: Counter = field(default_factory=Counter)
    exposes: int = 0
    left_out_by_type: Counter = field(default_factory=Counter)
    left_out_by_name: Counter = field(default_factory=Counter)
    not_registered: Dict[str, str] = field(default_factory=dict)

    @property
    def left_out(self) -> int:
        return sum(self.left_out_by_type.values())

    def as_dict(self) -> dict:
        return {"devices": self.devices, "registered": self.registered, "exposes": self.exposes,
                "left_out": self.left_out, "left_out_by_type": dict(sorted(self.left_out_by_type.items()))}


def _properties(expose: dict) -> List[str]:
    props = [expose["property"]] if isinstance(expose.get("property"), str) else []
    for feature in expose.get("features", []) if isinstance(expose.get("features"), list) else []:
        if isinstance(feature, dict):
            props.extend(_properties(feature))
    return props


def measure(devices: List[dict], map_device, unsupported_error) -> Coverage:
    result = Coverage()
    for device in devices:
        result.devices += 1
        exposes = [e for e in device["definition"]["exposes"] if isinstance(e, dict)]
        result.exposes += len(exposes)
        try:
            dm = map_device(device)
        except unsupported_error as why:
            result.not_registered[device["definition"]["model"]] = str(why)
            used = set()
        else:
            result.registered += 1
            result.services.update(s["type"] for s in dm.accessory["services"])
            used = {p for b in dm.bindings.values() for p in b.props}
        for expose in exposes:
            if not used.intersection(_properties(expose)):
                result.left_out_by_type[str(expose.get("type"))] += 1
                result.left_out_by_name[str(expose.get("name") or expose.get("type"))] += 1
    return result


def main() -> int:
    sys.path.insert(0, str(HERE.parent))
    sys.path.insert(0, str(HERE.parents[3] / "Clients" / "python"))
    from homed_z2m.mapping import Unsupported, map_device

    result = measure(corpus_devices(), map_device, Unsupported)
    print(f"devices in the corpus: {result.devices}")
    print(f"registered with at least one service: {result.registered} "
          f"({100.0 * result.registered / max(result.devices, 1):.1f} %)")
    print(f"exposes: {result.exposes}, left out: {result.left_out}")
    print("left out by type: " + ", ".join(f"{t} {n}" for t, n in sorted(result.left_out_by_type.items())))
    print("left out, most common names: " + ", ".join(f"{t} {n}" for t, n in result.left_out_by_name.most_common(40)))
    print("services: " + ", ".join(f"{t} {n}" for t, n in sorted(result.services.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
