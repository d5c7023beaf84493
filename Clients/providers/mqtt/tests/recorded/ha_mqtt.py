"""Home Assistant's own tests of its MQTT platforms (`tests/components/mqtt/`),
replayed statement by statement without running them, as the scenarios of
tests/recorded/ha_mqtt.json (generate.py calls `ha_mqtt(core, verbose)`).

For each test named in HA_MQTT_TESTS the replay records:

- `config`: the entity the test sets up, as `async_setup_component(hass,
  DOMAIN, {DOMAIN: {...}})` (or `{mqtt.DOMAIN: {DOMAIN: {...}}}`) gives it,
  without the `platform: mqtt` of the older YAML form: these are the keys a
  discovery config has, so the parity test announces it as one; a discovery
  config the test fires itself (`homeassistant/<component>/<id>/config`) is
  recorded as that and the step `announce`;
- `steps`, in order: `message` (topic, payload of `async_fire_mqtt_message`),
  `state` (entity id, what `assert state.state == …` says; null when the test
  asserts the entity does not exist), `attribute` (entity id, name, value of
  `assert state.attributes.get(name) == …`; null for `is None`, true and
  false for `assert state.attributes.get(name)` and `assert not …`),
  `state_not` (`assert state.state != …`), `asked`
  (the service a test called: `common.async_turn_on(hass, entity, **args)`,
  `hass.services.async_call(domain, service, …)`), `command` (topic, payload,
  QoS and retain flag of `mqtt_mock.async_publish.assert_called_once_with`;
  `command_json` when the test compares the payload as JSON),
  `commands_any_order` (`assert_has_calls(…, any_order=True)`; without it
  `commands_in_order`), `restored` (the state `mock_restore_cache` or a patched
  `async_get_last_state` gives the entity at start), `logged` and
  `not_logged` (a text the test asserts is or is not in its log).

The older unittest-style tests (`self.hass`, `self.mock_publish`,
`self.assertTrue`, `self.assertEqual`) are read as the newer ones; of a test
that sets up a list of entities, the first is replayed and what it asserts of
the others is left out.

What only running the test could tell (a value bound by a fixture, a time
changed, a raw byte payload) is left out; `--verbose` names each statement
left out.
"""

from __future__ import annotations

import ast
import copy
import json
import sys
from typing import Any, Dict, List, Optional, Tuple

MQTT_DIR = "tests/components/mqtt"
#: (scenario, test file, test function, component).
HA_MQTT_TESTS: List[Tuple[str, str, str, str]] = [
    ("switch_state", "test_switch.py", "test_controlling_state_via_topic", "switch"),
    ("switch_optimistic", "test_switch.py", "test_sending_mqtt_commands_and_optimistic", "switch"),
    ("switch_initial_optimistic", "test_switch.py", "test_sending_inital_state_and_optimistic", "switch"),
    ("switch_json_template", "test_switch.py", "test_controlling_state_via_topic_and_json_message", "switch"),
    ("switch_state_payloads", "test_switch.py", "test_custom_state_payload", "switch"),
    ("binary_sensor_state", "test_binary_sensor.py", "test_setting_sensor_value_via_mqtt_message",
     "binary_sensor"),
    ("binary_sensor_invalid_payload", "test_binary_sensor.py", "test_invalid_sensor_value_via_mqtt_message",
     "binary_sensor"),
    ("binary_sensor_upper_template", "test_binary_sensor.py",
     "test_setting_sensor_value_via_mqtt_message_and_template2", "binary_sensor"),
    ("binary_sensor_jinja_template", "test_binary_sensor.py",
     "test_setting_sensor_value_via_mqtt_message_and_template", "binary_sensor"),
    ("binary_sensor_empty_template", "test_binary_sensor.py",
     "test_setting_sensor_value_via_mqtt_message_empty_template", "binary_sensor"),
    ("binary_sensor_motion", "test_binary_sensor.py", "test_valid_device_class", "binary_sensor"),
    ("binary_sensor_invalid_class", "test_binary_sensor.py", "test_invalid_device_class", "binary_sensor"),
    ("lock_state", "test_lock.py", "test_controlling_state_via_topic", "lock"),
    ("lock_custom_states", "test_lock.py", "test_controlling_non_default_state_via_topic", "lock"),
    ("lock_json_template", "test_lock.py", "test_controlling_state_via_topic_and_json_message", "lock"),
    ("lock_custom_states_json", "test_lock.py", "test_controlling_non_default_state_via_topic_and_json_message",
     "lock"),
    ("lock_optimistic", "test_lock.py", "test_sending_mqtt_commands_and_optimistic", "lock"),
    ("lock_explicit_optimistic", "test_lock.py", "test_sending_mqtt_commands_and_explicit_optimistic", "lock"),
    ("light_json_no_command_topic", "test_light_json.py", "test_fail_setup_if_no_command_topic", "light"),
    ("light_json_onoff", "test_light_json.py", "test_no_color_brightness_color_temp_white_val_if_no_topics",
     "light"),
    ("light_json_state", "test_light_json.py", "test_controlling_state_via_topic", "light"),
    ("light_json_optimistic", "test_light_json.py", "test_sending_mqtt_commands_and_optimistic", "light"),
    ("light_json_hs_commands", "test_light_json.py", "test_sending_hs_color", "light"),
    ("light_json_rgb_commands", "test_light_json.py", "test_sending_rgb_color_with_brightness", "light"),
    ("light_json_xy_commands", "test_light_json.py", "test_sending_xy_color", "light"),
    ("light_json_brightness_scale", "test_light_json.py", "test_brightness_scale", "light"),
    ("light_json_invalid_values", "test_light_json.py", "test_invalid_color_brightness_and_white_values", "light"),
    ("light_json_availability", "test_light_json.py", "test_default_availability_payload", "light"),
    ("light_json_custom_availability", "test_light_json.py", "test_custom_availability_payload", "light"),
    ("sensor_state", "test_sensor.py", "test_setting_sensor_value_via_mqtt_message", "sensor"),
    ("sensor_json_template", "test_sensor.py", "test_setting_sensor_value_via_mqtt_json_message", "sensor"),
    ("sensor_expires", "test_sensor.py", "test_setting_sensor_value_expires", "sensor"),
    ("sensor_expires_availability", "test_sensor.py", "test_setting_sensor_value_expires_availability_topic",
     "sensor"),
    ("sensor_temperature", "test_sensor.py", "test_valid_device_class", "sensor"),
    ("sensor_invalid_class", "test_sensor.py", "test_invalid_device_class", "sensor"),
    ("cover_state", "test_cover.py", "test_state_via_state_topic", "cover"),
    ("cover_position", "test_cover.py", "test_position_via_position_topic", "cover"),
    ("cover_state_jinja_template", "test_cover.py", "test_state_via_template", "cover"),
    ("cover_position_template", "test_cover.py", "test_position_via_template", "cover"),
    ("cover_optimistic", "test_cover.py", "test_optimistic_state_change", "cover"),
    ("cover_open_command", "test_cover.py", "test_send_open_cover_command", "cover"),
    ("cover_close_command", "test_cover.py", "test_send_close_cover_command", "cover"),
    ("cover_stop_command", "test_cover.py", "test_send_stop__cover_command", "cover"),
    ("cover_current_position", "test_cover.py", "test_current_cover_position", "cover"),
    ("cover_current_position_inverted", "test_cover.py", "test_current_cover_position_inverted", "cover"),
    ("cover_set_position_read", "test_cover.py", "test_set_cover_position", "cover"),
    ("cover_set_position_arithmetic", "test_cover.py", "test_set_position_templated", "cover"),
    ("cover_set_position", "test_cover.py", "test_set_position_untemplated", "cover"),
    ("cover_tilt_unknown", "test_cover.py", "test_tilt_defaults", "cover"),
    ("cover_tilt_open_close", "test_cover.py", "test_tilt_via_invocation_defaults", "cover"),
    ("cover_tilt_open_close_values", "test_cover.py", "test_tilt_given_value", "cover"),
    ("cover_tilt_state", "test_cover.py", "test_tilt_via_topic", "cover"),
    ("cover_tilt_state_range", "test_cover.py", "test_tilt_via_topic_altered_range", "cover"),
    ("cover_tilt_position", "test_cover.py", "test_tilt_position", "cover"),
    ("cover_tilt_position_range", "test_cover.py", "test_tilt_position_altered_range", "cover"),
    ("cover_no_availability", "test_cover.py", "test_availability_without_topic", "cover"),
    ("cover_availability", "test_cover.py", "test_availability_by_defaults", "cover"),
    ("cover_custom_availability", "test_cover.py", "test_availability_by_custom_payload", "cover"),
    ("light_onoff", "test_light.py", "test_no_color_brightness_color_temp_hs_white_xy_if_no_topics", "light"),
    ("light_state", "test_light.py", "test_controlling_state_via_topic", "light"),
    ("light_brightness_scale", "test_light.py", "test_brightness_controlling_scale", "light"),
    ("light_state_templates", "test_light.py", "test_controlling_state_via_topic_with_templates", "light"),
    ("light_on_command_first", "test_light.py", "test_on_command_first", "light"),
    ("light_on_command_last", "test_light.py", "test_on_command_last", "light"),
    ("light_on_command_brightness", "test_light.py", "test_on_command_brightness", "light"),
    ("light_on_command_brightness_scaled", "test_light.py", "test_on_command_brightness_scaled", "light"),
    ("light_effect", "test_light.py", "test_effect", "light"),
    ("light_color_temp_template", "test_light.py", "test_sending_mqtt_color_temp_command_with_template", "light"),
    ("light_brightness_template", "test_light.py", "test_sending_mqtt_brightness_command_with_template", "light"),
    ("light_hs_template", "test_light.py", "test_sending_mqtt_hs_command_with_template", "light"),
]

#: Names the tests import from Home Assistant, with the values they have there.
IMPORTED = {
    "mqtt.DOMAIN": "mqtt", "switch.DOMAIN": "switch", "binary_sensor.DOMAIN": "binary_sensor",
    "light.DOMAIN": "light", "LOCK_DOMAIN": "lock", "cover.DOMAIN": "cover",
    "STATE_ON": "on", "STATE_OFF": "off", "STATE_UNKNOWN": "unknown", "STATE_UNAVAILABLE": "unavailable",
    "STATE_LOCKED": "locked", "STATE_UNLOCKED": "unlocked", "STATE_OPEN": "open", "STATE_CLOSED": "closed",
    "SERVICE_LOCK": "lock", "SERVICE_UNLOCK": "unlock", "ATTR_ENTITY_ID": "entity_id",
    "ATTR_ASSUMED_STATE": "assumed_state", "ATTR_DEVICE_CLASS": "device_class",
    "ATTR_SUPPORTED_FEATURES": "supported_features", "sensor.DOMAIN": "sensor",
    "ATTR_POSITION": "position", "ATTR_TILT_POSITION": "tilt_position",
    "SERVICE_OPEN_COVER": "open_cover", "SERVICE_CLOSE_COVER": "close_cover", "SERVICE_STOP_COVER": "stop_cover",
    "SERVICE_SET_COVER_POSITION": "set_cover_position", "SERVICE_OPEN_COVER_TILT": "open_cover_tilt",
    "SERVICE_CLOSE_COVER_TILT": "close_cover_tilt", "SERVICE_SET_COVER_TILT_POSITION": "set_cover_tilt_position",
}
SETUPS = ("async_setup_component", "setup_component")
ASKED = {"common.async_turn_on": "turn_on", "common.async_turn_off": "turn_off"}


class Unresolved(Exception):
    """A value only running the test would give."""


class JsonOf:
    """`json.dumps(value)` or `JsonValidator(text)`: kept as the object."""

    def __init__(self, value: Any):
        self.value = value


class Entity:
    """`hass.states.get(entity_id)`, bound to a name."""

    def __init__(self, entity_id: str):
        self.entity_id = entity_id


class Attributes:
    """`hass.states.get(entity_id).attributes`, bound to a name."""

    def __init__(self, entity: Entity):
        self.entity = entity


class AttributeOf:
    """`….attributes[name]` bound to a name: what it was when read."""

    def __init__(self, entity: Entity, name: str):
        self.entity, self.name = entity, name


class Unself(ast.NodeTransformer):
    """`self.hass` and `self.mock_publish` of the older unittest-style tests
    as the fixtures `hass` and `mqtt_mock` of the newer ones."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            return ast.copy_location(ast.Name(id=node.attr, ctx=node.ctx), node)
        return node


def evaluate(node: ast.AST, env: Dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bytes):
            raise Unresolved("a raw byte payload")
        return node.value
    if isinstance(node, ast.Attribute) and node.attr == "attributes":
        owner = evaluate(node.value, env)
        if isinstance(owner, Entity):
            return Attributes(owner)
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = ast.unparse(node)
        if name in env:
            return env[name]
        if name in IMPORTED:
            return IMPORTED[name]
        raise Unresolved(name)
    if isinstance(node, ast.Subscript):
        owner = evaluate(node.value, env)
        if isinstance(owner, Attributes):
            return AttributeOf(owner.entity, evaluate(node.slice, env))
        return owner[evaluate(node.slice, env)]
    if isinstance(node, ast.Dict):
        return {evaluate(k, env): evaluate(v, env) for k, v in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [evaluate(e, env) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -evaluate(node.operand, env)
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if name == "copy.deepcopy":
            return copy.deepcopy(evaluate(node.args[0], env))
        if name == "json.dumps":
            return JsonOf(copy.deepcopy(evaluate(node.args[0], env)))
        if name == "JsonValidator":
            return JsonOf(json.loads(evaluate(node.args[0], env)))
        if name == "hass.states.get":
            return Entity(evaluate(node.args[0], env))
        if name in ("ha.State", "State"):
            return {"state": evaluate(node.args[1], env),
                    "attributes": evaluate(node.args[2], env) if len(node.args) > 2 else {}}
    raise Unresolved(ast.unparse(node))


def module_constants(tree: ast.Module) -> Dict[str, Any]:
    env: Dict[str, Any] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            try:
                env[statement.targets[0].id] = evaluate(statement.value, env)
            except (Unresolved, KeyError, IndexError, TypeError):
                pass
    return env


class Replay:
    """One test's statements, in order, as its config and steps."""

    def __init__(self, component: str, env: Dict[str, Any]):
        self.component, self.env = component, env
        #: the entity a test of several is replayed for (the first); None: the test's only one
        self.entity_id: Optional[str] = None
        self.config: Optional[dict] = None
        self.steps: List[list] = []
        self.left_out: List[str] = []

    def run(self, body: List[ast.stmt]) -> None:
        for statement in body:
            if isinstance(statement, (ast.With, ast.AsyncWith)):
                for item in statement.items:  # a patched restore state is the entity's state at start
                    self.restored(item.context_expr)
                self.run(statement.body)
                continue
            try:
                self.statement(statement)
            except (Unresolved, KeyError, IndexError, TypeError, ValueError) as why:
                self.left_out.append(f"line {statement.lineno}: {ast.unparse(statement)[:100]} ({why})")

    def restored(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "patch":
            for keyword in node.keywords:
                if keyword.arg == "return_value" and isinstance(keyword.value, ast.Call) \
                        and ast.unparse(keyword.value.func) == "mock_coro":
                    state = evaluate(keyword.value.args[0], self.env)
                    self.steps.append(["restored", state["state"], state["attributes"]])

    def statement(self, statement: ast.stmt) -> None:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            if isinstance(statement.value, ast.Await):  # the mocked broker a fixture gives
                self.call(statement.value.value)
                return
            target = statement.targets[0]
            value = evaluate(statement.value, self.env)
            if isinstance(target, ast.Name):
                self.env[target.id] = value
            elif isinstance(target, ast.Subscript):
                evaluate(target.value, self.env)[evaluate(target.slice, self.env)] = value
            return
        if isinstance(statement, ast.Assert):
            self.assertion(statement.test)
            return
        call = statement.value if isinstance(statement, ast.Expr) else None
        call = call.value if isinstance(call, ast.Await) else call
        if isinstance(call, ast.Call):
            self.call(call)

    def call(self, call: ast.Call) -> None:
        name = ast.unparse(call.func)
        args = call.args
        if name.endswith(SETUPS):
            self.setup(evaluate(args[2], self.env))
        elif name in ("async_fire_mqtt_message", "fire_mqtt_message"):
            topic, payload = evaluate(args[1], self.env), evaluate(args[2], self.env)
            if isinstance(payload, JsonOf) and topic.endswith("/config"):
                self.config = self.config or payload.value
                self.steps.append(["announce", topic])
            else:
                self.steps.append(["message", topic, payload])
        elif name.endswith("async_publish.assert_called_once_with"):
            payload, (qos, retain) = evaluate(args[1], self.env), (evaluate(a, self.env) for a in args[2:4])
            kind = "command_json" if isinstance(payload, JsonOf) else "command"
            self.steps.append([kind, evaluate(args[0], self.env), getattr(payload, "value", payload), qos, retain])
        elif name.endswith("async_publish.assert_has_calls"):
            calls = []
            for item in args[0].elts:
                payload = evaluate(item.args[1], self.env)
                calls.append([evaluate(item.args[0], self.env),
                              payload.value if isinstance(payload, JsonOf) else payload])
            any_order = any(k.arg == "any_order" and ast.unparse(k.value) == "True" for k in call.keywords)
            self.steps.append(["commands_any_order" if any_order else "commands_in_order", calls])
        elif name in ASKED:
            self.steps.append(["asked", ASKED[name], {k.arg: evaluate(k.value, self.env) for k in call.keywords}])
        elif name in ("hass.services.async_call", "hass.services.call"):
            data = evaluate(args[2], self.env) if len(args) > 2 else {}
            self.steps.append(["asked", evaluate(args[1], self.env),
                               {k: v for k, v in data.items() if k != "entity_id"}])
        elif name == "assertTrue":
            self.assertion(args[0])
        elif name == "assertEqual":
            self.assertion(ast.Compare(left=args[0], ops=[ast.Eq()], comparators=[args[1]]))
        elif name == "mock_restore_cache":
            state = evaluate(args[1], self.env)[0]
            self.steps.append(["restored", state["state"], state["attributes"]])
        elif name.endswith(("reset_mock", "async_block_till_done", "block_till_done")) \
                or name.startswith("mqtt_mock_entry") or name == "caplog.clear":
            return  # the mock's and the event loop's housekeeping
        else:
            raise Unresolved(f"{name}(…) is not a step of this replay")

    def setup(self, config: dict) -> None:
        if "mqtt" in config and isinstance(config["mqtt"], dict):
            config = config["mqtt"]
        entity = config[self.component]
        if isinstance(entity, list):  # the first; what the test asserts of the others is left out
            entity = entity[0]
            self.entity_id = f"{self.component}.{entity['name'].lower().replace(' ', '_')}"
        if not isinstance(entity, dict):
            raise Unresolved("an entity config of another form")
        self.config = {k: v for k, v in entity.items() if k != "platform"}

    def assertion(self, test: ast.expr) -> None:
        if isinstance(test, ast.Await):
            test = test.value
        if isinstance(test, ast.Call) and ast.unparse(test.func).endswith(SETUPS):
            self.call(test)
            return
        truth = True
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, truth = test.operand, False
        found = self.observed(test)
        if found is not None and found[0] == "attribute":  # `assert state.attributes.get(…)`: set or not
            self.add([*found, truth])
            return
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.NotIn)):
            attributes = evaluate(test.comparators[0], self.env) if ast.unparse(test.comparators[0]) != \
                "caplog.text" else None
            if isinstance(attributes, Attributes):
                if truth == isinstance(test.ops[0], ast.In):
                    raise Unresolved("an attribute said to be there, its value not")
                self.add(["attribute", attributes.entity.entity_id, evaluate(test.left, self.env), None])
                return
        if not truth or not isinstance(test, ast.Compare) or len(test.ops) != 1:
            raise Unresolved("an assertion of another form")
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(op, (ast.In, ast.NotIn)) and ast.unparse(right) == "caplog.text":
            self.steps.append(["logged" if isinstance(op, ast.In) else "not_logged", evaluate(left, self.env)])
            return
        if not isinstance(op, (ast.Eq, ast.Is, ast.NotEq)):
            raise Unresolved("a comparison other than ==, is or !=")
        for subject, expected in ((left, right), (right, left)):
            found = self.observed(subject)
            if found is not None:
                if isinstance(op, ast.NotEq):
                    found[0] = f"{found[0]}_not"
                self.add([*found, evaluate(expected, self.env)])
                return
        raise Unresolved("not an entity's state or attribute")

    def add(self, step: list) -> None:
        if self.entity_id is not None and step[1] != self.entity_id:
            raise Unresolved(f"{step[1]} is another entity of the test's list")
        self.steps.append(step)

    def observed(self, node: ast.expr) -> Optional[list]:
        """["state", entity] or ["attribute", entity, name] for what `node` reads, else None."""
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "hass.states.get":
            return ["state", evaluate(node.args[0], self.env)]
        if isinstance(node, ast.Name) and isinstance(self.env.get(node.id), Entity):
            return ["state", self.env[node.id].entity_id]  # `state is None`: there is no such entity
        if isinstance(node, ast.Name) and isinstance(self.env.get(node.id), AttributeOf):
            return ["attribute", self.env[node.id].entity.entity_id, self.env[node.id].name]
        if isinstance(node, ast.Attribute) and node.attr == "state":
            owner = self.env.get(ast.unparse(node.value))
            if isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "hass.states.get":
                owner = evaluate(node.value, self.env)
            return ["state", owner.entity_id] if isinstance(owner, Entity) else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            node = ast.Subscript(value=node.func.value, slice=node.args[0])
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "attributes":
            owner = self.env.get(ast.unparse(node.value.value))
            if isinstance(owner, Entity):
                return ["attribute", owner.entity_id, evaluate(node.slice, self.env)]
        return None


def find_test(tree: ast.Module, name: str) -> ast.AsyncFunctionDef:
    for statement in ast.walk(tree):
        if isinstance(statement, (ast.AsyncFunctionDef, ast.FunctionDef)) and statement.name == name:
            return statement
    raise SystemExit(f"no test {name} in the source")


def ha_mqtt(core, verbose: bool = False) -> Dict[str, Any]:
    """The scenarios, from `core` (generate.Source)."""
    trees: Dict[str, ast.Module] = {}
    scenarios = {}
    for scenario, file, test_name, component in HA_MQTT_TESTS:
        if file not in trees:
            trees[file] = ast.parse(core.read(f"{MQTT_DIR}/{file}"))
        replay = Replay(component, module_constants(trees[file]))
        replay.run(Unself().visit(copy.deepcopy(find_test(trees[file], test_name))).body)
        if replay.config is None:
            raise SystemExit(f"{file}::{test_name}: no entity config found")
        scenarios[scenario] = {"source": f"{MQTT_DIR}/{file}::{test_name}", "component": component,
                               "config": replay.config, "steps": replay.steps}
        if verbose:
            for line in replay.left_out:
                print(f"{file}::{test_name}: left out {line}", file=sys.stderr)
    return {"generated_by": "tests/recorded/generate.py (ha_mqtt.py)",
            "source": {"repository": "home-assistant/core", "commit": core.commit,
                       "files": dict(sorted(core.blobs.items()))},
            "scenarios": scenarios}
