"""A checker of Home Assistant MQTT discovery configs, written from Home
Assistant's MQTT documentation (home-assistant.io, integrations light.mqtt,
switch.mqtt, cover.mqtt, lock.mqtt, climate.mqtt, sensor.mqtt,
binary_sensor.mqtt, event.mqtt, and mqtt "Discovery messages") and its
platform schemas, kept to what every release since 2024.4 (the oldest the
bridge serves, README.md) accepts without a warning:

- a key the component does not know is an error (older releases refuse the
  whole config: a `serial_number` in `device`, for one, is only read since 2024);
- required keys per component: light `command_topic` (and `schema: json`
  here: the bridge uses the JSON schema), lock `command_topic`, sensor,
  binary_sensor and event `state_topic`, event `event_types`;
- enums: device classes, units, state classes, colour modes, climate modes;
- no key Home Assistant deprecated or removed in those releases (`DEPRECATED`:
  the JSON light's `color_mode` flag, deprecated in 2024.4 and logged for every
  light that has it, removed from the schema in 2025.3; the colour flags it
  replaced, deprecated in 2024.4);
- the JSON light: `supported_color_modes` (required: without it a colour light
  is brightness-only), `onoff` and `brightness` only alone;
- topics: command topics without wildcards, no empty topics;
- what this project requires on top: a `unique_id`, a `device` with
  `identifiers`, an `origin` with a `name`, `availability` as a list of
  topics with `availability_mode`.

`problems(component, config)` returns a list of sentences (empty: valid).

Device-based discovery (Home Assistant 2024.11 and later, mqtt "Device
discovery payload"): one config per device at `<prefix>/device/…/config` with
`device` (`dev`) and `origin` (`o`) required at its root, which no component
may override, the shared options (`availability…`, `state_topic`,
`command_topic`, `qos`, `encoding`) beside them, and `components` (`cmps`): a
map of component ids (`[a-zA-Z0-9_-]`) to configs, each with its platform
`platform` (`p`) and, for an entity, a `unique_id`. A component with its
platform alone is one being removed from the device. `device_problems(config)`
checks that form and every component in it as `problems` checks an entity
with the root's options; `expand(config)` gives the entities it describes.
"""

from __future__ import annotations

import re
from typing import Dict, List, Set, Tuple

COMMON = {"availability", "availability_mode", "availability_template", "availability_topic", "payload_available",
          "payload_not_available", "device", "enabled_by_default", "encoding", "entity_category", "icon",
          "json_attributes_topic", "json_attributes_template", "name", "object_id", "unique_id", "origin", "qos"}

KEYS: Dict[str, Set[str]] = {
    "light": {"schema", "command_topic", "state_topic", "brightness", "brightness_scale", "supported_color_modes", "min_mireds", "max_mireds", "effect", "effect_list", "flash_time_long",
              "flash_time_short", "optimistic", "retain", "white_scale"},
    "switch": {"command_topic", "command_template", "state_topic", "value_template", "payload_on", "payload_off",
               "state_on", "state_off", "optimistic", "retain", "device_class"},
    "cover": {"command_topic", "state_topic", "value_template", "position_topic", "position_template",
              "set_position_topic", "set_position_template", "position_open", "position_closed", "payload_open",
              "payload_close", "payload_stop", "state_open", "state_opening", "state_closed", "state_closing",
              "state_stopped", "device_class", "optimistic", "retain", "tilt_command_topic", "tilt_status_topic",
              "tilt_min", "tilt_max", "tilt_closed_value", "tilt_opened_value"},
    "lock": {"command_topic", "command_template", "state_topic", "value_template", "payload_lock",
             "payload_unlock", "payload_open", "state_locked", "state_unlocked", "state_locking",
             "state_unlocking", "state_jammed", "optimistic", "retain", "code_format"},
    "climate": {"modes", "temperature_unit", "min_temp", "max_temp", "temp_step", "precision", "initial",
                "current_temperature_topic", "current_temperature_template", "temperature_state_topic",
                "temperature_state_template", "temperature_command_topic", "temperature_command_template",
                "mode_state_topic", "mode_state_template", "mode_command_topic", "mode_command_template",
                "action_topic", "action_template", "optimistic", "retain", "payload_on", "payload_off",
                "power_command_topic"},
    "sensor": {"state_topic", "value_template", "device_class", "unit_of_measurement", "state_class",
               "expire_after", "force_update", "suggested_display_precision", "last_reset_value_template"},
    "binary_sensor": {"state_topic", "value_template", "device_class", "payload_on", "payload_off", "expire_after",
                      "force_update", "off_delay"},
    "event": {"state_topic", "value_template", "event_types", "device_class"},
}

#: component -> {key: when Home Assistant deprecated it}: keys no config may carry.
DEPRECATED: Dict[str, Dict[str, str]] = {
    "light": {"color_mode": "2024.4 (removed 2025.3)", "color_temp": "2024.4 (removed 2025.3)",
              "hs": "2024.4 (removed 2025.3)", "rgb": "2024.4 (removed 2025.3)", "xy": "2024.4 (removed 2025.3)",
              "white_value": "2021.10 (removed 2022.9)"},
}

REQUIRED = {
    "light": ["command_topic", "schema", "supported_color_modes"],
    "lock": ["command_topic"],
    "sensor": ["state_topic"],
    "binary_sensor": ["state_topic"],
    "event": ["state_topic", "event_types"],
}

DEVICE_CLASSES = {
    "switch": {"outlet", "switch"},
    "cover": {"awning", "blind", "curtain", "damper", "door", "garage", "gate", "shade", "shutter", "window"},
    "binary_sensor": {"battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door",
                      "garage_door", "gas", "heat", "light", "lock", "moisture", "motion", "moving", "occupancy",
                      "opening", "plug", "power", "presence", "problem", "running", "safety", "smoke", "sound",
                      "tamper", "update", "vibration", "window"},
    "event": {"button", "doorbell", "motion"},
}
#: sensor device class -> the units Home Assistant takes for it
SENSOR_UNITS = {"temperature": {"°C", "°F", "K"}, "humidity": {"%"}, "illuminance": {"lx"},
                "carbon_dioxide": {"ppm"}, "battery": {"%"}, "pressure": {"hPa", "kPa", "bar", "mbar", "Pa"}}
STATE_CLASSES = {"measurement", "total", "total_increasing"}
COLOR_MODES = {"onoff", "brightness", "color_temp", "hs", "xy", "rgb", "rgbw", "rgbww", "white"}
CLIMATE_MODES = {"auto", "off", "cool", "heat", "dry", "fan_only", "heat_cool"}
DEVICE_KEYS = {"identifiers", "connections", "name", "manufacturer", "model", "sw_version", "hw_version",
               "suggested_area", "via_device", "configuration_url"}
ORIGIN_KEYS = {"name", "sw_version", "support_url"}


def _topic_problem(key: str, value, publish: bool) -> List[str]:
    if not isinstance(value, str) or not value:
        return [f"{key} must be a non-empty topic, not {value!r}"]
    if publish and ("+" in value or "#" in value):
        return [f"{key} {value!r}: a topic to publish to has no wildcards"]
    return []


def problems(component: str, config) -> List[str]:
    found: List[str] = []
    if component not in KEYS:
        return [f"component {component!r} is not one the checker knows"]
    if not isinstance(config, dict):
        return [f"the config is a JSON {type(config).__name__}, not an object"]
    deprecated = DEPRECATED.get(component, {})
    for key in sorted(set(config) & set(deprecated)):
        found.append(f"{key}: deprecated for a {component} since Home Assistant {deprecated[key]}, "
                     f"logged for every entity that has it")
    unknown = set(config) - KEYS[component] - COMMON - set(deprecated)
    if unknown:
        found.append(f"keys a {component} does not take: {sorted(unknown)}")
    for key in REQUIRED.get(component, []):
        if key not in config:
            found.append(f"a {component} needs {key}")
    for key, value in config.items():
        if key.endswith("_topic"):
            found += _topic_problem(key, value, publish="command" in key or key == "set_position_topic")
        if key.endswith("_template") and not isinstance(value, str):
            found.append(f"{key} must be a template string")
    # What this project requires of every entity
    if not isinstance(config.get("unique_id"), str) or not config.get("unique_id"):
        found.append("no unique_id")
    device = config.get("device")
    if not isinstance(device, dict):
        found.append("no device block")
    else:
        if set(device) - DEVICE_KEYS:
            found.append(f"device keys Home Assistant does not take: {sorted(set(device) - DEVICE_KEYS)}")
        ids = device.get("identifiers")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids):
            found.append(f"device identifiers must be a non-empty list of strings, not {ids!r}")
        if not isinstance(device.get("name"), str) or not device.get("name"):
            found.append("the device has no name")
    origin = config.get("origin")
    if not isinstance(origin, dict) or not origin.get("name") or set(origin) - ORIGIN_KEYS:
        found.append(f"origin must be an object with a name (and sw_version, support_url), not {origin!r}")
    availability = config.get("availability")
    if "availability_topic" in config and availability is not None:
        found.append("availability and availability_topic exclude each other")
    if not isinstance(availability, list) or not availability:
        found.append("availability must be a list of topics")
    else:
        for item in availability:
            if not isinstance(item, dict) or set(item) - {"topic", "payload_available", "payload_not_available",
                                                          "value_template"}:
                found.append(f"availability entry {item!r}: only topic, payloads and value_template")
            else:
                found += _topic_problem("availability topic", item.get("topic"), publish=False)
    if config.get("availability_mode", "latest") not in ("all", "any", "latest"):
        found.append(f"availability_mode {config['availability_mode']!r} is not all, any or latest")
    if "entity_category" in config and config["entity_category"] not in ("config", "diagnostic"):
        found.append(f"entity_category {config['entity_category']!r}")
    if "name" in config and config["name"] is not None and not isinstance(config["name"], str):
        found.append(f"name {config['name']!r} is neither a string nor null")
    if "device_class" in config and component in DEVICE_CLASSES and config["device_class"] is not None \
            and config["device_class"] not in DEVICE_CLASSES[component]:
        found.append(f"device_class {config['device_class']!r} is not one of a {component}'s")
    found += globals()["_" + component](config)
    return found


def _light(c) -> List[str]:
    found = []
    if c.get("schema") != "json":
        found.append(f"schema {c.get('schema')!r}: the bridge's lights use the json schema")
    modes = c.get("supported_color_modes")
    if modes is not None:
        if not isinstance(modes, list) or not modes or set(modes) - COLOR_MODES or len(set(modes)) != len(modes):
            found.append(f"supported_color_modes {modes!r}")
        elif ({"onoff", "brightness"} & set(modes)) and len(modes) > 1:
            found.append(f"supported_color_modes {modes!r}: onoff and brightness are only valid alone")
        if "color_temp" in modes and not (isinstance(c.get("min_mireds"), int) and isinstance(c.get("max_mireds"), int)
                                          and 0 < c["min_mireds"] < c["max_mireds"]):
            found.append("a colour-temperature light gives min_mireds < max_mireds")
    if "brightness_scale" in c and not (isinstance(c["brightness_scale"], int) and c["brightness_scale"] >= 1):
        found.append(f"brightness_scale {c['brightness_scale']!r}")
    if "brightness" in c and not isinstance(c["brightness"], bool):
        found.append("brightness must be true or false")
    return found


def _switch(c) -> List[str]:
    return [] if "command_topic" in c else ["a switch Home Assistant can turn on needs command_topic"]


def _cover(c) -> List[str]:
    found = []
    if "set_position_topic" in c and "position_topic" not in c:
        found.append("set_position_topic without position_topic")
    if c.get("position_open", 100) <= c.get("position_closed", 0):
        found.append("position_open must be above position_closed")
    if "payload_stop" in c and c["payload_stop"] is not None and not isinstance(c["payload_stop"], str):
        found.append("payload_stop is a string or null")
    return found


def _lock(c) -> List[str]:
    return []


def _climate(c) -> List[str]:
    found = []
    modes = c.get("modes", [])
    if not isinstance(modes, list) or set(modes) - CLIMATE_MODES:
        found.append(f"modes {modes!r} (valid: {sorted(CLIMATE_MODES)})")
    if c.get("temperature_unit", "C") not in ("C", "F"):
        found.append(f"temperature_unit {c['temperature_unit']!r}")
    if c.get("min_temp", 7) >= c.get("max_temp", 35):
        found.append("min_temp must be below max_temp")
    if "state_topic" in c:
        found.append("a climate has per-field topics, no state_topic")
    if c.get("precision", 0.1) not in (0.1, 0.5, 1.0):
        found.append(f"precision {c['precision']!r} is not 0.1, 0.5 or 1")
    return found


def _sensor(c) -> List[str]:
    found = []
    dc = c.get("device_class")
    if dc is not None:
        if dc not in SENSOR_UNITS:
            found.append(f"sensor device_class {dc!r} unknown to the checker")
        elif c.get("unit_of_measurement") not in SENSOR_UNITS[dc]:
            found.append(f"unit {c.get('unit_of_measurement')!r} is not one of {sorted(SENSOR_UNITS[dc])} for {dc}")
    if "state_class" in c and c["state_class"] not in STATE_CLASSES:
        found.append(f"state_class {c['state_class']!r}")
    return found


def _binary_sensor(c) -> List[str]:
    return []


def _event(c) -> List[str]:
    types = c.get("event_types")
    if not isinstance(types, list) or not types or not all(isinstance(t, str) and t for t in types):
        return [f"event_types must be a non-empty list of strings, not {types!r}"]
    return []


# -- device-based discovery -------------------------------------------------------

#: root key -> its full name (the abbreviations Home Assistant documents for them)
DEVICE_ROOT = {"dev": "device", "device": "device", "o": "origin", "origin": "origin", "cmps": "components",
               "components": "components"}
SHARED = {"availability", "availability_mode", "availability_template", "availability_topic", "payload_available",
          "payload_not_available", "state_topic", "command_topic", "qos", "encoding"}
COMPONENT_ID = re.compile(r"^[A-Za-z0-9_-]+$")


def _root(config) -> Tuple[dict, dict, dict]:
    """(device, origin, components) of a device-based config, under either name."""
    found = {DEVICE_ROOT[key]: value for key, value in config.items() if key in DEVICE_ROOT}
    return found.get("device"), found.get("origin"), found.get("components")


def expand(config) -> Dict[Tuple[str, str], dict]:
    """{(platform, component id): the entity config} of a device-based config:
    each component with the device, origin and shared options of the root
    (a component's own shared options win). Components being removed (`p`
    alone) are left out."""
    device, origin, components = _root(config)
    shared = {key: value for key, value in config.items() if key in SHARED}
    found = {}
    for cid, component in (components or {}).items():
        component = dict(component)
        platform = component.pop("p", component.pop("platform", None))
        if not component:
            continue
        found[(platform, cid)] = {**shared, **component, "device": device, "origin": origin}
    return found


def removed(config) -> Dict[str, str]:
    """{component id: platform} of the components a device-based config removes (`p` alone)."""
    _, _, components = _root(config)
    return {cid: c.get("p", c.get("platform")) for cid, c in (components or {}).items()
            if isinstance(c, dict) and len(c) == 1}


def device_problems(config) -> List[str]:
    if not isinstance(config, dict):
        return [f"the config is a JSON {type(config).__name__}, not an object"]
    found: List[str] = []
    unknown = set(config) - set(DEVICE_ROOT) - SHARED
    if unknown:
        found.append(f"keys a device config does not take at its root: {sorted(unknown)}")
    for short, full in (("dev", "device"), ("o", "origin"), ("cmps", "components")):
        if short in config and full in config:
            found.append(f"{short} and {full} are one option, given twice")
    device, origin, components = _root(config)
    if not isinstance(device, dict):
        found.append("a device config needs device (dev)")
    if not isinstance(origin, dict):
        found.append("a device config needs origin (o)")
    if not isinstance(components, dict) or not components:
        return found + ["a device config needs components (cmps), a map of component ids to configs"]
    for cid, component in components.items():
        if not COMPONENT_ID.match(cid):
            found.append(f"component id {cid!r}: only letters, digits, '_' and '-'")
        if not isinstance(component, dict):
            found.append(f"component {cid!r} is not an object")
            continue
        platform = component.get("p", component.get("platform"))
        if not isinstance(platform, str) or platform not in KEYS:
            found.append(f"component {cid!r} has no platform (p) the checker knows: {platform!r}")
            continue
        for key in ("device", "dev", "origin", "o"):
            if key in component:
                found.append(f"component {cid!r} overrides {key}, which only the root may give")
    if found:
        return found
    for (platform, cid), entity in expand(config).items():
        found += [f"component {cid!r} ({platform}): {problem}" for problem in problems(platform, entity)]
    return found
