"""Payloads recorded from real Tasmota and Shelly devices (generate.py makes
tasmota.json and shelly.json from Home Assistant's and aioshelly's own test
data; never edit them by hand)."""

import copy
import json
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def _load(name: str) -> dict:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


def tasmota(scenario: str) -> dict:
    """One replayed Home Assistant test: its `config`, `sensors` and `steps`."""
    return copy.deepcopy(_load("tasmota.json")["scenarios"][scenario])


def tasmota_config(name: str) -> dict:
    return copy.deepcopy(_load("tasmota.json")["configs"][name]["config"])


def shelly(device: str) -> dict:
    """One device's `shelly` (GetDeviceInfo), `config` and `status` answers."""
    return copy.deepcopy(_load("shelly.json")["devices"][device])


def shelly_frame(name: str) -> dict:
    """A whole RPC answer a device sent ("result", "error")."""
    return copy.deepcopy(_load("shelly.json")["frames"][name])


def messages(scenario: dict, topic_suffix: str = "") -> list:
    """The (topic, payload) the device sent in a scenario, in order."""
    return [(s[1], s[2]) for s in scenario["steps"] if s[0] == "message" and s[1].endswith(topic_suffix)]


def commands(scenario: dict) -> list:
    """(what Home Assistant was asked, (topic, payload) it sent) in order."""
    out, asked = [], None
    for step in scenario["steps"]:
        if step[0] == "asked":
            asked = (step[1], step[2])
        elif step[0] == "command":
            out.append((asked, (step[1], step[2])))
    return out
