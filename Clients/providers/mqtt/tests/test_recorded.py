"""The recorded fixtures (tests/recorded): small and naming their sources, and
the replay of Home Assistant's tests that makes them, on a test of that form."""

import ast
import importlib.util
from pathlib import Path

import pytest

from . import recorded

HERE = Path(__file__).resolve().parent / "recorded"
_spec = importlib.util.spec_from_file_location("mqtt_recorded_generate", HERE / "generate.py")
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)


def test_the_fixtures_are_small_and_say_where_they_come_from():
    assert sum(p.stat().st_size for p in HERE.glob("*.json")) < 500_000
    assert recorded._load("tasmota.json")["source"]["repository"] == "home-assistant/core"
    for name, device in recorded._load("shelly.json")["devices"].items():
        assert set(device["source"]) >= {"shelly", "config", "status"}, name


# That the fixtures are what the sources give is checked with the sources at hand:
# python3 tests/recorded/generate.py --source-core DIR --source-aioshelly DIR --check


SAMPLE = '''
DEFAULT_CONFIG = {"mac": "00000049A3BC", "rl": [0, 0], "so": {"30": 0}}


@pytest.mark.parametrize(("sensor_config", "messages"), [(OTHER, ("a",)), (SENSORS, ('{"x":1}', '{"y":2}'))])
async def test_one(hass, mqtt_mock, sensor_config, messages):
    config = copy.deepcopy(DEFAULT_CONFIG)
    config["rl"][1] = 2
    mac = config["mac"]
    async_fire_mqtt_message(hass, f"{DEFAULT_PREFIX}/{mac}/config", json.dumps(config))
    async_fire_mqtt_message(hass, f"{DEFAULT_PREFIX}/{mac}/sensors", json.dumps(sensor_config))
    state = hass.states.get("light.test")
    assert state.state == "unavailable"
    async_fire_mqtt_message(hass, "tasmota_49A3BC/tele/SENSOR", messages[1])
    async_fire_mqtt_message(hass, something_only_running_gives(), "x")
    await common.async_turn_on(hass, "light.test", brightness=192)
    mqtt_mock.async_publish.assert_called_once_with("tasmota_49A3BC/cmnd/Backlog", "NoDelay;Dimmer 75", 0, False)
'''


def test_a_test_is_replayed_statement_by_statement():
    tree = ast.parse(SAMPLE)
    env = generate.module_constants(tree, {"SENSORS": {"sn": {"DHT11": {"Temperature": None}}}})
    test = generate.find_test(tree, "test_one")
    env.update(generate.parametrized(test, "SENSORS", env))
    out = generate.replay(test, env)
    assert out["config"] == {"mac": "00000049A3BC", "rl": [0, 2], "so": {"30": 0}}
    assert out["sensors"] == {"sn": {"DHT11": {"Temperature": None}}}
    assert out["steps"] == [
        ["announce", "tasmota/discovery/00000049A3BC/config"], ["announce", "tasmota/discovery/00000049A3BC/sensors"],
        ["message", "tasmota_49A3BC/tele/SENSOR", '{"y":2}'],  # the call it cannot evaluate is left out
        ["asked", "async_turn_on", {"brightness": 192}],
        ["command", "tasmota_49A3BC/cmnd/Backlog", "NoDelay;Dimmer 75"]]
