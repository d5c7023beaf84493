"""homed's accessories as Home Assistant MQTT discovery entities (no I/O).

One entity per HAP service that Home Assistant has a component for, one
retained config each under `<prefix>/<component>/<node>/<object>/config`
(the single-component form Home Assistant 2024.4 and later reads without a
warning), the entities of an
accessory sharing one `device` block. Ids come from homed's ids, never from
names: `object` is `a<accessory id>_s<service id>[_<suffix>]` and the
`unique_id` is `<node>_<accessory id>_<service id>[_<suffix>]`, so a rename in
homed renames the entity in Home Assistant and breaks nothing built on it.

Topics under the base topic (`homed`):
- `homed/bridge/state`: `online` / `offline` (the bridge's last will);
- `homed/<accessory id>/availability`: `online` / `offline` from homed's reachability;
- `homed/<object>/state`: a JSON object, retained (events: not retained);
- `homed/<object>/set` and `homed/<object>/set/<field>`: commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from .model import AccessoryView, Char, Service

__all__ = ["Entity", "Skipped", "entities_for", "exported", "config_topic", "device_topic", "device_config",
           "ORIGIN", "VERSION", "FORMS"]

#: The two forms of discovery the bridge can publish: one config per entity
#: (Home Assistant 2024.4 and later) or one per device (2024.11 and later).
FORMS = ("entity", "device")

VERSION = "1.0.0"
# Home Assistant shows the origin in an entity's MQTT info. The project names no
# public address anywhere yet: this is where the bridge's README would be.
SUPPORT_URL = "https://github.com/homed/homed/tree/main/Clients/bridges/homeassistant"
ORIGIN = {"name": "homed-mqtt", "sw_version": VERSION, "support_url": SUPPORT_URL}


@dataclass
class Entity:
    component: str  # light, switch, cover, lock, climate, sensor, binary_sensor, event
    kind: str  # how its state and commands are made (payloads.py): light, switch, window, garage, …
    accessory_id: int
    service_id: int
    object_id: str
    unique_id: str
    label: str  # for log lines: "Lamp (accessory 7) light a7_s15"
    chars: Dict[str, Char]  # by role ("on", "brightness", "current", …)
    config: dict
    state_topic: str
    command_topic: Optional[str] = None
    retain_state: bool = True  # events are not retained: a new subscriber must not see a press again
    options: dict = field(default_factory=dict)  # what the payloads need (event types, modes, …)


class Skipped(Exception):
    """A service this bridge has no Home Assistant entity for (said once in the log)."""


def config_topic(prefix: str, component: str, node: str, object_id: str) -> str:
    return f"{prefix}/{component}/{node}/{object_id}/config"


def device_topic(prefix: str, node: str, accessory_id: int) -> str:
    """An accessory's device-based config: `<prefix>/device/<node>/a<accessory id>/config`
    (the node id, optional in Home Assistant's topic, keeps two homes on one broker apart)."""
    return f"{prefix}/device/{node}/a{accessory_id}/config"


#: What an accessory's entities share: said once, at the root of a device-based config.
SHARED = ("device", "origin", "availability", "availability_mode")


def device_config(entities: List[Entity], gone: Optional[Dict[str, str]] = None) -> dict:
    """One accessory's entities as one device-based discovery config: `dev`,
    `o` and the availability at the root, each entity a component of `cmps`
    under its object id with its platform as `p`. `gone` (object id ->
    platform): components removed from the device, sent as `{"p": platform}`
    alone, which is how Home Assistant is told to remove one component and
    keep the rest of the device."""
    first = entities[0].config
    components: Dict[str, dict] = {}
    for entity in entities:
        component = {"p": entity.component}
        component.update((key, value) for key, value in entity.config.items() if key not in SHARED)
        components[entity.object_id] = component
    for object_id, platform in sorted((gone or {}).items()):
        components.setdefault(object_id, {"p": platform})
    return {"dev": first["device"], "o": first["origin"], "availability": first["availability"],
            "availability_mode": first["availability_mode"], "cmps": components}


def exported(accessory: AccessoryView, settings) -> Tuple[bool, str]:
    """(exported?, why not). Providers that took their devices from MQTT are left
    out unless the settings ask for them (no loops); then rooms and accessories."""
    if accessory.provider in settings.exclude_providers:
        return False, f"its provider {accessory.provider!r} is excluded (its devices came from MQTT)"
    room = accessory.room.casefold()
    if settings.include_rooms and room not in settings.include_rooms:
        return False, f"its room {accessory.room!r} is not among the rooms to export"
    if room in settings.exclude_rooms:
        return False, f"its room {accessory.room!r} is excluded"
    names = {accessory.name.casefold(), str(accessory.id)}
    if settings.include_accessories and not names & settings.include_accessories:
        return False, "it is not among the accessories to export"
    if names & settings.exclude_accessories:
        return False, "it is excluded by name or id"
    return True, ""


# -- the mapping ---------------------------------------------------------------

#: service type -> (characteristic, sensor device class, unit, state class)
SENSORS = {
    "TemperatureSensor": ("CurrentTemperature", "temperature", "°C"),
    "HumiditySensor": ("CurrentRelativeHumidity", "humidity", "%"),
    "LightSensor": ("CurrentAmbientLightLevel", "illuminance", "lx"),
    "CarbonDioxideSensor": ("CarbonDioxideLevel", "carbon_dioxide", "ppm"),
}

#: service type -> (characteristic, binary sensor device class, the value that means ON)
BINARY_SENSORS = {
    # ContactSensorState 0 is "contact detected" (closed): open is 1.
    "ContactSensor": ("ContactSensorState", "opening", 1),
    "MotionSensor": ("MotionDetected", "motion", True),
    "OccupancySensor": ("OccupancyDetected", "occupancy", 1),
    "LeakSensor": ("LeakDetected", "moisture", 1),
    "SmokeSensor": ("SmokeDetected", "smoke", 1),
    "CarbonMonoxideSensor": ("CarbonMonoxideDetected", "carbon_monoxide", 1),
}

#: ProgrammableSwitchEvent values as Home Assistant event types
PRESSES = {0: "single", 1: "double", 2: "long"}

#: TargetHeatingCoolingState values as climate modes
MODES = {0: "off", 1: "heat", 2: "cool", 3: "auto"}

IGNORED_SERVICES = {"AccessoryInformation", "ProtocolInformation", "ServiceLabel"}


class _Builder:
    """Makes the entities of one accessory (settings and accessory in one place)."""

    def __init__(self, accessory: AccessoryView, settings):
        self.a = accessory
        self.s = settings

    def device(self) -> dict:
        a = self.a
        device = {"identifiers": [f"{self.s.node_id}_{a.id}"], "name": a.name}
        for key, value in (("manufacturer", a.manufacturer), ("model", a.model), ("sw_version", a.firmware),
                           ("suggested_area", a.room)):
            if value:
                device[key] = value
        return device

    def entity(self, component: str, kind: str, service: Service, chars: Dict[str, Char], config: dict,
               suffix: str = "", name: Optional[str] = "", command: bool = False, **options) -> Entity:
        s, a = self.s, self.a
        object_id = f"a{a.id}_s{service.id}" + (f"_{suffix}" if suffix else "")
        base = f"{s.base_topic}/{object_id}"
        if name == "":
            # The service named as its accessory is the device's main entity:
            # null makes Home Assistant call it by the device's name.
            name = None if service.name in ("", a.name) else service.name
        full = {
            "name": name,
            "unique_id": f"{s.node_id}_{a.id}_{service.id}" + (f"_{suffix}" if suffix else ""),
            "device": self.device(),
            "origin": ORIGIN,
            "availability": [{"topic": s.bridge_state_topic}, {"topic": f"{s.base_topic}/{a.id}/availability"}],
            "availability_mode": "all",
            "state_topic": f"{base}/state",
        }
        if command:
            full["command_topic"] = f"{base}/set"
        full.update(config)
        label = f"{a.name!r} (accessory {a.id}) {component} {object_id}"
        return Entity(component, kind, a.id, service.id, object_id, full["unique_id"], label, chars, full,
                      full["state_topic"], full.get("command_topic"), retain_state=kind != "event", options=options)

    # -- one builder per service type -----------------------------------------

    def light(self, service: Service) -> List[Entity]:
        c = service.chars
        chars = {"on": c["On"]}
        modes: List[str] = []
        config: dict = {"schema": "json"}
        if "Hue" in c and "Saturation" in c:
            chars["hue"], chars["saturation"] = c["Hue"], c["Saturation"]
            modes.append("hs")
        if "ColorTemperature" in c:
            ct = chars["color_temp"] = c["ColorTemperature"]
            modes.append("color_temp")
            config["min_mireds"] = int(ct.min if ct.min is not None else 140)
            config["max_mireds"] = int(ct.max if ct.max is not None else 500)
        if "Brightness" in c:
            chars["brightness"] = c["Brightness"]
            config["brightness"] = True
            config["brightness_scale"] = 255
        if not modes:
            modes.append("brightness" if "brightness" in chars else "onoff")
        # `supported_color_modes` alone: the `color_mode: true` flag that went
        # with it until 2024.3 is deprecated since 2024.4 (logged for every
        # light) and removed from the schema since 2025.3 (README.md).
        config["supported_color_modes"] = modes
        return [self.entity("light", "light", service, chars, config, command=True)]

    def switch(self, service: Service) -> List[Entity]:
        device_class = "outlet" if service.type_name == "Outlet" else "switch"
        config = {"device_class": device_class, "value_template": "{{ value_json.state }}",
                  "payload_on": "ON", "payload_off": "OFF", "state_on": "ON", "state_off": "OFF"}
        return [self.entity("switch", "switch", service, {"on": service.chars["On"]}, config, command=True)]

    def window(self, service: Service) -> List[Entity]:
        c = service.chars
        chars = {"current": c["CurrentPosition"], "target": c["TargetPosition"]}
        if "PositionState" in c:
            chars["moving"] = c["PositionState"]
        base = f"{self.s.base_topic}/a{self.a.id}_s{service.id}"
        config = {"device_class": "blind",
                  "value_template": "{{ value_json.state }}",
                  "position_topic": f"{base}/state", "position_template": "{{ value_json.position }}",
                  "set_position_topic": f"{base}/set/position", "position_open": 100, "position_closed": 0,
                  "payload_open": "OPEN", "payload_close": "CLOSE", "payload_stop": "STOP"}
        return [self.entity("cover", "window", service, chars, config, command=True)]

    def garage(self, service: Service) -> List[Entity]:
        c = service.chars
        chars = {"current": c["CurrentDoorState"], "target": c["TargetDoorState"]}
        config = {"device_class": "garage", "value_template": "{{ value_json.state }}",
                  "payload_open": "OPEN", "payload_close": "CLOSE", "payload_stop": None}
        return [self.entity("cover", "garage", service, chars, config, command=True)]

    def lock(self, service: Service) -> List[Entity]:
        c = service.chars
        chars = {"current": c["LockCurrentState"], "target": c["LockTargetState"]}
        config = {"value_template": "{{ value_json.state }}", "payload_lock": "LOCK", "payload_unlock": "UNLOCK",
                  "state_locked": "LOCKED", "state_unlocked": "UNLOCKED", "state_locking": "LOCKING",
                  "state_unlocking": "UNLOCKING", "state_jammed": "JAMMED"}
        return [self.entity("lock", "lock", service, chars, config, command=True)]

    def thermostat(self, service: Service) -> List[Entity]:
        c = service.chars
        chars = {"current": c["CurrentTemperature"], "target": c["TargetTemperature"],
                 "mode": c["TargetHeatingCoolingState"]}
        if "CurrentHeatingCoolingState" in c:
            chars["action"] = c["CurrentHeatingCoolingState"]
        mode = chars["mode"]
        valid = mode.valid_values or list(MODES)
        modes = [MODES[v] for v in valid if v in MODES]
        target = chars["target"]
        base = f"{self.s.base_topic}/a{self.a.id}_s{service.id}"
        state = f"{base}/state"
        config = {"modes": modes, "temperature_unit": "C",
                  "min_temp": target.min if target.min is not None else 10,
                  "max_temp": target.max if target.max is not None else 38,
                  "temp_step": target.step if target.step else 0.1, "precision": 0.1,
                  "current_temperature_topic": state,
                  "current_temperature_template": "{{ value_json.current }}",
                  "temperature_state_topic": state, "temperature_state_template": "{{ value_json.target }}",
                  "mode_state_topic": state, "mode_state_template": "{{ value_json.mode }}"}
        if target.writable:
            config["temperature_command_topic"] = f"{base}/set/temperature"
        if mode.writable:
            config["mode_command_topic"] = f"{base}/set/mode"
        if "action" in chars:
            config["action_topic"] = state
            config["action_template"] = "{{ value_json.action }}"
        entity = self.entity("climate", "climate", service, chars, config, modes=modes)
        # A climate entity has no state_topic of its own: its topics are per field.
        del entity.config["state_topic"]
        return [entity]

    def sensor(self, service: Service) -> List[Entity]:
        char, device_class, unit = SENSORS[service.type_name]
        config = {"device_class": device_class, "unit_of_measurement": unit, "state_class": "measurement",
                  "value_template": "{{ value_json.value }}"}
        return [self.entity("sensor", "sensor", service, {"value": service.chars[char]}, config)]

    def binary(self, service: Service) -> List[Entity]:
        char, device_class, on = BINARY_SENSORS[service.type_name]
        config = {"device_class": device_class, "value_template": "{{ value_json.state }}",
                  "payload_on": "ON", "payload_off": "OFF"}
        return [self.entity("binary_sensor", "binary", service, {"value": service.chars[char]}, config, on=on)]

    def battery(self, service: Service) -> List[Entity]:
        c = service.chars
        found: List[Entity] = []
        if "BatteryLevel" in c:
            config = {"device_class": "battery", "unit_of_measurement": "%", "state_class": "measurement",
                      "entity_category": "diagnostic", "value_template": "{{ value_json.value }}"}
            found.append(self.entity("sensor", "sensor", service, {"value": c["BatteryLevel"]}, config,
                                     suffix="level", name="Battery"))
        if "StatusLowBattery" in c:
            config = {"device_class": "battery", "entity_category": "diagnostic",
                      "value_template": "{{ value_json.state }}", "payload_on": "ON", "payload_off": "OFF"}
            found.append(self.entity("binary_sensor", "binary", service, {"value": c["StatusLowBattery"]}, config,
                                     suffix="low", name="Battery low", on=1))
        return found

    def button(self, service: Service) -> List[Entity]:
        char = service.chars["ProgrammableSwitchEvent"]
        types = [PRESSES[v] for v in (char.valid_values or list(PRESSES)) if v in PRESSES]
        config = {"event_types": types, "device_class": "doorbell" if service.type_name == "Doorbell" else "button"}
        return [self.entity("event", "event", service, {"event": char}, config, presses=types)]


BUILDERS: Dict[str, Callable[[_Builder, Service], List[Entity]]] = {
    "Lightbulb": _Builder.light,
    "Switch": _Builder.switch,
    "Outlet": _Builder.switch,
    "WindowCovering": _Builder.window,
    "GarageDoorOpener": _Builder.garage,
    "LockMechanism": _Builder.lock,
    "Thermostat": _Builder.thermostat,
    "BatteryService": _Builder.battery,
    "Battery": _Builder.battery,
    "StatelessProgrammableSwitch": _Builder.button,
    "Doorbell": _Builder.button,
}
BUILDERS.update({name: _Builder.sensor for name in SENSORS})
BUILDERS.update({name: _Builder.binary for name in BINARY_SENSORS})


def entities_for(accessory: AccessoryView, settings) -> Tuple[List[Entity], List[str]]:
    """(the accessory's entities, why each other service was left out)."""
    builder = _Builder(accessory, settings)
    entities: List[Entity] = []
    skipped: List[str] = []
    for service in accessory.services:
        if service.type_name in IGNORED_SERVICES or service.hidden:
            continue
        build = BUILDERS.get(service.type_name)
        if build is None:
            skipped.append(f"service {service.type_name} ({service.id}) left out: no Home Assistant component for it")
            continue
        try:
            entities.extend(build(builder, service))
        except KeyError as missing:
            # A provider's service without a characteristic the mapping needs.
            skipped.append(f"service {service.type_name} ({service.id}) left out: it has no {missing.args[0]}")
    return entities, skipped
