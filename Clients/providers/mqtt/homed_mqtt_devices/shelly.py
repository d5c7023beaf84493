"""A Shelly Gen2+ device as entities, with no I/O.

What the device answered to Shelly.GetDeviceInfo (its id, model, firmware),
Shelly.GetConfig (names, input types; None when it refused) and
Shelly.GetStatus (its components, `switch:0`, `cover:0`, `input:1`, …) gives
one entity per component with a HAP counterpart. Each reads the component's
status wherever the device says it: NotifyStatus / NotifyFullStatus on
`<prefix>/events/rpc` (only what changed), the answers to Shelly.GetStatus
and <Component>.GetStatus (shelly_rpc.py) and, with "generic status update"
on, `<prefix>/status/<component>`. Writes are RPC calls (`Switch.Set`,
`Cover.GoToPosition`, `Light.Set`, `CCT.Set`); a button input's NotifyEvent
(`single_push`, `double_push`, `long_push`) is a press. `<prefix>/online`
says whether the device is there. Components of another kind are listed as
left out, for one log line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from homed.refs import Ref

from .bindings import Availability, AvailabilitySource, Binding, Message
from .components import EntityMap, Refused
from .native_entity import Entity, entity, json_object, number
from .shelly_rpc import RpcCall, component_src, status_src
from .templates import MISSING, RenderError
from .values import valid_name

__all__ = ["ShellyDevice", "map_shelly", "PRESSES", "KEY_PREFIX", "ShellyAvailability"]

#: Accessory keys of Shelly devices: "shelly:<device id>". A Shelly announces
#: nothing retained, so the provider cannot tell one gone for good from one
#: switched off; keys of this form are never removed by the provider itself.
KEY_PREFIX = "shelly:"
#: NotifyEvent events as ProgrammableSwitchEvent (single, double, long press).
PRESSES = {"single_push": 0, "double_push": 1, "long_push": 2}
#: Components that are the device's own plumbing, not something in the home.
PLUMBING = {"sys", "wifi", "cloud", "mqtt", "ble", "ws", "bthome", "knx", "matter", "ui", "eth", "modbus", "zigbee",
            "blugw", "plugs_ui", "awaiting_auth_code", "script"}
#: A Duo bulb's and an RGBW controller's white, 2700–6500 K, in mireds (rounded outwards:
#: the ends read back as themselves, not as clamped readings).
CCT_MIREDS = (153, 371)


@dataclass
class ShellyDevice:
    key: str
    name: str
    entities: List[EntityMap]
    left_out: List[str] = field(default_factory=list)


class ShellyAvailability(Availability):
    """A Shelly that answered is there until `<prefix>/online` says false
    (the device's last will): unlike a discovery entity, it need not have
    said `true` first, as the answers were its word."""

    def available(self, states, latest) -> bool:
        return latest is not False


def map_shelly(prefix: str, root: str, info: Any, config: Any, status: Any) -> ShellyDevice:
    """The device's entities; raises Refused when its answers cannot be read."""
    if not isinstance(info, dict) or not isinstance(info.get("id"), str) or not info["id"]:
        raise Refused("its Shelly.GetDeviceInfo has no id")
    if not isinstance(status, dict):
        raise Refused("its Shelly.GetStatus is not an object")
    config = config if isinstance(config, dict) else {}
    key = KEY_PREFIX + info["id"]
    sys_device = config.get("sys", {}).get("device", {}) if isinstance(config.get("sys"), dict) else {}
    name = next((n for n in (info.get("name"), sys_device.get("name")) if isinstance(n, str) and n.strip()),
                info["id"])
    device = {"identifiers": [key], "name": name, "manufacturer": "Shelly",
              "model": info.get("model") or info.get("app"), "sw_version": info.get("ver"),
              "serial_number": info.get("mac")}
    kinds: Dict[str, int] = {}
    for component in status:
        kinds[component.partition(":")[0]] = kinds.get(component.partition(":")[0], 0) + 1
    online = AvailabilitySource(f"{prefix}/online", "true", "false")
    out = ShellyDevice(key, valid_name(name, info["id"]), [])
    for component, state in status.items():
        kind, _, index = component.partition(":")
        if kind in PLUMBING:
            continue
        mapper = MAPPERS.get(kind)
        settings = config.get(component) if isinstance(config.get(component), dict) else {}
        label = settings.get("name") if isinstance(settings.get("name"), str) and settings["name"].strip() else (
            f"{kind.capitalize()} {index}" if kinds[kind] > 1 else None)
        why = _why_not(kind, index, mapper, settings, config, state)
        if why is not None:
            out.left_out.append(f"{component} ({why})")
            continue
        e = entity(f"{info['id']}-{component}", f"shelly:{prefix}#{component}", _platform(kind), label, device)
        topics = Topics(prefix, root, component)
        mapper(e, topics, index, settings, config, info, state)
        out.entities.append(e.result(f"shelly:{prefix}#{component}", ShellyAvailability([online])))
    return out


def _why_not(kind: str, index: str, mapper, settings: dict, config: dict, state: Any) -> Optional[str]:
    if mapper is None:
        return "not a component this provider maps"
    if not index.isdigit():
        return "no component id"
    if not isinstance(state, dict):
        return "its status is not an object"
    if kind == "input":
        if not config:
            return "its type is unknown without the device's config"
        if settings.get("type") != "button":
            return f"a {settings.get('type')} input, not a button"
    if kind == "devicepower" and not isinstance(state.get("battery"), dict):
        return "no battery"
    return None


def _platform(kind: str) -> str:
    return {"switch": "switch", "cover": "cover", "light": "light", "cct": "light"}.get(kind, "sensor")


class Topics:
    """Where one component's status comes from, and where its calls go."""

    def __init__(self, prefix: str, root: str, component: str):
        self.component = component
        self.rpc = f"{prefix}/rpc"
        self.sources: List[Tuple[str, Callable[[Any], Any]]] = [
            (f"{prefix}/events/rpc", self._notification),
            (status_src(root, prefix) + "/rpc", self._whole_status),
            (component_src(root, prefix, component) + "/rpc", self._own_status),
            (f"{prefix}/status/{component}", lambda frame: frame),
        ]
        self.events = f"{prefix}/events/rpc"

    def _notification(self, frame: dict) -> Any:
        if frame.get("method") not in ("NotifyStatus", "NotifyFullStatus") or not isinstance(frame.get("params"),
                                                                                             dict):
            return MISSING
        return frame["params"].get(self.component, MISSING)

    def _whole_status(self, frame: dict) -> Any:
        result = frame.get("result")
        return result.get(self.component, MISSING) if isinstance(result, dict) else MISSING

    def _own_status(self, frame: dict) -> Any:
        result = frame.get("result")
        return result if isinstance(result, dict) else MISSING

    def call(self, method: str, **params) -> List[Tuple[str, RpcCall]]:
        return [(self.rpc, RpcCall(method, params, self.component))]


def _field(of: Callable[[Any], Any], read: Callable[[dict], Any]):
    """A reader of one value of the component's status, wherever it comes from."""
    def reader(message: Message, current: Dict) -> Any:
        state = of(json_object(message))
        if state is MISSING or not isinstance(state, dict):
            return MISSING
        return read(state)
    return reader


def _bind(e: Entity, service: dict, ctype: str, topics: Topics, read: Callable[[dict], Any], **kwargs) -> Binding:
    """A characteristic read from each of the component's status sources."""
    first: Optional[Binding] = None
    for topic, of in topics.sources:
        if first is None:
            first = e.bind(service, ctype, topic=topic, read=_field(of, read), **kwargs)
        else:
            e.bindings.append(Binding(ref=first.ref, entity=e.uid, topic=topic, read=_field(of, read),
                                      bounds=first.bounds, integer=first.integer, acks=first.acks,
                                      ack_values=first.ack_values))
    return first


def _key(name: str, parse: Callable[[Any], Any] = lambda v: v) -> Callable[[dict], Any]:
    return lambda state: MISSING if state.get(name) is None else parse(state[name])


def _flag(value: Any) -> Any:
    if not isinstance(value, bool):
        raise RenderError(f"{value!r} is not true or false")
    return value


def _reading(name: str, convert: Callable[[float], Optional[float]] = lambda v: v) -> Callable[[dict], Any]:
    """A sensor's reading, unless the component says it has errors (a sensor
    missing: its number is no reading)."""
    def read(state: dict) -> Any:
        if state.get("errors"):
            raise RenderError(f"reports errors {state['errors']}")
        return number(state.get(name, MISSING), convert)
    return read


# -- the components ------------------------------------------------------------------------------


def _switch(e: Entity, t: Topics, index: str, settings: dict, config: dict, info: dict, state: dict) -> None:
    kinds = config.get("sys", {}).get("ui_data", {}).get("consumption_types") if isinstance(
        config.get("sys"), dict) and isinstance(config["sys"].get("ui_data"), dict) else None
    used_for = kinds[int(index)] if isinstance(kinds, list) and int(index) < len(kinds) else ""
    plug = "plug" in str(info.get("app", "")).lower()
    stype = "Lightbulb" if str(used_for).lower() == "light" else "Outlet" if plug else "Switch"
    service = e.service(stype)
    on = _bind(e, service, "On", t, _key("output", _flag),
               write=lambda v, cur: t.call("Switch.Set", id=int(index), on=bool(v)))
    if stype == "Outlet":
        in_use = _bind(e, service, "OutletInUse", t, _key("output", _flag))
        on.followers[in_use.ref] = lambda v: v


MOVING = {"opening": 1, "closing": 0}


def _cover(e: Entity, t: Topics, index: str, settings: dict, config: dict, info: dict, state: dict) -> None:
    """With `pos_control` (a calibrated cover) positions are the device's
    `current_pos` and `target_pos`; without, open is 100 and closed 0."""
    service = e.service("WindowCovering")
    positioned = state.get("pos_control") is True
    cid = int(index)
    # A cover that starts moving has taken its new target.
    _bind(e, service, "PositionState", t, _key("state", lambda s: MOVING.get(s, 2)),
          acks=Ref(e.device_key, service["key"], "TargetPosition"), ack_values=(0, 1))
    ends = {"open": 100, "closed": 0}
    if positioned:
        _bind(e, service, "CurrentPosition", t, _key("current_pos", number))
        _bind(e, service, "TargetPosition", t, _target,
              write=lambda v, cur: t.call("Cover.GoToPosition", id=cid, pos=int(round(v))))
    else:
        _bind(e, service, "CurrentPosition", t, lambda s: ends.get(s.get("state"), MISSING))
        _bind(e, service, "TargetPosition", t, lambda s: ends.get(s.get("state"), MISSING), tolerance=50,
              write=lambda v, cur: t.call("Cover.Open" if v >= 50 else "Cover.Close", id=cid))
    e.bind(service, "HoldPosition", optimistic=True,
           write=lambda v, cur: t.call("Cover.Stop", id=cid) if v else [])


def _target(state: dict) -> Any:
    """Where the cover goes while it moves, where it is once it stands."""
    if state.get("target_pos") is not None:
        return number(state["target_pos"])
    if state.get("state") in MOVING:
        return MISSING
    return number(state.get("current_pos", MISSING))


def _light(e: Entity, t: Topics, index: str, settings: dict, config: dict, info: dict, state: dict,
           method: str = "Light.Set") -> Dict[str, Any]:
    service = e.service("Lightbulb")
    cid = int(index)
    _bind(e, service, "On", t, _key("output", _flag), write=lambda v, cur: t.call(method, id=cid, on=bool(v)))
    _bind(e, service, "Brightness", t, _key("brightness", number), tolerance=1,
          write=lambda v, cur: t.call(method, id=cid, brightness=int(round(v))))
    return service


def _cct(e: Entity, t: Topics, index: str, settings: dict, config: dict, info: dict, state: dict) -> None:
    service = _light(e, t, index, settings, config, info, state, method="CCT.Set")
    low, high = CCT_MIREDS
    _bind(e, service, "ColorTemperature", t, _key("ct", lambda k: number(k, lambda v: 1e6 / v if v else None)),
          tolerance=2, meta={"min_value": low, "max_value": high},
          write=lambda v, cur: t.call("CCT.Set", id=int(index), ct=int(round(1e6 / v))))


def _input(e: Entity, t: Topics, index: str, settings: dict, config: dict, info: dict, state: dict) -> None:
    service = e.service("StatelessProgrammableSwitch")
    component = t.component

    def press(message: Message, current: Dict) -> Any:
        frame = json_object(message)
        params = frame.get("params")
        if frame.get("method") != "NotifyEvent" or not isinstance(params, dict):
            return MISSING
        for event in params.get("events", []) if isinstance(params.get("events"), list) else []:
            if isinstance(event, dict) and event.get("component") == component and event.get("event") in PRESSES:
                return PRESSES[event["event"]]
        return MISSING

    e.bind(service, "ProgrammableSwitchEvent", meta={"valid_values": sorted(PRESSES.values())}, topic=t.events,
           read=press, event=True)
    e.bind(service, "ServiceLabelIndex", constant=int(index) + 1)


def _sensor(stype: str, ctype: str, name: str, convert=lambda v: v):
    def mapper(e: Entity, t: Topics, index: str, settings: dict, config: dict, info: dict, state: dict) -> None:
        service = e.service(stype, sensor=True)
        _bind(e, service, ctype, t, _reading(name, convert))
    return mapper


def _battery(e: Entity, t: Topics, index: str, settings: dict, config: dict, info: dict, state: dict) -> None:
    service = e.service("BatteryService")
    level = _reading("percent")
    _bind(e, service, "BatteryLevel", t, lambda s: level(s["battery"]) if isinstance(s.get("battery"), dict)
          else MISSING)
    _bind(e, service, "StatusLowBattery", t, lambda s: MISSING if not isinstance(s.get("battery"), dict) or (
        v := level(s["battery"])) is MISSING else int(v < 20))
    e.bind(service, "ChargingState", constant=2)


MAPPERS: Dict[str, Callable] = {
    "switch": _switch, "cover": _cover, "light": _light, "cct": _cct, "input": _input,
    "temperature": _sensor("TemperatureSensor", "CurrentTemperature", "tC"),
    "humidity": _sensor("HumiditySensor", "CurrentRelativeHumidity", "rh"),
    "illuminance": _sensor("LightSensor", "CurrentAmbientLightLevel", "lux"),
    "devicepower": _battery,
}
