"""ESPHome entities as HAP services, with no I/O.

`map_device(info, entities)` takes what a device said (aioesphomeapi's
`DeviceInfo` and `EntityInfo` models) and gives a `DeviceMap`: the accessory to
register (a plain dict for homed.aio.Provider), one `Binding` per
characteristic (how a state gives its value, how a write becomes a command,
when a state confirms the write) and a sentence for each entity left out.

A command is `(method, kwargs)`: the name of an `aioesphomeapi.APIClient`
method and its arguments, so that the link (device.py) only sends it."""

from __future__ import annotations

import colorsys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from aioesphomeapi import model as m
from homed.refs import Ref

__all__ = ["MISSING", "Binding", "DeviceMap", "map_device", "accessory_key", "PRESS"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: A state that gives no value for a characteristic (a sensor's missing state,
#: a cover still moving for its target).
MISSING = _Missing()

Command = Tuple[str, dict]


@dataclass(eq=False)  # one per characteristic: compared and hashed by identity
class Binding:
    ref: Ref
    entity_key: int
    decode: Callable[[object], object]  # an entity state -> a value or MISSING
    # (value written, the entity's last state or None) -> a command's kwargs to merge
    encode: Optional[Callable[[object, object], dict]] = None
    method: str = ""  # the APIClient method a write calls
    tolerance: float = 0.0  # how far the state may be from the value written and still confirm it
    event: bool = False  # a press: reported once per state, never read
    momentary: bool = False  # a button: acknowledged when sent (it has no state), then off again


@dataclass
class DeviceMap:
    key: str
    name: str
    accessory: dict
    bindings: Dict[Ref, Binding] = field(default_factory=dict)
    left_out: List[str] = field(default_factory=list)

    def by_entity(self) -> Dict[int, List[Binding]]:
        out: Dict[int, List[Binding]] = {}
        for binding in self.bindings.values():
            out.setdefault(binding.entity_key, []).append(binding)
        return out

    def values(self, states: Dict[int, object]) -> Dict[Ref, object]:
        """{Ref: value} of every non-event characteristic the states give."""
        out = {}
        for binding in self.bindings.values():
            state = states.get(binding.entity_key)
            if binding.event or state is None:
                continue
            value = binding.decode(state)
            if value is not MISSING:
                out[binding.ref] = value
        return out

    def with_values(self, states: Dict[int, object], reachable: bool) -> dict:
        """The accessory to register, with the values the states give."""
        values = self.values(states)
        services = []
        for service in self.accessory["services"]:
            characteristics = []
            for c in service["characteristics"]:
                c = dict(c)
                ref = Ref(self.key, service["key"], c["type"])
                if ref in values:
                    c["value"] = values[ref]
                characteristics.append(c)
            services.append(dict(service, characteristics=characteristics))
        return dict(self.accessory, services=services, unreachable=not reachable)


def accessory_key(mac_address: str) -> str:
    """The accessory's key: the device's MAC, as ESPHome gives it, upper case
    (a re-flash keeps it; a name or an address may change)."""
    return mac_address.strip().upper()


def _clip(text: str, limit: int = 64) -> str:
    data = text.encode()[:limit]
    return data.decode(errors="ignore").strip() or "ESPHome"


def confirms(binding: Binding, written, state) -> bool:
    """Does the state the device sent confirm the value written?"""
    got = binding.decode(state)
    if got is MISSING:
        return False
    if isinstance(written, bool) or isinstance(got, bool):
        return bool(got) == bool(written)
    try:
        return abs(float(got) - float(written)) <= binding.tolerance + 1e-9
    except (TypeError, ValueError):
        return got == written


# -- the builder -----------------------------------------------------------------------

class _Builder:
    def __init__(self, key: str, device_name: str):
        self.key = key
        self.device_name = device_name
        self.services: List[dict] = []
        self.bindings: Dict[Ref, Binding] = {}

    def service(self, stype: str, kind: str, entity: m.EntityInfo) -> dict:
        label = entity.name or entity.object_id
        name = f"{self.device_name} {label}" if label and label != self.device_name else self.device_name
        service = {"type": stype, "key": f"{kind}_{entity.object_id or entity.key}", "name": _clip(name),
                   "characteristics": []}
        self.services.append(service)
        return service

    def bind(self, service: dict, ctype: str, entity: m.EntityInfo, decode, *, encode=None, method="",
             tolerance=0.0, metadata=None, event=False, momentary=False, read_only=False, constant=None):
        c: dict = {"type": ctype}
        if read_only:  # a catalog type HAP lets clients write, which this device cannot take
            c["properties"] = {"readable": True, "supports_event_notification": True}
        if metadata:
            c["metadata"] = metadata
        if constant is not None:
            c["value"] = constant
        service["characteristics"].append(c)
        ref = Ref(self.key, service["key"], ctype)
        self.bindings[ref] = Binding(ref, entity.key, decode, encode, method, tolerance, event, momentary)
        return c


def _unless_missing(decode):
    """A decoder that gives MISSING for a state the device marks missing."""
    def run(state):
        if getattr(state, "missing_state", False):
            return MISSING
        return decode(state)
    return run


# -- switches, buttons -----------------------------------------------------------------------

def _switch(b: _Builder, e: m.SwitchInfo, left_out) -> None:
    stype = "Outlet" if e.device_class == "outlet" else "Switch"
    s = b.service(stype, "switch", e)
    on = _unless_missing(lambda st: bool(st.state))
    b.bind(s, "On", e, on, encode=lambda v, _st: {"state": bool(v)}, method="switch_command")
    if stype == "Outlet":  # ESPHome says nothing of the load: in use while on
        b.bind(s, "OutletInUse", e, on)


def _button(b: _Builder, e: m.ButtonInfo, left_out) -> None:
    # A button has no state: a Switch that is pressed by turning it on, and is
    # off again once the press is sent (HAP has no stateless output).
    s = b.service("Switch", "button", e)
    b.bind(s, "On", e, lambda st: False, encode=lambda v, _st: {}, method="button_command", momentary=True,
           constant=False)


# -- lights -----------------------------------------------------------------------------------

_COLOR = {m.ColorMode.RGB, m.ColorMode.RGB_WHITE, m.ColorMode.RGB_COLOR_TEMPERATURE, m.ColorMode.RGB_COLD_WARM_WHITE}
_TEMPERATURE = {m.ColorMode.COLOR_TEMPERATURE, m.ColorMode.COLD_WARM_WHITE, m.ColorMode.RGB_COLOR_TEMPERATURE}
_DIMMABLE = set(m.ColorMode) - {m.ColorMode.UNKNOWN, m.ColorMode.ON_OFF}


def hs_of(state) -> Tuple[float, float]:
    h, s, _v = colorsys.rgb_to_hsv(max(0.0, state.red), max(0.0, state.green), max(0.0, state.blue))
    return round(h * 360.0, 1) % 360.0, round(s * 100.0, 1)


def rgb_of(hue: float, saturation: float) -> Tuple[float, float, float]:
    r, g, b = colorsys.hsv_to_rgb((hue % 360.0) / 360.0, saturation / 100.0, 1.0)
    return round(r, 4), round(g, 4), round(b, 4)


def _light(b: _Builder, e: m.LightInfo, left_out) -> None:
    modes = set(m.ColorMode.convert_list(list(e.supported_color_modes)))
    s = b.service("Lightbulb", "light", e)
    b.bind(s, "On", e, lambda st: bool(st.state), encode=lambda v, _st: {"state": bool(v)}, method="light_command")
    if modes & _DIMMABLE:
        # ESPHome's brightness is 0..1; HAP's percent. Writing a brightness
        # alone leaves the light's on/off as it is, as HAP expects.
        b.bind(s, "Brightness", e, lambda st: int(round(st.brightness * 100)),
               encode=lambda v, _st: {"brightness": round(v / 100.0, 4)}, method="light_command", tolerance=1)
    if modes & _COLOR:
        def hue_encode(v, st):
            return {"rgb": rgb_of(v, hs_of(st)[1] if st is not None else 100.0)}

        def sat_encode(v, st):
            return {"rgb": rgb_of(hs_of(st)[0] if st is not None else 0.0, v)}

        b.bind(s, "Hue", e, lambda st: hs_of(st)[0], encode=hue_encode, method="light_command", tolerance=2)
        b.bind(s, "Saturation", e, lambda st: hs_of(st)[1], encode=sat_encode, method="light_command", tolerance=2)
    if modes & _TEMPERATURE and e.min_mireds > 0 and e.max_mireds >= e.min_mireds:
        # Mireds on both sides, in the light's own range (the daemon checks
        # writes against it).
        b.bind(s, "ColorTemperature", e, lambda st: int(round(st.color_temperature)),
               encode=lambda v, _st: {"color_temperature": float(v)}, method="light_command", tolerance=1,
               metadata={"min_value": float(int(e.min_mireds)), "max_value": float(int(round(e.max_mireds)))})


def _fan(b: _Builder, e: m.FanInfo, left_out) -> None:
    s = b.service("Fan", "fan", e)
    b.bind(s, "On", e, lambda st: bool(st.state), encode=lambda v, _st: {"state": bool(v)}, method="fan_command")
    count = e.supported_speed_count
    if e.supports_speed and count > 0:
        b.bind(s, "RotationSpeed", e, lambda st: round(st.speed_level * 100.0 / count, 1),
               encode=lambda v, _st: {"speed_level": int(round(v * count / 100.0))}, method="fan_command",
               tolerance=100.0 / count / 2 + 0.1)


# -- sensors ----------------------------------------------------------------------------------

# device class -> (service, characteristic, value when on, value when off)
BINARY = {
    "door": ("ContactSensor", "ContactSensorState", 1, 0),  # on = open = contact not detected
    "window": ("ContactSensor", "ContactSensorState", 1, 0),
    "garage_door": ("ContactSensor", "ContactSensorState", 1, 0),
    "opening": ("ContactSensor", "ContactSensorState", 1, 0),
    "motion": ("MotionSensor", "MotionDetected", True, False),
    "moving": ("MotionSensor", "MotionDetected", True, False),
    "vibration": ("MotionSensor", "MotionDetected", True, False),
    "occupancy": ("OccupancySensor", "OccupancyDetected", 1, 0),
    "presence": ("OccupancySensor", "OccupancyDetected", 1, 0),
    "moisture": ("LeakSensor", "LeakDetected", 1, 0),
    "gas": ("LeakSensor", "LeakDetected", 1, 0),  # HAP has no gas detector: a gas leak is a leak
    "smoke": ("SmokeSensor", "SmokeDetected", 1, 0),
    "carbon_monoxide": ("CarbonMonoxideSensor", "CarbonMonoxideDetected", 1, 0),
}


def _binary_sensor(b: _Builder, e: m.BinarySensorInfo, left_out) -> None:
    spec = BINARY.get(e.device_class)
    if spec is None:
        left_out.append(f"binary_sensor {e.object_id!r} (device class {e.device_class or 'none'!r}: "
                        f"no HAP sensor for it)")
        return
    stype, ctype, on, off = spec
    s = b.service(stype, "binary_sensor", e)
    b.bind(s, ctype, e, _unless_missing(lambda st: on if st.state else off))


def _fahrenheit(unit: str):
    return (lambda v: round((v - 32.0) * 5.0 / 9.0, 2)) if unit in ("°F", "F") else (lambda v: v)


# PM2.5 in µg/m³ -> HAP AirQuality (1 excellent … 5 poor), by the upper bounds of each step
PM25_STEPS = ((12.0, 1), (35.4, 2), (55.4, 3), (150.4, 4))


def air_quality(pm25: float) -> int:
    for bound, verdict in PM25_STEPS:
        if pm25 <= bound:
            return verdict
    return 5


def _sensor(b: _Builder, e: m.SensorInfo, left_out) -> None:
    dc = e.device_class
    number = _unless_missing(lambda st: float(st.state) if st.state == st.state else MISSING)  # NaN: none yet
    if dc == "temperature":
        convert = _fahrenheit(e.unit_of_measurement)
        s = b.service("TemperatureSensor", "sensor", e)
        b.bind(s, "CurrentTemperature", e, lambda st: _then(number(st), convert))
    elif dc == "humidity":
        s = b.service("HumiditySensor", "sensor", e)
        b.bind(s, "CurrentRelativeHumidity", e, number)
    elif dc == "illuminance":
        s = b.service("LightSensor", "sensor", e)
        b.bind(s, "CurrentAmbientLightLevel", e, number)
    elif dc == "carbon_dioxide":
        s = b.service("CarbonDioxideSensor", "sensor", e)
        # HAP's abnormal level; 1000 ppm is the usual ventilation threshold
        b.bind(s, "CarbonDioxideDetected", e, lambda st: _then(number(st), lambda v: 1 if v > 1000 else 0))
        b.bind(s, "CarbonDioxideLevel", e, number)
    elif dc == "pm25":
        s = b.service("AirQualitySensor", "sensor", e)
        b.bind(s, "AirQuality", e, lambda st: _then(number(st), air_quality))
        b.bind(s, "PM2.5Density", e, number)
    elif dc == "battery":
        s = b.service("BatteryService", "sensor", e)
        b.bind(s, "BatteryLevel", e, lambda st: _then(number(st), lambda v: int(round(min(100.0, max(0.0, v))))))
        b.bind(s, "ChargingState", e, lambda st: 2, constant=2)  # NotChargeable: ESPHome does not say
        b.bind(s, "StatusLowBattery", e, lambda st: _then(number(st), lambda v: 1 if v < 20 else 0))
    else:
        left_out.append(f"sensor {e.object_id!r} (device class {dc or 'none'!r}: no HAP sensor for it)")


def _then(value, convert):
    return MISSING if value is MISSING else convert(value)


# -- covers, locks ----------------------------------------------------------------------------

_OPERATION = {m.CoverOperation.IS_CLOSING: 0, m.CoverOperation.IS_OPENING: 1, m.CoverOperation.IDLE: 2}


def _cover(b: _Builder, e: m.CoverInfo, left_out) -> None:
    s = b.service("WindowCovering", "cover", e)
    position = lambda st: int(round(st.position * 100))  # noqa: E731
    b.bind(s, "CurrentPosition", e, position)
    # While it moves the target is where it goes, which ESPHome does not say:
    # only an idle cover's position is reported as its target.
    target = lambda st: position(st) if st.current_operation == m.CoverOperation.IDLE else MISSING  # noqa: E731
    if e.supports_position:
        encode = lambda v, _st: {"position": round(v / 100.0, 4)}  # noqa: E731
        tolerance = 1
    else:  # open or closed only
        encode = lambda v, _st: {"position": 1.0 if v >= 50 else 0.0}  # noqa: E731
        tolerance = 50
    b.bind(s, "TargetPosition", e, target, encode=encode, method="cover_command", tolerance=tolerance)
    b.bind(s, "PositionState", e, lambda st: _OPERATION.get(st.current_operation, 2))
    if e.supports_tilt:
        tilt = lambda st: int(round(st.tilt * 180 - 90))  # noqa: E731  (0..1 closed..open → -90..90°)
        b.bind(s, "CurrentHorizontalTiltAngle", e, tilt)
        b.bind(s, "TargetHorizontalTiltAngle", e, tilt, encode=lambda v, _st: {"tilt": round((v + 90) / 180.0, 4)},
               method="cover_command", tolerance=1)
    if e.supports_stop:
        # HoldPosition is write-only in HAP: nothing to confirm but the command sent
        b.bind(s, "HoldPosition", e, lambda st: MISSING, encode=lambda v, _st: {"stop": True} if v else {},
               method="cover_command", momentary=True)


_LOCK_CURRENT = {m.LockState.UNLOCKED: 0, m.LockState.LOCKED: 1, m.LockState.JAMMED: 2, m.LockState.LOCKING: 0,
                 m.LockState.UNLOCKING: 1, m.LockState.OPEN: 0, m.LockState.OPENING: 0}
_LOCK_TARGET = {m.LockState.UNLOCKED: 0, m.LockState.UNLOCKING: 0, m.LockState.OPEN: 0, m.LockState.OPENING: 0,
                m.LockState.LOCKED: 1, m.LockState.LOCKING: 1}


def _lock(b: _Builder, e: m.LockInfo, left_out) -> None:
    if e.requires_code:
        left_out.append(f"lock {e.object_id!r} (it needs a code, which HAP has no way to give)")
        return
    s = b.service("LockMechanism", "lock", e)
    b.bind(s, "LockCurrentState", e, lambda st: _LOCK_CURRENT.get(st.state, 3))
    b.bind(s, "LockTargetState", e, lambda st: _LOCK_TARGET.get(st.state, MISSING),
           encode=lambda v, _st: {"command": m.LockCommand.LOCK if v else m.LockCommand.UNLOCK},
           method="lock_command")


# -- presses ----------------------------------------------------------------------------------

#: ESPHome event type -> ProgrammableSwitchEvent (0 single, 1 double, 2 long)
PRESS = {"single": 0, "single_press": 0, "press": 0, "click": 0, "single_click": 0, "button_press": 0,
         "double": 1, "double_press": 1, "double_click": 1,
         "long": 2, "long_press": 2, "hold": 2, "long_click": 2}


def _event(b: _Builder, e: m.EventInfo, left_out) -> None:
    presses = {t: PRESS[t] for t in e.event_types if t in PRESS}
    others = [t for t in e.event_types if t not in PRESS]
    if not presses:
        left_out.append(f"event {e.object_id!r} (event types {', '.join(e.event_types) or 'none'}: "
                        f"none is a single, double or long press)")
        return
    if others:
        left_out.append(f"event {e.object_id!r}'s types {', '.join(others)} (not a single, double or long press)")
    s = b.service("StatelessProgrammableSwitch", "event", e)
    b.bind(s, "ProgrammableSwitchEvent", e, lambda st: presses.get(st.event_type, MISSING), event=True,
           metadata={"valid_values": sorted(set(presses.values()))})


# -- climate ----------------------------------------------------------------------------------

# ESPHome ClimateMode -> HAP TargetHeatingCoolingState (0 off, 1 heat, 2 cool, 3 auto)
CLIMATE_MODE = {m.ClimateMode.OFF: 0, m.ClimateMode.HEAT: 1, m.ClimateMode.COOL: 2, m.ClimateMode.HEAT_COOL: 3,
                m.ClimateMode.AUTO: 3}
CLIMATE_ACTION = {m.ClimateAction.OFF: 0, m.ClimateAction.IDLE: 0, m.ClimateAction.HEATING: 1,
                  m.ClimateAction.COOLING: 2}


def _climate(b: _Builder, e: m.ClimateInfo, left_out) -> None:
    s = b.service("Thermostat", "climate", e)
    b.bind(s, "CurrentTemperature", e,
           lambda st: st.current_temperature if st.current_temperature == st.current_temperature else MISSING)
    low, high = e.visual_min_temperature, e.visual_max_temperature
    meta = {"min_value": float(low), "max_value": float(high)} if 0 < low < high else None
    if meta and e.visual_target_temperature_step > 0:
        meta["step_value"] = float(e.visual_target_temperature_step)
    b.bind(s, "TargetTemperature", e, lambda st: st.target_temperature, metadata=meta,
           encode=lambda v, _st: {"target_temperature": float(v)}, method="climate_command", tolerance=0.05)
    modes = {CLIMATE_MODE[mode] for mode in m.ClimateMode.convert_list(list(e.supported_modes)) if mode in CLIMATE_MODE}
    back = {0: m.ClimateMode.OFF, 1: m.ClimateMode.HEAT, 2: m.ClimateMode.COOL,
            3: m.ClimateMode.AUTO if m.ClimateMode.AUTO in e.supported_modes else m.ClimateMode.HEAT_COOL}
    b.bind(s, "TargetHeatingCoolingState", e, lambda st: CLIMATE_MODE.get(st.mode, MISSING),
           metadata={"valid_values": sorted(modes)} if modes else None,
           encode=lambda v, _st: {"mode": back[int(v)]}, method="climate_command")
    if e.supports_action:
        b.bind(s, "CurrentHeatingCoolingState", e, lambda st: CLIMATE_ACTION.get(st.action, 0))
    else:
        b.bind(s, "CurrentHeatingCoolingState", e, lambda st: CLIMATE_MODE.get(st.mode, 0) % 3)
    # ESPHome's climate is in °C on the wire whatever the device shows
    b.bind(s, "TemperatureDisplayUnits", e, lambda st: 0, constant=0, read_only=True)


MAPPERS = {m.SwitchInfo: ("switch", _switch), m.ButtonInfo: ("button", _button), m.LightInfo: ("light", _light),
           m.FanInfo: ("fan", _fan), m.BinarySensorInfo: ("binary_sensor", _binary_sensor),
           m.SensorInfo: ("sensor", _sensor), m.CoverInfo: ("cover", _cover), m.LockInfo: ("lock", _lock),
           m.EventInfo: ("event", _event), m.ClimateInfo: ("climate", _climate)}

_CATEGORY = {"Lightbulb": "LIGHTBULB", "Switch": "SWITCH", "Outlet": "OUTLET", "WindowCovering": "WINDOW_COVERING",
             "LockMechanism": "DOOR_LOCK", "Thermostat": "THERMOSTAT", "Fan": "FAN",
             "StatelessProgrammableSwitch": "PROGRAMMABLE_SWITCH"}


def entity_kind(entity) -> str:
    """ESPHome's name of an entity's platform ("text_sensor" of TextSensorInfo)."""
    name = type(entity).__name__
    name = name[:-4] if name.endswith("Info") else name
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def map_device(info: m.DeviceInfo, entities) -> DeviceMap:
    key = accessory_key(info.mac_address)
    if not key:
        raise ValueError("the device gave no MAC address")
    name = _clip(info.friendly_name or info.name or key)
    b = _Builder(key, name)
    left_out: List[str] = []
    for entity in sorted(entities, key=lambda e: (entity_kind(e), e.object_id, e.key)):
        mapper = MAPPERS.get(type(entity))
        if mapper is None:
            left_out.append(f"{entity_kind(entity)} {entity.object_id or entity.key!r} (an entity type this "
                            f"provider does not map)")
            continue
        mapper[1](b, entity, left_out)
    primary = next((s for s in b.services if s["type"] in _CATEGORY), b.services[0] if b.services else None)
    if primary is not None:
        primary["primary"] = True
    category = _CATEGORY.get(primary["type"], "SENSOR") if primary else "OTHER"
    accessory = {"key": key, "name": name, "category": category,
                 "manufacturer": _clip(info.manufacturer or "ESPHome"), "model": _clip(info.model or "ESPHome"),
                 "serial_number": key, "firmware_revision": _clip(_firmware(info)),
                 "services": b.services}
    if info.suggested_area:
        accessory["room"] = _clip(info.suggested_area)
    return DeviceMap(key, name, accessory, b.bindings, left_out)


def _firmware(info: m.DeviceInfo) -> str:
    """HAP's firmware revision is numbers ("2024.6.1"); ESPHome's may carry a
    suffix ("2024.6.0-dev"): the numbers only."""
    version = info.project_version or info.esphome_version or "0"
    numbers = []
    for part in version.split("."):
        digits = "".join(c for c in part if c.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        numbers.append(str(int(digits[:9])))
        if len(numbers) == 3:
            break
    return ".".join(numbers) or "0"


def command_for(bindings_values, states: Dict[int, object]) -> Dict[int, Command]:
    """{entity key: (method, kwargs)}: the writes to one device merged into one
    command per entity (On and Brightness of one light in one light_command)."""
    out: Dict[int, Command] = {}
    for binding, value in bindings_values:
        method, kwargs = out.get(binding.entity_key, (binding.method, {"key": binding.entity_key}))
        kwargs.update(binding.encode(value, states.get(binding.entity_key)))
        out[binding.entity_key] = (method, kwargs)
    return out
