#!/usr/bin/env python3
"""Payloads recorded from real Tasmota and Shelly devices, as the fixtures the
provider's Tasmota and Shelly tests play (tests/recorded/tasmota.json and
shelly.json). Never edit those files: run this script.

    python3 generate.py --source-core ~/src/home-assistant-core --source-aioshelly ~/src/aioshelly
    python3 generate.py --source-core core.git --source-aioshelly aioshelly.git   # or git directories
    python3 generate.py --source-core … --source-aioshelly … --check   # the committed files are what they give

Tasmota (from Home Assistant's own tests of its Tasmota integration,
`tests/components/tasmota/`): each test named in TASMOTA_TESTS is replayed
statement by statement, without running it. `config = copy.deepcopy(
DEFAULT_CONFIG)`, `config["rl"][0] = 2` and the like build the discovery
config the test announces; every `async_fire_mqtt_message(hass, topic,
payload)` is a message the device sent (its discovery `config` and `sensors`
kept as objects, the rest as the text on the wire), every
`mqtt_mock.async_publish.assert_called_once_with(topic, payload, …)` a
command Home Assistant sent it, and `common.async_turn_on(…)` what asked for
that command. A statement that is none of these (asserts, state reads) is
skipped; a value the script cannot work out without running the test (a
name bound outside the module) leaves that statement out. A parametrized
test is replayed for the case named in TASMOTA_TESTS (by the name of its
first parameter's value). DEFAULT_CONFIG_9_0_0_3 (a 9.0.0.3 firmware's
config, without the keys later versions added) is kept as it is.

Shelly (Gen2+ devices' own answers, as aioshelly's fixtures and Home
Assistant's Shelly tests hold them): each device in SHELLY_DEVICES is what it
answers to Shelly.GetDeviceInfo (`shelly`), Shelly.GetConfig (`config`) and
Shelly.GetStatus (`status`), taken from one diagnostics dump or from the
files of single answers; `statuses` are further statuses the device reported
(a cover moving). FRAMES are whole JSON-RPC answers as a device sent them (a
success and an error). The output records which file each part came from.

Home Assistant's MQTT platforms (its own tests, `tests/components/mqtt/`):
ha_mqtt.py replays the tests it names into tests/recorded/ha_mqtt.json, the
scenarios of the parity test (tests/test_ha_parity.py); `--verbose` names
each statement it leaves out.

Each output also records the sources' commits and the git blob id of every
file it read (`git hash-object`'s), so that one made from a copy of those
files rather than a checkout (home-assistant/core is large) still says which
version of each it was.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
TASMOTA_OUTPUT = HERE / "tasmota.json"
SHELLY_OUTPUT = HERE / "shelly.json"
HA_MQTT_OUTPUT = HERE / "ha_mqtt.json"

TASMOTA_DIR = "tests/components/tasmota"
#: (scenario name, test file, test function, the parametrize case by its first value's name).
TASMOTA_TESTS: List[Tuple[str, str, str, Optional[str]]] = [
    ("relay", "test_switch.py", "test_controlling_state_via_mqtt", None),
    ("relay_commands", "test_switch.py", "test_sending_mqtt_commands", None),
    ("relay_as_light", "test_light.py", "test_controlling_state_via_mqtt_on_off", None),
    ("light_ct", "test_light.py", "test_controlling_state_via_mqtt_ct", None),
    ("light_rgbww", "test_light.py", "test_controlling_state_via_mqtt_rgbww", None),
    ("light_rgbww_commands", "test_light.py", "test_sending_mqtt_commands_rgbww", None),
    ("dimmer_unlinked_commands", "test_light.py", "test_sending_mqtt_commands_power_unlinked", None),
    ("sensor_ds18b20", "test_sensor.py", "test_controlling_state_via_mqtt", "TEMPERATURE_SENSOR_CONFIG"),
    ("sensor_analog", "test_sensor.py", "test_controlling_state_via_mqtt", "NUMBERED_SENSOR_CONFIG"),
    ("battery", "test_sensor.py", "test_battery_sensor_state_via_mqtt", None),
]
#: Module constants of test_common.py kept as they are.
TASMOTA_CONFIGS = {"firmware_9_0_0_3": "DEFAULT_CONFIG_9_0_0_3"}
#: Names the tests import from Home Assistant, with the values they have there.
IMPORTED = {"DEFAULT_PREFIX": "tasmota/discovery"}

AIOSHELLY_DUMPS = "fixtures"
AIOSHELLY_ANSWERS = "tests/rpc_device/fixtures"
CORE_SHELLY = "tests/components/shelly/fixtures"
#: A part is (source, path) for a whole file or (source, path, key) for one key of a dump.
SHELLY_DEVICES: Dict[str, Dict[str, Any]] = {
    "plus_1pm": {"dump": ("aioshelly", f"{AIOSHELLY_DUMPS}/gen2_Shelly Plus 1PM_SNSW-001P16EU_20231219-133934-"
                                       "1.1.0-g34b5d4f.json")},
    "pro_4pm": {"dump": ("aioshelly", f"{AIOSHELLY_DUMPS}/gen2_Shelly Pro 4PM_SPSW-004PE16EU_20230912-082358-"
                                      "1.0.3-g6176478.json")},
    "wall_display": {"dump": ("aioshelly", f"{AIOSHELLY_DUMPS}/gen2_Shelly Wall Display_SAWD-0A1XX10EU1_"
                                           "20240115-105444-1.2.8-59063a9a.json")},
    "wall_display_xl": {"dump": ("core", f"{CORE_SHELLY}/wall_display_xl.json")},
    "duo_bulb_gen3": {"dump": ("core", f"{CORE_SHELLY}/duo_bulb_gen3.json")},
    "mini_1_gen4": {"shelly": ("aioshelly", f"{AIOSHELLY_ANSWERS}/shellymini1gen4/Shelly.GetDeviceInfo"),
                    "config": ("aioshelly", f"{AIOSHELLY_ANSWERS}/shellymini1gen4/Shelly.GetConfig"),
                    "status": ("aioshelly", f"{AIOSHELLY_ANSWERS}/shellymini1gen4/Shelly.GetStatus")},
    # A Shelly 2PM Gen3 in cover mode: its information and config from Home
    # Assistant's dump, its status (calibrated, so with positions) from
    # aioshelly's answers of the same model.
    "2pm_gen3_cover": {"shelly": ("core", f"{CORE_SHELLY}/2pm_gen3_cover.json", "shelly"),
                       "config": ("core", f"{CORE_SHELLY}/2pm_gen3_cover.json", "config"),
                       "status": ("aioshelly", f"{AIOSHELLY_ANSWERS}/shelly2pmg3/Shelly.GetStatus"),
                       "statuses": {"cover:0": ("aioshelly", f"{AIOSHELLY_ANSWERS}/shelly2pmg3/Cover.GetStatus")}},
    "blu_gateway_gen3": {"shelly": ("aioshelly", f"{AIOSHELLY_ANSWERS}/shellyblugatewaygen3/Shelly.GetDeviceInfo"),
                         "config": ("aioshelly", f"{AIOSHELLY_ANSWERS}/shellyblugatewaygen3/Shelly.GetConfig"),
                         "status": ("aioshelly", f"{AIOSHELLY_ANSWERS}/shellyblugatewaygen3/Shelly.GetStatus")},
}
FRAMES = {"result": ("aioshelly", f"{AIOSHELLY_ANSWERS}/shellyplus2pm/Cover.Close_success"),
          "error": ("aioshelly", f"{AIOSHELLY_ANSWERS}/shellyplus2pm/Cover.Close_auth_failure")}


# --- reading a source -----------------------------------------------------------------------------

class Source:
    """Files of a checkout, or of a git directory at a revision."""

    def __init__(self, name: str, path: Path, rev: str = "HEAD"):
        self.name, self.path, self.rev = name, path, rev
        #: path -> the git blob id of what was read (as `git hash-object` gives it), so
        #: the output says which version of each file it was made from.
        self.blobs: Dict[str, str] = {}
        self.git = (path / "HEAD").is_file() and (path / "objects").is_dir()
        try:
            args = ["git", "--git-dir", str(path)] if self.git else ["git", "-C", str(path)]
            self.commit = subprocess.run([*args, "rev-parse", rev if self.git else "HEAD"], check=True,
                                         capture_output=True, text=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            self.commit = "unknown (not a git checkout)"

    def read(self, relative: str) -> str:
        if self.git:
            data = subprocess.run(["git", "--git-dir", str(self.path), "show", f"{self.rev}:{relative}"], check=True,
                                  capture_output=True).stdout
        else:
            data = (self.path / relative).read_bytes()
        self.blobs[relative] = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        return data.decode("utf-8")


# --- replaying Home Assistant's Tasmota tests --------------------------------------------------------

class Unresolved(Exception):
    """A value that only running the test would give."""


class JsonOf:
    """`json.dumps(value)`: kept as the object, to be written out as one."""

    def __init__(self, value: Any):
        self.value = value


def evaluate(node: ast.AST, env: Dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        if node.id in IMPORTED:
            return IMPORTED[node.id]
        raise Unresolved(node.id)
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            parts.append(str(evaluate(value.value, env)) if isinstance(value, ast.FormattedValue)
                         else str(evaluate(value, env)))
        return "".join(parts)
    if isinstance(node, ast.Subscript):
        return evaluate(node.value, env)[evaluate(node.slice, env)]
    if isinstance(node, ast.Dict):
        return {evaluate(k, env): evaluate(v, env) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.List):
        return [evaluate(e, env) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(evaluate(e, env) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -evaluate(node.operand, env)
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if name == "copy.deepcopy":
            return copy.deepcopy(evaluate(node.args[0], env))
        if name == "json.dumps":
            return JsonOf(copy.deepcopy(evaluate(node.args[0], env)))
    raise Unresolved(ast.unparse(node))


def lenient(node: ast.AST, env: Dict[str, Any]) -> Any:
    """A value whose unresolved parts (expected states naming Home Assistant's
    constants) are None: those parts are never written out."""
    try:
        return evaluate(node, env)
    except (Unresolved, KeyError, IndexError, TypeError):
        if isinstance(node, ast.Tuple):
            return tuple(lenient(e, env) for e in node.elts)
        return None


def module_constants(tree: ast.Module, env: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(env)
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            try:
                out[statement.targets[0].id] = evaluate(statement.value, out)
            except (Unresolved, KeyError, IndexError, TypeError):
                pass
    return out


def find_test(tree: ast.Module, name: str) -> ast.AsyncFunctionDef:
    for statement in tree.body:
        if isinstance(statement, (ast.AsyncFunctionDef, ast.FunctionDef)) and statement.name == name:
            return statement
    raise SystemExit(f"no test {name} in the source")


def parametrized(test: ast.AsyncFunctionDef, case: str, env: Dict[str, Any]) -> Dict[str, Any]:
    """The parameters of the case whose first value is the name `case`."""
    for decorator in test.decorator_list:
        if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.parametrize":
            names = lenient(decorator.args[0], env)
            names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
            for row in decorator.args[1].elts:
                if isinstance(row, ast.Tuple) and isinstance(row.elts[0], ast.Name) and row.elts[0].id == case:
                    return {n: lenient(e, env) for n, e in zip(names, row.elts)}
    raise SystemExit(f"{test.name}: no parametrize case {case}")


def replay(test: ast.AsyncFunctionDef, env: Dict[str, Any]) -> Dict[str, Any]:
    """What the test announces, sends and asks, in order."""
    out: Dict[str, Any] = {"steps": []}
    for statement in test.body:
        try:
            _replay(statement, env, out)
        except (Unresolved, KeyError, IndexError, TypeError):
            continue  # a statement only running the test could evaluate: left out
    return out


def _replay(statement: ast.stmt, env: Dict[str, Any], out: Dict[str, Any]) -> None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0], evaluate(statement.value, env)
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Subscript):
            evaluate(target.value, env)[evaluate(target.slice, env)] = value
        return
    call = statement.value if isinstance(statement, ast.Expr) else None
    awaited = isinstance(call, ast.Await)
    call = call.value if awaited else call
    if not isinstance(call, ast.Call):
        return
    name = ast.unparse(call.func)
    if name == "async_fire_mqtt_message":
        topic, payload = evaluate(call.args[1], env), evaluate(call.args[2], env)
        if isinstance(payload, JsonOf) and topic.endswith(("/config", "/sensors")):
            out.setdefault(topic.rsplit("/", 1)[1], payload.value)
            out["steps"].append(["announce", topic])
        else:
            out["steps"].append(["message", topic, payload.value if isinstance(payload, JsonOf) else payload])
    elif name == "mqtt_mock.async_publish.assert_called_once_with":
        out["steps"].append(["command", evaluate(call.args[0], env), evaluate(call.args[1], env)])
    elif awaited and name in ("common.async_turn_on", "common.async_turn_off"):
        out["steps"].append(["asked", name.split(".")[1], {k.arg: evaluate(k.value, env) for k in call.keywords}])


def tasmota(core: Source) -> Dict[str, Any]:
    trees = {}

    def tree(file: str) -> ast.Module:
        if file not in trees:
            trees[file] = ast.parse(core.read(f"{TASMOTA_DIR}/{file}"))
        return trees[file]

    common = module_constants(tree("test_common.py"), {})
    scenarios = {}
    for scenario, file, test_name, case in TASMOTA_TESTS:
        env = module_constants(tree(file), {k: v for k, v in common.items() if k.isupper()})
        test = find_test(tree(file), test_name)
        if case is not None:
            env.update(parametrized(test, case, env))
        recorded = replay(test, env)
        source = f"{TASMOTA_DIR}/{file}::{test_name}" + (f"[{case}]" if case else "")
        scenarios[scenario] = {"source": source, **recorded}
    configs = {name: {"source": f"{TASMOTA_DIR}/test_common.py::{constant}", "config": common[constant]}
               for name, constant in TASMOTA_CONFIGS.items()}
    return {"generated_by": "tests/recorded/generate.py",
            "source": {"repository": "home-assistant/core", "commit": core.commit, "files": dict(sorted(
                core.blobs.items()))}, "scenarios": scenarios, "configs": configs}


# --- Shelly's answers --------------------------------------------------------------------------------

def shelly(sources: Dict[str, Source]) -> Dict[str, Any]:
    def part(spec) -> Tuple[Any, str]:
        source, path = sources[spec[0]], spec[1]
        value = json.loads(source.read(path))
        where = f"{spec[0]}:{path}"
        if len(spec) == 3:
            value, where = value[spec[2]], f"{where}#{spec[2]}"
        return value, where

    devices = {}
    for name, spec in SHELLY_DEVICES.items():
        device: Dict[str, Any] = {"source": {}}
        if "dump" in spec:
            dump, where = part(spec["dump"])
            for key in ("shelly", "config", "status"):
                device[key] = dump[key]
                device["source"][key] = f"{where}#{key}"
        for key in ("shelly", "config", "status"):
            if key in spec:
                device[key], device["source"][key] = part(spec[key])
        for component, status_spec in spec.get("statuses", {}).items():
            value, where = part(status_spec)
            device.setdefault("statuses", {})[component] = value
            device["source"][f"statuses.{component}"] = where
        devices[name] = device
    frames = {}
    for name, spec in FRAMES.items():
        frames[name], where = part(spec)
        frames.setdefault("source", {})[name] = where
    return {"generated_by": "tests/recorded/generate.py",
            "source": {name: {"repository": repo, "commit": sources[name].commit,
                              "files": dict(sorted(sources[name].blobs.items()))}
                       for name, repo in (("aioshelly", "home-assistant-libs/aioshelly"),
                                          ("core", "home-assistant/core"))},
            "devices": devices, "frames": frames}


# --- Home Assistant's MQTT platforms ------------------------------------------------------------------

def _ha_mqtt():
    """ha_mqtt.py beside this file (loaded by path: this script is run as one,
    and loaded so by the tests)."""
    spec = importlib.util.spec_from_file_location("mqtt_recorded_ha_mqtt", HERE / "ha_mqtt.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- writing -------------------------------------------------------------------------------------------

def text(data: Dict[str, Any]) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source-core", type=Path, required=True,
                        help="a home-assistant/core checkout or git directory")
    parser.add_argument("--source-aioshelly", type=Path, required=True,
                        help="a home-assistant-libs/aioshelly checkout or git directory")
    parser.add_argument("--rev", default="HEAD", help="the revision of git directories (default HEAD)")
    parser.add_argument("--check", action="store_true", help="fail if the committed files differ from the output")
    parser.add_argument("--verbose", action="store_true", help="name each statement of a test left out")
    args = parser.parse_args(argv)
    # One Source each output, so that each lists the files it was made from.
    outputs = {TASMOTA_OUTPUT: text(tasmota(Source("core", args.source_core, args.rev))),
               SHELLY_OUTPUT: text(shelly({"core": Source("core", args.source_core, args.rev),
                                           "aioshelly": Source("aioshelly", args.source_aioshelly, args.rev)})),
               HA_MQTT_OUTPUT: text(_ha_mqtt().ha_mqtt(Source("core", args.source_core, args.rev), args.verbose))}
    if args.check:
        stale = [p.name for p, t in outputs.items() if not p.is_file() or p.read_text(encoding="utf-8") != t]
        if stale:
            print(f"{', '.join(stale)} differ from what the sources give; run generate.py", file=sys.stderr)
            return 1
        print("the recorded fixtures are what the sources give")
        return 0
    for path, content in outputs.items():
        path.write_text(content, encoding="utf-8")
        print(f"wrote {path.name}: {len(content)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
