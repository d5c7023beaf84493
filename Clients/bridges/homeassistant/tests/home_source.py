"""The accessories the bridge exports in the tests: a provider run in the test
process (homed.provider.Provider), holding its devices' values, applying
homed's writes to them and reporting changes as a real device would; and
helpers that set up the home (a home, rooms) and find ids by key."""

import os
import sys
import threading

from homed import pb
from homed.provider import Provider, Ref
from homed_testkit import ProviderProcess
from homed_testkit import installed_program

PROGRAM = installed_program("homed-mqtt")

ACCESSORIES = [
    {"key": "lamp", "name": "Lamp", "category": "LIGHTBULB", "manufacturer": "Acme", "model": "Bulb 2",
     "firmware_revision": "2.1", "room": "Kitchen",
     "services": [{"type": "Lightbulb", "characteristics": [
         {"type": "On", "value": False}, {"type": "Brightness", "value": 40},
         {"type": "Hue", "value": 120.0}, {"type": "Saturation", "value": 50.0}]}]},
    {"key": "plug", "name": "Kettle Plug", "category": "OUTLET", "room": "Kitchen",
     "services": [{"type": "Outlet", "characteristics": [
         {"type": "On", "value": False}, {"type": "OutletInUse", "value": False}]}]},
    {"key": "fan-switch", "name": "Fan Switch", "category": "SWITCH", "room": "Garage",
     "services": [{"type": "Switch", "characteristics": [{"type": "On", "value": True}]}]},
    {"key": "blinds", "name": "Blinds", "category": "WINDOW_COVERING", "room": "Kitchen",
     "services": [{"type": "WindowCovering", "characteristics": [
         {"type": "CurrentPosition", "value": 0}, {"type": "TargetPosition", "value": 0},
         {"type": "PositionState", "value": 2}]}]},
    {"key": "lock", "name": "Back Door Lock", "category": "DOOR_LOCK", "room": "Kitchen",
     "services": [{"type": "LockMechanism", "characteristics": [
         {"type": "LockCurrentState", "value": 1}, {"type": "LockTargetState", "value": 1}]}]},
    {"key": "thermostat", "name": "Radiator", "category": "THERMOSTAT", "room": "Kitchen",
     "services": [{"type": "Thermostat", "characteristics": [
         {"type": "CurrentHeatingCoolingState", "value": 1}, {"type": "TargetHeatingCoolingState", "value": 1},
         {"type": "CurrentTemperature", "value": 19.5}, {"type": "TargetTemperature", "value": 21.0},
         {"type": "TemperatureDisplayUnits", "value": 0}]}]},
    {"key": "climate-sensor", "name": "Climate Sensor", "category": "SENSOR", "room": "Kitchen",
     "services": [
         {"type": "TemperatureSensor", "characteristics": [{"type": "CurrentTemperature", "value": 18.5}]},
         {"type": "HumiditySensor", "name": "Humidity",
          "characteristics": [{"type": "CurrentRelativeHumidity", "value": 55.0}]},
         {"type": "LightSensor", "name": "Light level",
          "characteristics": [{"type": "CurrentAmbientLightLevel", "value": 120.0}]},
         {"type": "BatteryService", "characteristics": [
             {"type": "BatteryLevel", "value": 87}, {"type": "ChargingState", "value": 2},
             {"type": "StatusLowBattery", "value": 0}]}]},
    {"key": "door", "name": "Door Contact", "category": "SENSOR", "room": "Kitchen",
     "services": [{"type": "ContactSensor", "characteristics": [{"type": "ContactSensorState", "value": 0}]}]},
    {"key": "motion", "name": "Motion", "category": "SENSOR", "room": "Kitchen",
     "services": [{"type": "MotionSensor", "characteristics": [{"type": "MotionDetected", "value": False}]}]},
    {"key": "presence", "name": "Presence", "category": "SENSOR", "room": "Kitchen",
     "services": [{"type": "OccupancySensor", "characteristics": [{"type": "OccupancyDetected", "value": 0}]}]},
    {"key": "leak", "name": "Leak", "category": "SENSOR", "room": "Kitchen",
     "services": [{"type": "LeakSensor", "characteristics": [{"type": "LeakDetected", "value": 0}]}]},
    {"key": "smoke", "name": "Smoke", "category": "SENSOR", "room": "Kitchen",
     "services": [{"type": "SmokeSensor", "characteristics": [{"type": "SmokeDetected", "value": 0}]}]},
    {"key": "co", "name": "CO", "category": "SENSOR", "room": "Kitchen",
     "services": [{"type": "CarbonMonoxideSensor", "characteristics": [{"type": "CarbonMonoxideDetected",
                                                                       "value": 0}]}]},
    {"key": "remote", "name": "Remote", "category": "PROGRAMMABLE_SWITCH", "room": "Kitchen",
     "services": [{"type": "StatelessProgrammableSwitch", "characteristics": [
         {"type": "ProgrammableSwitchEvent", "metadata": {"valid_values": [0, 2]}}]}]},
    {"key": "fan", "name": "Ceiling Fan", "category": "FAN", "room": "Kitchen",
     "services": [{"type": "Fanv2", "characteristics": [{"type": "Active", "value": 0}]}]},
]

#: (component, accessory key, service type) of every entity the bridge makes of ACCESSORIES
EXPECTED = [
    ("light", "lamp", "Lightbulb"), ("switch", "plug", "Outlet"), ("switch", "fan-switch", "Switch"),
    ("cover", "blinds", "WindowCovering"), ("lock", "lock", "LockMechanism"),
    ("climate", "thermostat", "Thermostat"), ("sensor", "climate-sensor", "TemperatureSensor"),
    ("sensor", "climate-sensor", "HumiditySensor"), ("sensor", "climate-sensor", "LightSensor"),
    ("sensor", "climate-sensor", "BatteryService:level"), ("binary_sensor", "climate-sensor", "BatteryService:low"),
    ("binary_sensor", "door", "ContactSensor"), ("binary_sensor", "motion", "MotionSensor"),
    ("binary_sensor", "presence", "OccupancySensor"), ("binary_sensor", "leak", "LeakSensor"),
    ("binary_sensor", "smoke", "SmokeSensor"), ("binary_sensor", "co", "CarbonMonoxideSensor"),
    ("event", "remote", "StatelessProgrammableSwitch"),
]

#: An accessory of a provider whose devices came from MQTT: not exported by default.
FROM_MQTT = [{"key": "0x00124b0001", "name": "Zigbee Plug", "category": "OUTLET", "room": "Kitchen",
              "services": [{"type": "Outlet", "characteristics": [
                  {"type": "On", "value": False}, {"type": "OutletInUse", "value": False}]}]}]


class Devices:
    """The provider and its devices' values; writes from homed are applied to
    them (and so confirmed) unless `refuse` names the characteristic."""

    def __init__(self, socket_path, provider_id="devices", accessories=ACCESSORIES):
        self.lock = threading.Lock()
        self.values = {}
        self.writes = []
        self.provider = Provider(provider_id, accessories, on_read=self.on_read, on_write=self.on_write,
                                 socket_path=socket_path, client_name=f"test provider {provider_id}")

    def on_read(self, refs):
        with self.lock:
            return {ref: self.values[ref] for ref in refs if ref in self.values}

    def on_write(self, values, atomic):
        with self.lock:
            for ref, value in values.items():
                self.values[ref] = value
                self.writes.append((ref, value))
        return None

    def report(self, key, service, characteristic, value):
        ref = Ref(key, service, characteristic)
        with self.lock:
            self.values[ref] = value
        self.provider.report({ref: value})

    def start(self):
        self.provider.start()
        if not self.provider.wait_registered(15):
            raise AssertionError(f"the test provider was not registered: {self.provider.error}")
        return self

    def stop(self):
        self.provider.stop()


def make_home(client, rooms=("Kitchen", "Garage")):
    home_id = client.call("ChangeLayout", pb.LayoutRequest(add_home=pb.AddHome(name="Test Home"))).created_id
    for room in rooms:
        client.call("ChangeLayout", pb.LayoutRequest(add_room=pb.AddRoom(home_id=home_id, name=room)))
    return home_id


def accessory_ids(client, provider=None):
    """{provider key: Accessory}."""
    return {a.provider_key: a for a in client.call("ListAccessories", pb.ListAccessoriesRequest()).accessories
            if provider is None or a.provider == provider}


def object_id(accessory, service_type):
    """The entity's object id; "BatteryService:level" for one of a service's several entities."""
    service_type, _, suffix = service_type.partition(":")
    service = next(s for s in accessory.services if s.type_name == service_type)
    return f"a{accessory.id}_s{service.id}" + (f"_{suffix}" if suffix else "")


def char_id(accessory, service_type, characteristic):
    service = next(s for s in accessory.services if s.type_name == service_type)
    return next(c.id for c in service.characteristics if c.type_name == characteristic)


def start_bridge(homed, broker_url, processes, *extra, log_name="bridge.log"):
    argv = [sys.executable, PROGRAM, "--socket", homed.socket_path, "--broker", broker_url, "--log-level", "debug",
            *extra]
    process = ProviderProcess(argv, os.path.join(homed.directory, log_name))
    processes.append(process)
    return process.start()
