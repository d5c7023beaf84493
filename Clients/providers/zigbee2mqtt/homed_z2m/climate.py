"""A `climate` expose as a HAP Thermostat, with no I/O: the local
temperature, the heating setpoint in the device's own range and step, the
system mode and the running state."""

from __future__ import annotations

from .binding import MISSING
from .builder import CATALOG, Builder, device_range, features, gettable, label, num, settable, suffix

__all__ = ["climate"]


MODES = {"off": 0, "heat": 1, "cool": 2, "auto": 3}
RUNNING = {"idle": 0, "heat": 1, "cool": 2}


def climate(b: Builder, expose: dict) -> None:
    feats = features(expose)
    local = feats.get("local_temperature")
    setpoint = feats.get("occupied_heating_setpoint") or feats.get("current_heating_setpoint")
    if not local or not setpoint:
        raise ValueError("a climate without local_temperature and a heating setpoint")
    service = b.service("Thermostat", "thermostat" + suffix(expose), label(b.name, expose))
    lprop = local["property"]
    b.bind(service, "CurrentTemperature", dict(props=(lprop,), decode=lambda s: num(s[lprop]),
                                               bounds=CATALOG["CurrentTemperature"], gettable=gettable(local)))
    sprop = setpoint["property"]
    bounds, meta = device_range("TargetTemperature", setpoint.get("value_min"), setpoint.get("value_max"))
    dstep = setpoint.get("value_step") if isinstance(setpoint.get("value_step"), (int, float)) else 0.5

    def to_setpoint(v):
        return {sprop: round(round(v / dstep) * dstep, 2)}

    b.bind(service, "TargetTemperature", dict(props=(sprop,), decode=lambda s: num(s[sprop]), encode=to_setpoint,
                                              bounds=bounds, tolerance=dstep / 2 + 0.05, gettable=gettable(setpoint)),
           meta=meta, writable=settable(setpoint))
    mode = feats.get("system_mode")
    modes = [m for m in (mode or {}).get("values", []) if m in MODES]
    if mode and modes and mode.get("property"):
        mprop = mode["property"]
        names = {v: k for k, v in MODES.items() if k in modes}
        b.bind(service, "TargetHeatingCoolingState",
               dict(props=(mprop,), decode=lambda s: MODES.get(s[mprop], MISSING),
                    encode=lambda v: {mprop: names[int(v)]}, gettable=gettable(mode)),
               meta={"valid_values": sorted(names)}, writable=settable(mode))
    else:  # a heating-only thermostat with no mode to choose
        b.bind(service, "TargetHeatingCoolingState", dict(props=(), decode=lambda s: 1),
               meta={"valid_values": [1]}, writable=False)
    running = feats.get("running_state")
    if running and running.get("property"):
        rprop = running["property"]
        b.bind(service, "CurrentHeatingCoolingState",
               dict(props=(rprop,), decode=lambda s: RUNNING.get(s[rprop], 0), gettable=gettable(running)))
    else:
        b.bind(service, "CurrentHeatingCoolingState", dict(props=(), decode=lambda s: 0))
    # Zigbee2MQTT reports °C; the unit shown is not the device's to choose here.
    b.bind(service, "TemperatureDisplayUnits", dict(props=(), decode=lambda s: 0), writable=False)

