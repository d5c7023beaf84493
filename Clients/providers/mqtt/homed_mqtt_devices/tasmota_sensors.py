"""A Tasmota's sensors as HAP sensor services, with no I/O.

Its `sensors` discovery message holds one SENSOR telemetry payload (`sn`):
a sensor's name (DHT11, DS18B20, ANALOG) and its readings, simple
(`"Temperature": 20.5`), in a list (one reading each) or nested one level
deeper, with the units beside (`TempUnit`). Each reading whose quantity has a
HAP sensor is a service, read from `tele/SENSOR` (every TelePeriod) and from
`stat/STATUS10` (`{"StatusSNS": …}`, the answer to `Status 10`); the others
(energy, speeds, an Id) are listed as left out. The battery (`bat`) is read
from `tele/STATE` and `stat/STATUS11` (`{"StatusSTS": …}`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .bindings import Binding, Message
from .components import CO2_ABNORMAL_PPM, LOW_BATTERY_PERCENT, Refused
from .native_entity import Entity, at_path, json_object, number
from .templates import MISSING
from .values import to_celsius

__all__ = ["sensors", "battery", "QUANTITIES", "Found"]

#: Quantity -> (service, characteristic, the characteristic derived from it).
QUANTITIES: Dict[str, Tuple[str, str, Optional[Tuple[str, Callable[[float], Any]]]]] = {
    "Temperature": ("TemperatureSensor", "CurrentTemperature", None),
    "Humidity": ("HumiditySensor", "CurrentRelativeHumidity", None),
    "Illuminance": ("LightSensor", "CurrentAmbientLightLevel", None),
    "CarbonDioxide": ("CarbonDioxideSensor", "CarbonDioxideLevel",
                      ("CarbonDioxideDetected", lambda v: 1 if v > CO2_ABNORMAL_PPM else 0)),
    "eCO2": ("CarbonDioxideSensor", "CarbonDioxideLevel",
             ("CarbonDioxideDetected", lambda v: 1 if v > CO2_ABNORMAL_PPM else 0)),
}
#: Keys of `sn` that are no sensor (as Tasmota's own integration skips them).
NOT_SENSORS = ("Time", "PN532", "RDM6300")


@dataclass
class Found:
    entities: List[Entity] = field(default_factory=list)
    left_out: List[str] = field(default_factory=list)


def sensors(make: Callable[[str, str], Entity], mac: str, config: Any, tele: str, status: str) -> Found:
    """The readings of a `sensors` message; `make(uid, name)` gives an entity."""
    if not isinstance(config, dict) or not isinstance(config.get("sn"), dict):
        raise Refused("the sensors config has no sn object")
    if config.get("ver", 1) != 1:
        raise Refused(f"sensors discovery version {config['ver']!r} is not one this provider reads (it reads 1)")
    sn = config["sn"]
    unit = sn.get("TempUnit", "C") if isinstance(sn.get("TempUnit", "C"), str) else "C"
    found = Found()
    for name, sensor in sn.items():
        if name in NOT_SENSORS or not isinstance(sensor, dict):
            continue
        skipped = []
        for path, quantity in _readings(name, sensor):
            if quantity not in QUANTITIES:
                skipped.append(" ".join(str(p) for p in path[1:]))
                continue
            label = " ".join(str(p) for p in path)
            e = make(f"{mac}_sensor_sensor_{'_'.join(str(p) for p in path)}", label)
            convert = (lambda v: to_celsius(v, unit)) if quantity == "Temperature" else (lambda v: v)
            _reading(e, QUANTITIES[quantity], path, convert, tele, status)
            found.entities.append(e)
        if skipped:
            found.left_out.append(f"{name} {', '.join(skipped)} (no HAP sensor)")
    return found


def _readings(name: str, sensor: dict):
    """(path, quantity) of each reading of one sensor, as Tasmota's integration walks them."""
    for key, value in sensor.items():
        if isinstance(value, dict):
            for inner in value:
                yield [name, key, inner], _quantity(name, inner if inner in QUANTITIES else key)
        elif isinstance(value, list):
            for index in range(len(value)):
                yield [name, key, index], _quantity(name, key)
        else:
            yield [name, key], _quantity(name, key)


def _quantity(name: str, key: str) -> str:
    # ANALOG readings end with the ADC pin's number (Temperature1, Illuminance3).
    return key.rstrip("0123456789") if name == "ANALOG" else key


def _reading(e: Entity, quantity, path: Sequence[Any], convert, tele: str, status: str) -> None:
    stype, ctype, derived = quantity
    service = e.service(stype, sensor=True)
    for topic, where in ((tele, list(path)), (status, ["StatusSNS", *path])):
        read = _path_reader(where, convert)
        if derived is not None:
            name, of = derived
            _bind(e, service, name, topic, lambda m, c, read=read, of=of: MISSING if (v := read(m, c)) is MISSING
                  else of(v), first=topic == tele)
        _bind(e, service, ctype, topic, read, first=topic == tele)


def _bind(e: Entity, service: dict, ctype: str, topic: str, read, first: bool) -> None:
    if first:
        e.bind(service, ctype, topic=topic, read=read)
        return
    model = next(b for b in e.bindings if b.ref.characteristic == ctype and b.ref.service == service["key"])
    e.bindings.append(Binding(ref=model.ref, entity=e.uid, topic=topic, read=read, bounds=model.bounds,
                              integer=model.integer))


def _path_reader(path: List[Any], convert):
    def read(message: Message, current: Dict):
        return number(at_path(json_object(message), path), convert)
    return read


def battery(e: Entity, tele_state: str, status11: str) -> None:
    """`BatteryPercentage` of tele/STATE and of Status 11's answer."""
    service = e.service("BatteryService")
    for topic, path in ((tele_state, ["BatteryPercentage"]), (status11, ["StatusSTS", "BatteryPercentage"])):
        read = _path_reader(path, lambda v: v)
        first = topic == tele_state
        _bind(e, service, "BatteryLevel", topic, read, first)
        _bind(e, service, "StatusLowBattery", topic,
              lambda m, c, read=read: MISSING if (v := read(m, c)) is MISSING else int(v < LOW_BATTERY_PERCENT), first)
    e.bind(service, "ChargingState", constant=2)  # NotChargeable: Tasmota says nothing of charging
