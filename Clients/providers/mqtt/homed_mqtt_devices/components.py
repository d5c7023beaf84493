"""One discovered entity as HAP services, with no I/O.

`map_entity(discovery_id, component, config)` reads one entity's config (keys
already expanded) and gives an `EntityMap`: the services it brings, one
`Binding` per characteristic, the `Attachment`s it puts on other entities'
services of its device (a low battery, a tamper switch, air pressure), its
availability. It raises `Refused` for a config this provider cannot take as
it is (a required topic missing, a template it does not read: the entity is
left out whole and the reason logged) and `NotMapped` for an entity that has
no HAP counterpart (a power meter, a fan): the rest of the device is mapped
all the same. The table in this folder's README is the same mapping in words.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from homed.refs import Ref

from .bindings import UNKNOWN_STATES, Availability, AvailabilitySource, Binding, Message
from .discovery import device_key_of, scalar_text
from .templates import MISSING, RenderError, Template, Unsupported, as_text, command_format, compile_template
from .values import (from_celsius, hs_to_rgb, hs_to_xy, rgb_to_hs, to_celsius, to_hpa, object_name, xy_to_hs)

__all__ = ["EntityMap", "Attachment", "Refused", "NotMapped", "map_entity", "CATALOG", "PRESSURE_UUID",
           "COMPONENTS", "ACTUATORS"]

# The catalog's ranges and steps (homectl types --json) of what is mapped here.
CATALOG: Dict[str, Tuple[Optional[float], Optional[float], Optional[float]]] = {
    "Brightness": (0, 100, 1), "Hue": (0, 360, 1), "Saturation": (0, 100, 1),
    "CurrentPosition": (0, 100, 1), "TargetPosition": (0, 100, 1),
    "CurrentTemperature": (-273.1, 1000, 0.1), "TargetTemperature": (10, 38, 0.1),
    "CurrentRelativeHumidity": (0, 100, 1), "CurrentAmbientLightLevel": (0.0001, 100000, None),
    "CarbonDioxideLevel": (0, 100000, None), "CarbonMonoxideLevel": (0, 100, None), "BatteryLevel": (0, 100, 1),
    "PM2.5Density": (0, 1000, 1), "PM10Density": (0, 1000, 1), "ColorTemperature": (140, 500, 1),
    "CurrentHorizontalTiltAngle": (-90, 90, 1), "TargetHorizontalTiltAngle": (-90, 90, 1),
}
INTEGER = {"Brightness", "Hue", "Saturation", "CurrentPosition", "TargetPosition", "BatteryLevel", "ColorTemperature",
           "CurrentHorizontalTiltAngle", "TargetHorizontalTiltAngle"}

#: Air pressure has no HAP type: a custom characteristic, the same UUID as the
#: Zigbee2MQTT provider's, so clients know one type of it (hPa).
PRESSURE_UUID = "5B1E0F6A-3C2D-4E8F-9A7B-6C5D4E3F2A10"
PRESSURE_META = {"format": "float", "unit": "none", "min_value": 0.0, "max_value": 2000.0, "step_value": 0.1}

COMPONENTS = ("switch", "light", "binary_sensor", "sensor", "cover", "lock", "climate")
ACTUATORS = ("light", "switch", "cover", "lock", "climate")
#: Home Assistant's other MQTT platforms: known, not mapped (said at info level).
OTHER_PLATFORMS = {"alarm_control_panel", "button", "camera", "device_automation", "device_tracker", "event",
                   "fan", "humidifier", "image", "lawn_mower", "notify", "number", "scene", "select", "siren",
                   "tag", "text", "update", "vacuum", "valve", "water_heater", "date", "datetime", "time",
                   "remote", "infrared"}

CO2_ABNORMAL_PPM = 1000
CO_ABNORMAL_PPM = 50
LOW_BATTERY_PERCENT = 20


class Refused(Exception):
    """A config that cannot be taken as it is, and why."""


class NotMapped(Exception):
    """An entity with no HAP counterpart, and what it is."""


@dataclass
class Attachment:
    """A characteristic an entity puts on other services of its device:
    `kind` "low_battery" (the BatteryService, else every sensor service),
    "tampered" and "fault" (every sensor service), "pressure" (the first
    sensor service)."""

    kind: str
    characteristic: dict
    make: Callable[[Ref], Binding]


@dataclass
class EntityMap:
    uid: str
    discovery_id: str
    component: str
    name: Optional[str]  # the entity's own name (None: the device's)
    device_key: str
    device: dict
    services: List[dict]
    bindings: List[Binding]
    attachments: List[Attachment] = field(default_factory=list)
    availability: Availability = field(default_factory=lambda: Availability([]))
    qos: int = 0
    retain: bool = False
    #: Options left out ("color_temp_command_topic", …), for the debug log.
    ignored: List[str] = field(default_factory=list)
    #: Its services take the sensors' status characteristics.
    sensor: bool = False
    #: Seconds without a message on `state_topic` after which its state is
    #: unknown (`expire_after`): the entity is then unavailable, as in Home Assistant.
    expire_after: Optional[float] = None
    state_topic: Optional[str] = None

    @property
    def topics(self) -> List[str]:
        """Every topic filter it reads: state topics and availability topics."""
        out = [b.topic for b in self.bindings if b.topic]
        out += [s.topic for s in self.availability.sources]
        return list(dict.fromkeys(out))


def _subscribable(key: str, topic: str) -> str:
    """A topic filter the broker takes ('+' and '#' stand alone, '#' last), or Refused."""
    levels = topic.split("/")
    if any(("+" in level and level != "+") or ("#" in level and level != "#") for level in levels) \
            or "#" in levels[:-1] or "\0" in topic:
        raise Refused(f"{key} {topic!r} is not a topic to subscribe to ('+' and '#' stand alone, '#' last)")
    return topic


class _Entity:
    """Reads one config and collects what it maps to."""

    def __init__(self, discovery_id: str, component: str, config: dict):
        self.config = config
        self.component = component
        uid = config.get("unique_id")
        if isinstance(uid, (str, int)) and not isinstance(uid, bool) and str(uid).strip():
            self.uid = str(uid).strip()
        else:
            self.uid = discovery_id  # stable too, as long as the device keeps its topic
        if len(self.uid.encode()) > 256 or any(ord(c) < 32 or ord(c) == 127 for c in self.uid):
            raise Refused(f"unique_id {self.uid[:40]!r}… is over 256 bytes or has control characters")
        device = config.get("device") if isinstance(config.get("device"), dict) else {}
        self.device = device
        self.device_key = device_key_of(config) or self.uid
        if len(self.device_key.encode()) > 256 or any(ord(c) < 32 for c in self.device_key):
            raise Refused(f"device identifier {self.device_key[:40]!r}… is over 256 bytes or has control characters")
        name = config.get("name", MISSING)
        device_name = device.get("name") if isinstance(device.get("name"), str) else None
        if name is None or (name is MISSING and device_name):
            self.name = None  # named after its device
        else:
            self.name = str(name) if name is not MISSING else f"MQTT {component.replace('_', ' ')}"
        self.services: List[dict] = []
        self.bindings: List[Binding] = []
        self.attachments: List[Attachment] = []
        self.ignored: List[str] = []
        self.sensor = False
        self.expire_after: Optional[float] = None
        self.state_topic: Optional[str] = None
        qos = config.get("qos", 0)
        # Home Assistant coerces the QoS to a number: "2" (as YAML and some devices write it) is 2.
        qos = int(qos) if isinstance(qos, str) and qos.strip() in ("0", "1", "2") else qos
        self.qos = qos if qos in (0, 1, 2) and not isinstance(qos, bool) else 0
        self.retain = config.get("retain") is True
        self.optimistic = config.get("optimistic") is True
        self.device_class = config.get("device_class") if isinstance(config.get("device_class"), str) else None

    # -- reading the config -----------------------------------------------------

    def topic(self, key: str, required: bool = False, command: bool = False) -> Optional[str]:
        value = self.config.get(key)
        if value is None or value == "":
            if required:
                raise Refused(f"no {key}, which a {self.component} needs")
            return None
        if not isinstance(value, str):
            raise Refused(f"{key} is a {type(value).__name__}, not a topic")
        if command and ("+" in value or "#" in value):
            raise Refused(f"{key} {value!r} has a wildcard; a command goes to one topic")
        return _subscribable(key, value)

    def template(self, key: str) -> Optional[Template]:
        source = self.config.get(key)
        if source is None or source == "":
            return None
        try:
            return compile_template(source)
        except Unsupported as why:
            raise Refused(f"{key} {str(source)[:80]!r} is a template this provider does not read: {why}") from None

    def command(self, key: str, names: tuple = ("value",)) -> Callable[[str], str]:
        """The command template `key` as a function of the value's text
        (`PREFIX{{ value }}SUFFIX`); anything else is refused: what to send
        would be a guess."""
        try:
            return command_format(self.config.get(key), names)
        except Unsupported as why:
            raise Refused(f"{key} {str(self.config.get(key))[:80]!r}: {why}") from None

    def text(self, key: str, default: Optional[str]) -> Optional[str]:
        if key not in self.config:
            return default
        return scalar_text(self.config[key])

    def number(self, key: str, default: float) -> float:
        value = self.config.get(key, default)
        if isinstance(value, str):  # Home Assistant coerces a number given as text ("99"), as for qos
            try:
                value = float(value.strip())
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise Refused(f"{key} {value!r} is not a number")
        return float(value)

    def seconds(self, key: str) -> Optional[float]:
        """A positive number of seconds, or None when absent or 0 (Home
        Assistant's "not set"); anything else is Refused."""
        value = self.config.get(key)
        if isinstance(value, str):  # Home Assistant coerces a number given as text ("4"), as for qos
            try:
                value = float(value.strip())
            except ValueError:
                pass
        if value is None or value == 0:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise Refused(f"{key} {value!r} is not a number of seconds")
        return float(value)

    def ignore(self, *keys: str) -> None:
        self.ignored.extend(k for k in keys if self.config.get(k) not in (None, ""))

    # -- building -----------------------------------------------------------------

    def service(self, stype: str, sensor: bool = False) -> dict:
        key = self.uid if not self.services else f"{self.uid}#{len(self.services) + 1}"
        service = {"type": stype, "key": key, "characteristics": []}
        if self.name is not None:
            service["name"] = self.name
        self.services.append(service)
        self.sensor = self.sensor or sensor
        return service

    def bind(self, service: dict, ctype: str, meta: Optional[dict] = None, readonly: bool = False,
             **kwargs) -> Binding:
        binding = Binding(ref=Ref(self.device_key, service["key"], ctype), entity=self.uid, **kwargs)
        if ctype in CATALOG and binding.bounds == (None, None, None):
            low, high, step = CATALOG[ctype]
            meta_ = meta or {}  # the device's own range, when it declares one
            binding.bounds = (meta_.get("min_value", low), meta_.get("max_value", high), step)
        binding.integer = binding.integer or ctype in INTEGER
        entry: dict = {"type": ctype}
        if meta:
            entry["metadata"] = meta
        if readonly or (binding.write is None and ctype in WRITABLE):
            # The catalog's type is writable; this entity's is not.
            entry["properties"] = {"readable": True, "supports_event_notification": True}
            binding.write = None
        if binding.optimistic and binding.write is not None:
            entry["optimistic"] = True
        if binding.constant is not MISSING:
            entry["value"] = binding.constant
        service["characteristics"].append(entry)
        self.bindings.append(binding)
        return binding

    def result(self, discovery_id: str, availability: Availability) -> EntityMap:
        return EntityMap(self.uid, discovery_id, self.component, self.name, self.device_key, self.device,
                         self.services, self.bindings, self.attachments, availability, self.qos, self.retain,
                         self.ignored, self.sensor, self.expire_after, self.state_topic)


WRITABLE = {"On", "Brightness", "Hue", "Saturation", "TargetPosition", "LockTargetState", "TargetTemperature",
            "TargetHeatingCoolingState", "TemperatureDisplayUnits", "HoldPosition", "TargetHorizontalTiltAngle"}


# -- reading payloads -----------------------------------------------------------------


def _states(template: Optional[Template], table: Dict[str, Any]) -> Callable[[Message, dict], Any]:
    """A payload (through the template) looked up in a table of states; one
    that is none of them is an error naming them."""
    def read(message: Message, current: dict):
        value = message.render(template)
        if value is MISSING:
            return MISSING
        text = as_text(value)
        if text in table:
            return table[text]
        if text.strip() in UNKNOWN_STATES:
            return MISSING
        raise RenderError(f"{text[:40]!r} is none of {', '.join(repr(k) for k in table)}")
    return read


def _number(template: Optional[Template], convert: Callable[[float], Optional[float]] = lambda v: v):
    def read(message: Message, current: dict):
        value = message.render(template)
        if value is MISSING:
            return MISSING
        if isinstance(value, str):
            if value.strip() in UNKNOWN_STATES:
                return MISSING
            try:
                value = float(value)
            except ValueError:
                raise RenderError(f"{value[:40]!r} is not a number") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise RenderError(f"{as_text(value)[:40]!r} is not a number")
        converted = convert(float(value))
        if converted is None:
            raise RenderError(f"{value!r} cannot be converted")
        return converted
    return read


def _json_object(message: Message) -> dict:
    value = message.json()
    if not isinstance(value, dict):
        raise RenderError(f"a JSON {type(value).__name__}, not an object")
    return value


def _num(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RenderError(f"{value!r} is not a number")
    return float(value)


def _text(value: float) -> str:
    """A number as a command payload: 21 rather than 21.0."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# -- the components ---------------------------------------------------------------------


def _switch(e: _Entity) -> None:
    command = e.topic("command_topic", required=True, command=True)
    fmt = e.command("command_template")
    state = e.topic("state_topic")
    template = e.template("value_template")
    on, off = e.text("payload_on", "ON"), e.text("payload_off", "OFF")
    state_on, state_off = e.text("state_on", on), e.text("state_off", off)
    outlet = e.device_class == "outlet"
    service = e.service("Outlet" if outlet else "Switch")
    read = _states(template, {state_on: True, state_off: False}) if state else None
    binding = e.bind(service, "On", topic=state, read=read, write=lambda v, cur: [(command, fmt(on if v else off))],
                     optimistic=e.optimistic or not state)
    if outlet:  # in use while on: a plug's power reading is an entity of its own
        in_use = e.bind(service, "OutletInUse", topic=state, read=read)
        binding.followers[in_use.ref] = lambda v: v


def _light(e: _Entity) -> None:
    schema = e.config.get("schema", "default")
    if schema in ("default", "basic"):
        _light_default(e)
    elif schema == "json":
        _light_json(e)
    else:
        raise Refused(f"light schema {schema!r} is not one this provider reads (default and json are)")


def _light_default(e: _Entity) -> None:
    command = e.topic("command_topic", required=True, command=True)
    state = e.topic("state_topic")
    on, off = e.text("payload_on", "ON"), e.text("payload_off", "OFF")
    scale = e.number("brightness_scale", 255)
    service = e.service("Lightbulb")
    on_type = e.config.get("on_command_type", "last")
    bri_command = e.topic("brightness_command_topic", command=True)
    bri_fmt = e.command("brightness_command_template")
    bri_ref = Ref(e.device_key, service["key"], "Brightness")
    on_ref = Ref(e.device_key, service["key"], "On")

    def level(percent, cur) -> str:
        # A light whose on command is its brightness takes 0 as off: while it is
        # (turned) on it is sent at least 1, as Home Assistant sends it.
        lowest = 1 if on_type == "brightness" and cur.get(on_ref) is True else 0
        return bri_fmt(_text(max(lowest, round(percent * scale / 100))))

    def write_on(v, cur):
        if v and on_type == "brightness" and bri_command:
            percent = cur.get(bri_ref)
            return [(bri_command, level(100 if percent is None else percent, cur))]  # 0 is a brightness too
        return [(command, on if v else off)]

    e.bind(service, "On", topic=state, read=_states(e.template("state_value_template"), {on: True, off: False})
           if state else None, write=write_on, optimistic=e.optimistic or not state,
           order=-1 if on_type == "first" else 1)
    if bri_command:
        bri_state = e.topic("brightness_state_topic")
        e.bind(service, "Brightness", topic=bri_state,
               read=_number(e.template("brightness_value_template"), lambda v: v * 100 / scale) if bri_state else None,
               write=lambda v, cur: [(bri_command, level(v, cur))], tolerance=1,
               optimistic=e.optimistic or not bri_state)
    hs_command = e.topic("hs_command_topic", command=True)
    if hs_command:
        hs_fmt = e.command("hs_command_template")
        hs_state = e.topic("hs_state_topic")
        hs_template = e.template("hs_value_template")
        hue_ref, sat_ref = Ref(e.device_key, service["key"], "Hue"), Ref(e.device_key, service["key"], "Saturation")

        def hs(index):
            def read(message: Message, current: dict):
                value = message.render(hs_template)
                if value is MISSING or as_text(value).strip() in UNKNOWN_STATES:
                    return MISSING
                parts = as_text(value).split(",")
                try:
                    return float(parts[index])
                except (ValueError, IndexError):
                    raise RenderError(f"{as_text(value)[:40]!r} is not 'hue,saturation'") from None
            return read

        def write_hs(v, cur):
            return [(hs_command, hs_fmt(f"{_text(cur.get(hue_ref, 0))},{_text(cur.get(sat_ref, 0))}"))]

        for index, ctype in enumerate(("Hue", "Saturation")):
            e.bind(service, ctype, topic=hs_state, read=hs(index) if hs_state else None, write=write_hs, tolerance=2,
                   optimistic=e.optimistic or not hs_state)
    ct_command = e.topic("color_temp_command_topic", command=True)
    if ct_command:
        ct_fmt = e.command("color_temp_command_template")
        ct_state = e.topic("color_temp_state_topic")
        to_mireds, from_mireds, meta = _colour_temperature(e)
        e.bind(service, "ColorTemperature", meta=meta, topic=ct_state,
               read=_number(e.template("color_temp_value_template"), to_mireds) if ct_state else None,
               write=lambda v, cur: [(ct_command, ct_fmt(_text(from_mireds(v))))], tolerance=1,
               optimistic=e.optimistic or not ct_state)
    e.ignore("rgb_command_topic", "rgbw_command_topic", "rgbww_command_topic", "xy_command_topic",
             "effect_command_topic", "white_command_topic")


def _light_json(e: _Entity) -> None:
    command = e.topic("command_topic", required=True, command=True)
    state = e.topic("state_topic")
    scale = e.number("brightness_scale", 255)
    modes = e.config.get("supported_color_modes")
    modes = [m for m in modes if isinstance(m, str)] if isinstance(modes, list) else []
    brightness = e.config.get("brightness") is True or any(m != "onoff" for m in modes)
    flags = {m for m in ("hs", "xy", "rgb") if e.config.get(m) is True}
    colour = next((m for m in ("hs", "xy", "rgb", "rgbw", "rgbww") if m in modes or m in flags), None)
    optimistic = e.optimistic or not state
    service = e.service("Lightbulb")

    def field_of(name: str, convert: Callable[[Any], Any]):
        def read(message: Message, current: dict):
            payload = _json_object(message)
            return convert(payload[name]) if name in payload and payload[name] is not None else MISSING
        return read

    def on_of(value):
        if value not in ("ON", "OFF"):
            raise RenderError(f"state {value!r} is neither 'ON' nor 'OFF'")
        return value == "ON"

    e.bind(service, "On", topic=state, read=field_of("state", on_of) if state else None,
           write=lambda v, cur: [(command, {"state": "ON" if v else "OFF"})], optimistic=optimistic)
    if brightness:
        e.bind(service, "Brightness", topic=state, read=field_of("brightness", lambda v: _num(v) * 100 / scale)
               if state else None, write=lambda v, cur: [(command, {"brightness": round(v * scale / 100)})],
               tolerance=1, optimistic=optimistic)
    if colour:
        hue_ref, sat_ref = Ref(e.device_key, service["key"], "Hue"), Ref(e.device_key, service["key"], "Saturation")

        def hs_of(value) -> Tuple[float, float]:
            if not isinstance(value, dict):
                raise RenderError(f"color {value!r} is not an object")
            if "h" in value and "s" in value:
                return _num(value["h"]), _num(value["s"])
            if "x" in value and "y" in value:
                return xy_to_hs(_num(value["x"]), _num(value["y"]))
            if all(k in value for k in "rgb"):
                return rgb_to_hs(_num(value["r"]), _num(value["g"]), _num(value["b"]))
            raise RenderError(f"color {value!r} has no h/s, x/y or r/g/b")

        def write_colour(v, cur):
            hue, sat = cur.get(hue_ref, 0), cur.get(sat_ref, 0)
            if colour == "hs":
                return [(command, {"color": {"h": hue, "s": sat}})]
            if colour == "xy":
                x, y = hs_to_xy(hue, sat)
                return [(command, {"color": {"x": x, "y": y}})]
            r, g, b = hs_to_rgb(hue, sat)
            extra = {"w": 0} if colour == "rgbw" else {"c": 0, "w": 0} if colour == "rgbww" else {}
            return [(command, {"color": {"r": r, "g": g, "b": b, **extra}})]

        for index, ctype in enumerate(("Hue", "Saturation")):
            e.bind(service, ctype, topic=state, read=field_of("color", lambda v, i=index: hs_of(v)[i])
                   if state else None, write=write_colour, tolerance=2, optimistic=optimistic)
    if "color_temp" in modes or e.config.get("color_temp") is True:
        to_mireds, from_mireds, meta = _colour_temperature(e)
        e.bind(service, "ColorTemperature", meta=meta, topic=state, tolerance=1, optimistic=optimistic,
               read=field_of("color_temp", lambda v: to_mireds(_num(v))) if state else None,
               write=lambda v, cur: [(command, {"color_temp": from_mireds(v)})])


def _colour_temperature(e: _Entity):
    """(device value -> mireds, mireds -> device value, metadata): mireds, or
    kelvin with `color_temp_kelvin`, in the light's own range (Home Assistant's
    153–500 mireds, 2000–6535 K by default), which the daemon takes as declared."""
    if e.config.get("color_temp_kelvin") is True:
        low_k, high_k = e.number("min_kelvin", 2000), e.number("max_kelvin", 6535)
        if not 0 < low_k < high_k:
            raise Refused(f"min_kelvin {low_k:g} and max_kelvin {high_k:g} are not a range of temperatures")
        meta = {"min_value": float(round(1e6 / high_k)), "max_value": float(round(1e6 / low_k))}
        return (lambda k: 1e6 / k if k > 0 else MISSING), (lambda m: round(1e6 / m)), meta
    low, high = e.number("min_mireds", 153), e.number("max_mireds", 500)
    if not 0 < low < high:
        raise Refused(f"min_mireds {low:g} and max_mireds {high:g} are not a range of mireds")
    return (lambda m: m), (lambda m: int(round(m))), {"min_value": low, "max_value": high}


# binary_sensor device_class -> (service type, characteristic, value when on, when off)
BINARY_SENSORS: Dict[str, Tuple[str, str, Any, Any]] = {
    "door": ("ContactSensor", "ContactSensorState", 1, 0),  # on = open = ContactNotDetected
    "garage_door": ("ContactSensor", "ContactSensorState", 1, 0),
    "opening": ("ContactSensor", "ContactSensorState", 1, 0),
    "window": ("ContactSensor", "ContactSensorState", 1, 0),
    "motion": ("MotionSensor", "MotionDetected", True, False),
    "moving": ("MotionSensor", "MotionDetected", True, False),
    "vibration": ("MotionSensor", "MotionDetected", True, False),
    "occupancy": ("OccupancySensor", "OccupancyDetected", 1, 0),
    "presence": ("OccupancySensor", "OccupancyDetected", 1, 0),
    "moisture": ("LeakSensor", "LeakDetected", 1, 0),
    "smoke": ("SmokeSensor", "SmokeDetected", 1, 0),
    "carbon_monoxide": ("CarbonMonoxideSensor", "CarbonMonoxideDetected", 1, 0),
}
# binary_sensor device_class -> (attachment kind, characteristic) put on the device's other services
BINARY_STATUS = {"battery": ("low_battery", "StatusLowBattery"), "tamper": ("tampered", "StatusTampered"),
                 "problem": ("fault", "StatusFault")}


def _binary_sensor(e: _Entity) -> None:
    state = e.topic("state_topic", required=True)
    template = e.template("value_template")
    on, off = e.text("payload_on", "ON"), e.text("payload_off", "OFF")
    off_delay = e.seconds("off_delay")
    e.expire_after, e.state_topic = e.seconds("expire_after"), state
    if e.device_class in BINARY_STATUS:
        kind, ctype = BINARY_STATUS[e.device_class]
        read = _states(template, {on: 1, off: 0})
        e.attachments.append(Attachment(kind, {"type": ctype}, lambda ref: Binding(
            ref=ref, entity=e.uid, topic=state, read=read, off_delay=off_delay, off_value=0)))
        return
    if e.device_class not in BINARY_SENSORS:
        raise NotMapped(f"a binary_sensor of device_class {e.device_class!r} (no HAP sensor for it)")
    stype, ctype, when_on, when_off = BINARY_SENSORS[e.device_class]
    service = e.service(stype, sensor=True)
    e.bind(service, ctype, topic=state, read=_states(template, {on: when_on, off: when_off}), off_delay=off_delay,
           off_value=when_off)


#: The highest PM2.5 and PM10 levels (µg/m³) of AirQuality Excellent, Good, Fair, Inferior; above: Poor.
PM25_BANDS = (12, 35, 55, 150)
PM10_BANDS = (54, 154, 254, 354)


def _air_quality(level: float, bands: Tuple[float, ...]) -> int:
    return next((i + 1 for i, top in enumerate(bands) if level <= top), 5)


def _sensor(e: _Entity) -> None:
    state = e.topic("state_topic", required=True)
    e.expire_after, e.state_topic = e.seconds("expire_after"), state
    template = e.template("value_template")
    unit = e.config.get("unit_of_measurement") if isinstance(e.config.get("unit_of_measurement"), str) else ""
    dc = e.device_class

    def sensor(stype, ctype, convert=lambda v: v, derived: Optional[Tuple[str, Callable[[float], Any]]] = None):
        service = e.service(stype, sensor=True)
        read = _number(template, convert)
        if derived:  # the required detected/quality characteristic, from the level
            name, of = derived
            e.bind(service, name, topic=state, read=lambda m, c: MISSING if (v := read(m, c)) is MISSING else of(v))
        e.bind(service, ctype, topic=state, read=read)

    if dc == "temperature":
        sensor("TemperatureSensor", "CurrentTemperature", lambda v: to_celsius(v, unit or "°C"))
    elif dc == "humidity":
        sensor("HumiditySensor", "CurrentRelativeHumidity")
    elif dc == "illuminance":
        sensor("LightSensor", "CurrentAmbientLightLevel")
    elif dc == "carbon_dioxide":
        sensor("CarbonDioxideSensor", "CarbonDioxideLevel",
               derived=("CarbonDioxideDetected", lambda v: 1 if v > CO2_ABNORMAL_PPM else 0))
    elif dc == "carbon_monoxide":
        sensor("CarbonMonoxideSensor", "CarbonMonoxideLevel",
               derived=("CarbonMonoxideDetected", lambda v: 1 if v > CO_ABNORMAL_PPM else 0))
    elif dc == "pm25":
        sensor("AirQualitySensor", "PM2.5Density", derived=("AirQuality", lambda v: _air_quality(v, PM25_BANDS)))
    elif dc == "pm10":
        sensor("AirQualitySensor", "PM10Density", derived=("AirQuality", lambda v: _air_quality(v, PM10_BANDS)))
    elif dc == "battery":
        service = e.service("BatteryService")
        read = _number(template)
        e.bind(service, "BatteryLevel", topic=state, read=read)
        e.bind(service, "ChargingState", constant=2)  # NotChargeable: a charging entity is a binary_sensor
        # Replaced by a battery binary_sensor of the device when it has one (see accessory.py).
        e.bind(service, "StatusLowBattery", topic=state,
               read=lambda m, c: MISSING if (v := read(m, c)) is MISSING else int(v < LOW_BATTERY_PERCENT))
    elif dc in ("pressure", "atmospheric_pressure"):
        if to_hpa(1.0, unit) is None:
            raise NotMapped(f"a pressure in {unit!r}, a unit this provider does not convert")
        read = _number(template, lambda v: to_hpa(v, unit))
        characteristic = {"type": PRESSURE_UUID, "type_name": "AirPressure", "metadata": dict(PRESSURE_META),
                          "properties": {"readable": True, "supports_event_notification": True}}
        e.attachments.append(Attachment("pressure", characteristic, lambda ref: Binding(
            ref=ref, entity=e.uid, topic=state, read=read,
            bounds=(PRESSURE_META["min_value"], PRESSURE_META["max_value"], 0.1))))
    else:
        raise NotMapped(f"a sensor of device_class {dc!r}" + (f" ({unit})" if unit else "") + " (no HAP sensor for it)")


def _cover(e: _Entity) -> None:
    command = e.topic("command_topic", command=True)
    state = e.topic("state_topic")
    position = e.topic("position_topic")
    set_position = e.topic("set_position_topic", command=True)
    if not any((command, state, position, set_position)):
        raise Refused("a cover with no command_topic, state_topic, position_topic or set_position_topic")
    position_fmt = e.command("set_position_template", ("position", "value"))
    read_state = _states(e.template("value_template"), _cover_states(e))
    closed, opened = e.number("position_closed", 0), e.number("position_open", 100)
    if closed == opened:
        raise Refused(f"position_closed and position_open are both {closed:g}")
    read_position = _number(e.template("position_template"), lambda v: (v - closed) * 100 / (opened - closed))
    service = e.service("WindowCovering")
    refs = {c: Ref(e.device_key, service["key"], c) for c in ("CurrentPosition", "TargetPosition", "PositionState")}

    def stopped(cur) -> bool:
        return cur.get(refs["PositionState"], 2) == 2

    # PositionState first: the position characteristics read it (a message that
    # says "stopped" and where is read in that order).
    if state:
        moving = {"opening": 1, "closing": 0}
        e.bind(service, "PositionState", topic=state, acks=refs["TargetPosition"], ack_values=(0, 1),
               read=lambda m, c: MISSING if (s := read_state(m, c)) is MISSING else moving.get(s, 2))
    else:
        e.bind(service, "PositionState", constant=2)

    def write_target(v, cur):
        if set_position:
            return [(set_position, position_fmt(_text(round(closed + v * (opened - closed) / 100))))]
        payload = e.text("payload_open", "OPEN") if v >= 50 else e.text("payload_close", "CLOSE")
        if payload is None:
            raise ValueError(f"cover {e.uid!r} has no payload to {'open' if v >= 50 else 'close'} it")
        return [(command, payload)]

    optimistic = e.optimistic or not (state or position)
    write = write_target if (set_position or command) else None
    if position:
        # The target follows where the cover is while it is not moving; while it
        # moves, the target written stays.
        e.bind(service, "CurrentPosition", topic=position, read=read_position)
        target = e.bind(service, "TargetPosition", topic=position, write=write, optimistic=optimistic,
                        read=lambda m, c: read_position(m, c) if stopped(c) else MISSING)
        if state:  # stopped (open, closed): the target is where it stopped
            e.bindings.append(Binding(ref=target.ref, entity=e.uid, topic=state, bounds=target.bounds, integer=True,
                                      read=lambda m, c: c.get(refs["CurrentPosition"], MISSING)
                                      if read_state(m, c) in ("open", "closed", "stopped") else MISSING))
    else:  # open or closed only: a target of 70 is "open"
        ends = {"open": 100, "closed": 0}
        read_end = (lambda m, c: ends.get(read_state(m, c), MISSING)) if state else None
        e.bind(service, "CurrentPosition", topic=state, read=read_end)
        target = e.bind(service, "TargetPosition", topic=state, read=read_end, write=write, optimistic=optimistic,
                        tolerance=0 if set_position else 50)
    if optimistic:
        target.followers[refs["CurrentPosition"]] = lambda v: v
    stop = e.text("payload_stop", "STOP")
    if command and stop is not None:
        e.bind(service, "HoldPosition", write=lambda v, cur: [(command, stop)] if v else [], optimistic=True)
    tilt_command = e.topic("tilt_command_topic", command=True)
    tilt_status = e.topic("tilt_status_topic")
    if tilt_command or tilt_status:
        _tilt(e, service, tilt_command, tilt_status)


def _tilt(e: _Entity, service: dict, command: Optional[str], status: Optional[str]) -> None:
    """A cover's tilt as HAP's horizontal tilt angle: Home Assistant's
    `tilt_min` (default 0) is -90°, `tilt_max` (default 100) is 90°, the
    values between scaled (a `tilt_min` above `tilt_max` turns it round)."""
    low, high = e.number("tilt_min", 0), e.number("tilt_max", 100)
    if low == high:
        raise Refused(f"tilt_min and tilt_max are both {low:g}")
    source = e.config.get("tilt_command_template")
    # Home Assistant's `tilt_position` is the percentage; `value` the device's own number.
    percent = isinstance(source, str) and re.search(r"\{\{\s*tilt_position\s*\}\}", source) is not None
    fmt = e.command("tilt_command_template", ("tilt_position", "value"))
    read = _number(e.template("tilt_status_template"), lambda v: -90 + (v - low) * 180 / (high - low))

    def write(v, cur):
        share = (v + 90) / 180
        return [(command, fmt(_text(round(share * 100)) if percent else _text(round(low + share * (high - low)))))]

    optimistic = bool(command) and (e.optimistic or e.config.get("tilt_optimistic") is True or not status)
    current = e.bind(service, "CurrentHorizontalTiltAngle", topic=status, read=read if status else None)
    # One step of the device's range may be more than a degree (1.8° for 0–100).
    tolerance = abs(180 / (high - low)) / 2 + 1
    target = e.bind(service, "TargetHorizontalTiltAngle", topic=status, read=read if status else None,
                    write=write if command else None, optimistic=optimistic, tolerance=tolerance)
    if optimistic:
        target.followers[current.ref] = lambda v: v


def _cover_states(e: _Entity) -> Dict[str, str]:
    names = {"open": e.text("state_open", "open"), "opening": e.text("state_opening", "opening"),
             "closed": e.text("state_closed", "closed"), "closing": e.text("state_closing", "closing"),
             "stopped": e.text("state_stopped", "stopped")}
    return {text: name for name, text in names.items() if text is not None}


def _lock(e: _Entity) -> None:
    command = e.topic("command_topic", required=True, command=True)
    fmt = e.command("command_template")
    state = e.topic("state_topic")
    template = e.template("value_template")
    lock, unlock = e.text("payload_lock", "LOCK"), e.text("payload_unlock", "UNLOCK")
    names = {"locked": e.text("state_locked", "LOCKED"), "unlocked": e.text("state_unlocked", "UNLOCKED"),
             "locking": e.text("state_locking", "LOCKING"), "unlocking": e.text("state_unlocking", "UNLOCKING"),
             "jammed": e.text("state_jammed", "JAMMED"), "open": e.text("state_open", "OPEN"),
             "opening": e.text("state_opening", "OPENING")}
    table = {text: name for name, text in names.items() if text is not None}
    read = _states(template, table)
    current_of = {"locked": 1, "unlocked": 0, "jammed": 2, "open": 0}
    target_of = {"locked": 1, "locking": 1, "unlocked": 0, "unlocking": 0, "open": 0, "opening": 0}
    service = e.service("LockMechanism")
    optimistic = e.optimistic or not state
    current = e.bind(service, "LockCurrentState", topic=state,
                     read=(lambda m, c: current_of.get(read(m, c), MISSING)) if state else None)
    target = e.bind(service, "LockTargetState", topic=state,
                    read=(lambda m, c: target_of.get(read(m, c), MISSING)) if state else None,
                    write=lambda v, cur: [(command, fmt(lock if v else unlock))], optimistic=optimistic)
    if optimistic:
        target.followers[current.ref] = lambda v: int(v)


HVAC_MODES = {"off": 0, "heat": 1, "cool": 2, "auto": 3, "heat_cool": 3}
HVAC_ACTIONS = {"heating": 1, "preheating": 1, "cooling": 2}


def _climate(e: _Entity) -> None:
    topics = ("current_temperature_topic", "temperature_state_topic", "temperature_command_topic",
              "mode_state_topic", "mode_command_topic")
    if not any(e.config.get(t) for t in topics):
        raise Refused("a climate with none of " + ", ".join(topics))
    temperature_fmt, mode_fmt = e.command("temperature_command_template"), e.command("mode_command_template")
    unit = e.config.get("temperature_unit") if e.config.get("temperature_unit") in ("C", "F") else "C"
    service = e.service("Thermostat")
    current = e.topic("current_temperature_topic")
    e.bind(service, "CurrentTemperature", topic=current,
           read=_number(e.template("current_temperature_template"), lambda v: to_celsius(v, unit)) if current else None)
    # Target temperature: the device's range within the catalog's, on its step.
    low = to_celsius(e.number("min_temp", 7 if unit == "C" else 44.6), unit)
    high = to_celsius(e.number("max_temp", 35 if unit == "C" else 95), unit)
    step = e.number("temp_step", 1)
    if low > high:
        raise Refused(f"min_temp {low:g} is above max_temp {high:g}")
    # The device's own range, as it declares it (a valve's 5 °C under the catalog's 10).
    c_low, c_high, c_step = round(low, 1), round(high, 1), CATALOG["TargetTemperature"][2]
    meta = {"min_value": c_low, "max_value": c_high}
    t_state, t_command = e.topic("temperature_state_topic"), e.topic("temperature_command_topic", command=True)

    def write_setpoint(v, cur):
        device = from_celsius(v, unit)
        return [(t_command, temperature_fmt(_text(round(round(device / step) * step, 2))))]

    e.bind(service, "TargetTemperature", meta=meta or None, topic=t_state,
           read=_number(e.template("temperature_state_template"), lambda v: to_celsius(v, unit)) if t_state else None,
           write=write_setpoint if t_command else None, bounds=(c_low, c_high, c_step),
           tolerance=step * (5 / 9 if unit == "F" else 1) / 2 + 0.05, optimistic=e.optimistic or not t_state)
    modes = e.config.get("modes", ["auto", "off", "cool", "heat", "dry", "fan_only"])
    modes = [m for m in modes if m in HVAC_MODES] if isinstance(modes, list) else []
    m_state, m_command = e.topic("mode_state_topic"), e.topic("mode_command_topic", command=True)
    if modes and (m_state or m_command):
        names = {}
        for mode in sorted(modes, key=lambda m: m != "auto"):
            names.setdefault(HVAC_MODES[mode], mode)  # auto before heat_cool for 3, when both
        table = {m: HVAC_MODES[m] for m in modes}
        read = _states(e.template("mode_state_template"), {**table, "dry": MISSING, "fan_only": MISSING})
        write = (lambda v, cur: [(m_command, mode_fmt(names[int(v)]))]) if m_command else None
        e.bind(service, "TargetHeatingCoolingState", meta={"valid_values": sorted(names)}, topic=m_state,
               read=read if m_state else None, write=write, optimistic=e.optimistic or not m_state)
    else:  # no mode to read or choose: heating
        e.bind(service, "TargetHeatingCoolingState", meta={"valid_values": [1]}, constant=1, readonly=True)
    action = e.topic("action_topic")
    if action:
        template = e.template("action_template")
        e.bind(service, "CurrentHeatingCoolingState", topic=action,
               read=lambda m, c: MISSING if (v := m.render(template)) is MISSING else HVAC_ACTIONS.get(as_text(v), 0))
    else:
        e.bind(service, "CurrentHeatingCoolingState", constant=0)
    e.bind(service, "TemperatureDisplayUnits", constant=0 if unit == "C" else 1, readonly=True)
    e.ignore("temperature_low_command_topic", "temperature_high_command_topic", "fan_mode_command_topic",
             "swing_mode_command_topic", "preset_mode_command_topic", "power_command_topic",
             "target_humidity_command_topic")


_MAPPERS = {"switch": _switch, "light": _light, "binary_sensor": _binary_sensor, "sensor": _sensor,
            "cover": _cover, "lock": _lock, "climate": _climate}


def _availability(e: _Entity) -> Availability:
    config = e.config
    mode = config.get("availability_mode", "latest")
    if mode not in ("latest", "all", "any"):
        raise Refused(f"availability_mode {mode!r} is none of latest, all, any")
    default_on = e.text("payload_available", "online")
    default_off = e.text("payload_not_available", "offline")
    sources = []
    topic = e.topic("availability_topic")
    if topic:
        sources.append(AvailabilitySource(topic, default_on, default_off, e.template("availability_template")))
    listed = config.get("availability")
    if listed is not None:
        if not isinstance(listed, list):
            listed = [listed]
        for index, item in enumerate(listed):
            if not isinstance(item, dict) or not isinstance(item.get("topic"), str) or not item["topic"]:
                raise Refused(f"availability entry {index + 1} has no topic")
            template = None
            if item.get("value_template"):
                try:
                    template = compile_template(item["value_template"])
                except Unsupported as why:
                    raise Refused(f"availability entry {index + 1}'s value_template is a template this provider "
                                  f"does not read: {why}") from None
            on = scalar_text(item["payload_available"]) if "payload_available" in item else default_on
            off = scalar_text(item["payload_not_available"]) if "payload_not_available" in item else default_off
            topic = _subscribable(f"availability entry {index + 1}'s topic", item["topic"])
            sources.append(AvailabilitySource(topic, on, off, template))
    return Availability(sources, mode)


def map_entity(discovery_id: str, component: str, config: dict) -> EntityMap:
    """One entity's config as an EntityMap; raises Refused or NotMapped."""
    if "_error" in config:
        raise Refused(config["_error"])
    mapper = _MAPPERS.get(component)
    if mapper is None:
        if component in OTHER_PLATFORMS:
            raise NotMapped(f"a {component} (this provider maps {', '.join(COMPONENTS)})")
        raise Refused(f"unknown component {component!r} (this provider maps {', '.join(COMPONENTS)})")
    e = _Entity(discovery_id, component, config)
    availability = _availability(e)
    mapper(e)
    for service in e.services:
        if "name" in service:
            service["name"] = object_name(service["name"], e.uid)
    return e.result(discovery_id, availability)
