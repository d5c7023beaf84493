"""Devices as their firmware announces them with Home Assistant's MQTT discovery,
each with the state it starts in and how it answers a command. Written from
the discovery payloads Tasmota (abbreviated keys, `~`, templates into
tele/STATE), ESPHome (JSON lights, plain payloads, `<node>/status`), Shelly
(Gen2 status JSON, node ids in the config topic) and OpenMQTTGateway (BLE
sensors on a wildcard topic, `| is_defined`) publish, plus a device-based
config and some that are wrong on purpose."""

from __future__ import annotations

import json
from typing import Callable, Dict, List, Optional, Tuple

P = "homeassistant"

#: One device: configs {topic: payload}, its state messages as functions of its
#: state, and its commands {topic: handler(state, payload) -> None}.


class Device:
    def __init__(self, name: str, key: str, configs: Dict[str, object], state: dict,
                 publish: Callable[[dict], List[Tuple[str, object]]],
                 commands: Optional[Dict[str, Callable[[dict, str], None]]] = None,
                 availability: Optional[Tuple[str, str, str]] = None, retain_state: bool = True):
        self.name = name
        self.key = key  # the accessory key homed gets
        self.configs = configs
        self.initial = json.loads(json.dumps(state))
        self.publish = publish  # state -> [(topic, payload)]
        self.commands = commands or {}
        self.availability = availability  # (topic, online payload, offline payload)
        self.retain_state = retain_state


def _json(topic, **fields):
    return topic, json.dumps(fields)


# -- Tasmota: a plug with a temperature and humidity sensor (abbreviated, ~) ----------------

TASMOTA_DEVICE = {"ids": ["A1B2C3"], "name": "Coffee plug", "mdl": "Sonoff S31", "sw": "13.2.0(tasmota)",
                  "mf": "Tasmota", "cns": [["mac", "A0:20:A6:A1:B2:C3"]]}
TASMOTA = Device(
    "Coffee plug", "A1B2C3",
    {f"{P}/switch/A1B2C3_RL_1/config": {
        "~": "tasmota_A1B2C3/", "name": "Coffee plug", "stat_t": "~tele/STATE", "avty_t": "~tele/LWT",
        "pl_avail": "Online", "pl_not_avail": "Offline", "cmd_t": "~cmnd/POWER", "val_tpl": "{{value_json.POWER}}",
        "pl_off": "OFF", "pl_on": "ON", "uniq_id": "A1B2C3_RL_1", "dev_cla": "outlet", "dev": TASMOTA_DEVICE},
     f"{P}/sensor/A1B2C3_AM2301_Temperature/config": {
        "~": "tasmota_A1B2C3/", "name": "Coffee plug AM2301 Temperature", "stat_t": "~tele/SENSOR",
        "avty_t": "~tele/LWT", "pl_avail": "Online", "pl_not_avail": "Offline",
        "uniq_id": "A1B2C3_AM2301_Temperature", "dev": {"ids": ["A1B2C3"]}, "unit_of_meas": "°C",
        "dev_cla": "temperature", "frc_upd": True, "val_tpl": "{{value_json['AM2301']['Temperature']}}"},
     f"{P}/sensor/A1B2C3_AM2301_Humidity/config": {
        "~": "tasmota_A1B2C3/", "name": "Coffee plug AM2301 Humidity", "stat_t": "~tele/SENSOR",
        "avty_t": "~tele/LWT", "pl_avail": "Online", "pl_not_avail": "Offline",
        "uniq_id": "A1B2C3_AM2301_Humidity", "dev": {"ids": ["A1B2C3"]}, "unit_of_meas": "%",
        "dev_cla": "humidity", "val_tpl": "{{ value_json.AM2301.Humidity | round(0) }}"},
     f"{P}/sensor/A1B2C3_ENERGY_Power/config": {
        "~": "tasmota_A1B2C3/", "name": "Coffee plug ENERGY Power", "stat_t": "~tele/SENSOR",
        "uniq_id": "A1B2C3_ENERGY_Power", "dev": {"ids": ["A1B2C3"]}, "unit_of_meas": "W", "dev_cla": "power",
        "val_tpl": "{{value_json['ENERGY']['Power']}}"}},
    {"POWER": "OFF", "Temperature": 21.37, "Humidity": 48.6},
    lambda s: [_json("tasmota_A1B2C3/tele/STATE", POWER=s["POWER"], Wifi={"RSSI": 80}),
               _json("tasmota_A1B2C3/tele/SENSOR", AM2301={"Temperature": s["Temperature"],
                                                           "Humidity": s["Humidity"]}, ENERGY={"Power": 0})],
    {"tasmota_A1B2C3/cmnd/POWER": lambda s, p: s.update(POWER=p)},
    availability=("tasmota_A1B2C3/tele/LWT", "Online", "Offline"), retain_state=False)


# -- ESPHome: JSON lights, a lock, a thermostat, a motion sensor ----------------------------

def _esphome_device(node: str, mac: str, model: str = "esp32dev") -> dict:
    return {"ids": mac, "name": node, "sw": "2024.6.0 (ESPHome 2024.6.0)", "mdl": model, "mf": "espressif"}


def _esphome(node: str, component: str, object_id: str, mac: str, **config) -> Tuple[str, dict]:
    base = {"name": config.pop("name"), "avty_t": f"{node}/status", "uniq_id": f"{mac}-{component}-{object_id}",
            "dev": _esphome_device(node, mac)}
    if component not in ("sensor", "binary_sensor"):
        base["cmd_t"] = f"{node}/{component}/{object_id}/command"
    if component != "climate":
        base["stat_t"] = f"{node}/{component}/{object_id}/state"
    base.update(config)
    return f"{P}/{component}/{node}/{object_id}/config", base


def _light_command(state: dict, payload: str) -> None:
    command = json.loads(payload)
    if "state" in command:
        state["state"] = command["state"]
    if "brightness" in command:
        state["brightness"] = command["brightness"]
    if "color" in command:
        state["color"] = command["color"]
    if "color_temp" in command:
        state["color_temp"] = command["color_temp"]


DESK = Device(
    "desk-strip", "a4cf12aa0001",
    dict([_esphome("desk-strip", "light", "desk_strip", "a4cf12aa0001", name="Desk strip", schema="json",
                   brightness=True, clrm=True, sup_clrm=["rgb"])]),
    {"state": "ON", "brightness": 255, "color": {"r": 255, "g": 0, "b": 0}},
    lambda s: [("desk-strip/light/desk_strip/state", json.dumps({"color_mode": "rgb", **s}))],
    {"desk-strip/light/desk_strip/command": _light_command},
    availability=("desk-strip/status", "online", "offline"))

HALL = Device(
    "hall-dimmer", "a4cf12aa0002",
    dict([_esphome("hall-dimmer", "light", "hall", "a4cf12aa0002", name="Hall dimmer", schema="json",
                   sup_clrm=["brightness"])]),
    {"state": "OFF", "brightness": 128},
    lambda s: [("hall-dimmer/light/hall/state", json.dumps(s))],
    {"hall-dimmer/light/hall/command": _light_command},
    availability=("hall-dimmer/status", "online", "offline"))

LIVING = Device(
    "living-bulb", "0x0017880104aabbcc",
    {f"{P}/light/0x0017880104aabbcc/light/config": {
        "schema": "json", "name": None, "brightness": True, "brightness_scale": 254,
        "supported_color_modes": ["hs", "color_temp"], "command_topic": "zigbee/Living bulb/set",
        "state_topic": "zigbee/Living bulb", "unique_id": "0x0017880104aabbcc_light_zigbee",
        "availability": [{"topic": "zigbee/bridge/state", "value_template": "{{ value_json.state }}"},
                         {"topic": "zigbee/Living bulb/availability", "value_template": "{{ value_json.state }}"}],
        "availability_mode": "all",
        "device": {"identifiers": ["zigbee_0x0017880104aabbcc"], "name": "Living bulb", "manufacturer": "Philips",
                   "model": "Hue White and Color Ambiance (9290022166)"}}},
    {"state": "OFF", "brightness": 254, "color": {"h": 30, "s": 50}, "color_temp": 370},
    lambda s: [("zigbee/Living bulb", json.dumps({"color_mode": "hs", **s})),
               _json("zigbee/Living bulb/availability", state="online"),
               _json("zigbee/bridge/state", state="online")],
    {"zigbee/Living bulb/set": _light_command})
LIVING.key = "zigbee_0x0017880104aabbcc"

FRONT_DOOR = Device(
    "front-door", "a4cf12aa0003",
    dict([_esphome("front-door", "lock", "front_door", "a4cf12aa0003", name="Front door")]),
    {"state": "LOCKED"},
    lambda s: [("front-door/lock/front_door/state", s["state"])],
    {"front-door/lock/front_door/command": lambda s, p: s.update(state={"LOCK": "LOCKED", "UNLOCK": "UNLOCKED"}[p])},
    availability=("front-door/status", "online", "offline"))

_RADIATOR = "radiator/climate/radiator"
RADIATOR = Device(
    "radiator", "a4cf12aa0004",
    dict([_esphome("radiator", "climate", "radiator", "a4cf12aa0004", name="Radiator",
                   curr_temp_t=f"{_RADIATOR}/current_temperature/state", mode_cmd_t=f"{_RADIATOR}/mode/command",
                   mode_stat_t=f"{_RADIATOR}/mode/state", modes=["off", "heat"],
                   temp_cmd_t=f"{_RADIATOR}/target_temperature/command",
                   temp_stat_t=f"{_RADIATOR}/target_temperature/state", min_temp=5, max_temp=30, temp_step=0.5,
                   act_t=f"{_RADIATOR}/action/state")]),
    {"current": "19.4", "target": "20.5", "mode": "heat", "action": "heating"},
    lambda s: [(f"{_RADIATOR}/current_temperature/state", s["current"]),
               (f"{_RADIATOR}/target_temperature/state", s["target"]),
               (f"{_RADIATOR}/mode/state", s["mode"]), (f"{_RADIATOR}/action/state", s["action"])],
    {f"{_RADIATOR}/target_temperature/command": lambda s, p: s.update(target=f"{round(float(p) * 2) / 2:g}"),
     f"{_RADIATOR}/mode/command": lambda s, p: s.update(mode=p, action="heating" if p == "heat" else "off")},
    availability=("radiator/status", "online", "offline"))

HALL_MOTION = Device(
    "hall-motion", "a4cf12aa0005",
    dict([_esphome("hall-motion", "binary_sensor", "motion", "a4cf12aa0005", name="Hall motion",
                   dev_cla="motion"),
          _esphome("hall-motion", "sensor", "lux", "a4cf12aa0005", name="Hall illuminance", dev_cla="illuminance",
                   unit_of_meas="lx")]),
    {"motion": "OFF", "lux": "120"},
    lambda s: [("hall-motion/binary_sensor/motion/state", s["motion"]), ("hall-motion/sensor/lux/state", s["lux"])],
    availability=("hall-motion/status", "online", "offline"))


# -- Shelly: a cover (Gen2 status JSON, node id in the topic), a door/window sensor ------------

_SHELLY = "shellyplus2pm-c4d8d5aabbcc"


def _cover_command(state: dict, payload: str) -> None:
    if payload.startswith("pos,"):
        state["current_pos"] = int(payload[4:])
    elif payload in ("open", "close"):
        state["current_pos"] = 100 if payload == "open" else 0
    state["state"] = {100: "open", 0: "closed"}.get(state["current_pos"], "stopped")


SHELLY_COVER = Device(
    "Bedroom blind", "c4d8d5aabbcc",
    {f"{P}/cover/{_SHELLY}/cover0/config": {
        "name": "Bedroom blind", "uniq_id": f"{_SHELLY}-cover0", "dev_cla": "shutter",
        "cmd_t": f"{_SHELLY}/command/cover:0", "pl_open": "open", "pl_cls": "close", "pl_stop": "stop",
        "stat_t": f"{_SHELLY}/status/cover:0", "val_tpl": "{{ value_json.state }}",
        "pos_t": f"{_SHELLY}/status/cover:0", "pos_tpl": "{{ value_json.current_pos }}",
        "set_pos_t": f"{_SHELLY}/command/cover:0", "set_pos_tpl": "pos,{{ position }}",
        "avty_t": f"{_SHELLY}/online", "pl_avail": "true", "pl_not_avail": "false",
        "dev": {"ids": ["c4d8d5aabbcc"], "name": "Bedroom blind", "mf": "Shelly", "mdl": "Shelly Plus 2PM",
                "sw": "1.3.2"}}},
    {"state": "stopped", "current_pos": 40},
    lambda s: [(f"{_SHELLY}/status/cover:0", json.dumps(s))],
    {f"{_SHELLY}/command/cover:0": _cover_command},
    availability=(f"{_SHELLY}/online", "true", "false"))

_DW = "shellydw2-483fda"
SHELLY_DOOR = Device(
    "Balcony door", "483fda",
    {f"{P}/binary_sensor/{_DW}/door/config": {
        "name": "Balcony door", "uniq_id": f"{_DW}-door", "dev_cla": "door", "stat_t": f"shellies/{_DW}/sensor/state",
        "pl_on": "open", "pl_off": "close", "dev": {"ids": ["483fda"], "name": "Balcony door", "mf": "Shelly",
                                                    "mdl": "Shelly Door/Window 2"}},
     f"{P}/sensor/{_DW}/battery/config": {
        "name": "Balcony door battery", "uniq_id": f"{_DW}-battery", "dev_cla": "battery", "unit_of_meas": "%",
        "stat_t": f"shellies/{_DW}/sensor/battery", "dev": {"ids": ["483fda"]}},
     f"{P}/binary_sensor/{_DW}/tamper/config": {
        "name": "Balcony door tamper", "uniq_id": f"{_DW}-tamper", "dev_cla": "tamper",
        "stat_t": f"shellies/{_DW}/sensor/vibration", "pl_on": "1", "pl_off": "0", "dev": {"ids": ["483fda"]}}},
    {"state": "close", "battery": "87", "vibration": "0"},
    lambda s: [(f"shellies/{_DW}/sensor/state", s["state"]), (f"shellies/{_DW}/sensor/battery", s["battery"]),
               (f"shellies/{_DW}/sensor/vibration", s["vibration"])])


# -- OpenMQTTGateway: BLE sensors on a wildcard state topic -----------------------------------

def _omg(mac: str, model: str, name: str, entity: str, component: str, device_class: str, field: str,
         **extra) -> Tuple[str, dict]:
    bare = mac.replace(":", "")
    config = {"stat_t": f"+/+/BTtoMQTT/{bare}", "name": name, "uniq_id": f"{bare}-{entity}",
              "val_tpl": f"{{{{ value_json.{field} | is_defined }}}}", "dev_cla": device_class,
              "dev": {"ids": [bare], "cns": [["mac", mac]], "mf": "Xiaomi", "mdl": model,
                      "name": f"{model}-{bare[-4:]}", "via_device": "OMG_lilygo_ble"}}
    config.update(extra)
    return f"{P}/{component}/{bare}-{entity}/config", config


BLE_CLIMATE = Device(
    "LYWSD03MMC-2B3C", "A4C1381A2B3C",
    dict([_omg("A4:C1:38:1A:2B:3C", "LYWSD03MMC", "Bedroom temperature", "tempc", "sensor", "temperature",
               "tempc", unit_of_meas="°C"),
          _omg("A4:C1:38:1A:2B:3C", "LYWSD03MMC", "Bedroom humidity", "hum", "sensor", "humidity", "hum",
               unit_of_meas="%"),
          _omg("A4:C1:38:1A:2B:3C", "LYWSD03MMC", "Bedroom thermometer battery", "batt", "sensor", "battery",
               "batt", unit_of_meas="%")]),
    {"tempc": 20.8, "hum": 51.3, "batt": 91},
    lambda s: [("home/OMG_lilygo_ble/BTtoMQTT/A4C1381A2B3C", json.dumps({"id": "A4:C1:38:1A:2B:3C", **s}))],
    retain_state=False)

BLE_LEAK = Device(
    "SJWS01LM-DDEE", "A4C138CCDDEE",
    dict([_omg("A4:C1:38:CC:DD:EE", "SJWS01LM", "Sink leak", "wet", "binary_sensor", "moisture", "wet",
               pl_on="True", pl_off="False")]),
    {"wet": False},
    lambda s: [("home/OMG_lilygo_ble/BTtoMQTT/A4C138CCDDEE", json.dumps({"id": "A4:C1:38:CC:DD:EE", **s}))],
    retain_state=False)


# -- Device-based discovery: one config, several components --------------------------------

KITCHEN = Device(
    "Kitchen multisensor", "kitchen-multi-01",
    {f"{P}/device/kitchen-multi/config": {
        "dev": {"ids": "kitchen-multi-01", "name": "Kitchen multisensor", "mf": "Bla electronics", "mdl": "xya",
                "sw": "1.0", "sn": "ea334450945afc", "hw": "1.0rev2"},
        "o": {"name": "bla2mqtt", "sw": "2.1", "url": "https://bla2mqtt.example.com/support"},
        "cmps": {
            "temp": {"p": "sensor", "dev_cla": "temperature", "unit_of_meas": "°C",
                     "val_tpl": "{{ value_json.temperature | float }}", "uniq_id": "kitchen_temp",
                     "name": "Temperature"},
            "hum": {"p": "sensor", "dev_cla": "humidity", "unit_of_meas": "%",
                    "val_tpl": "{{ value_json['humidity'] | int }}", "uniq_id": "kitchen_hum", "name": "Humidity"},
            "relay": {"p": "switch", "cmd_t": "kitchen-multi/relay/set", "val_tpl": "{{ value_json.relay }}",
                      "uniq_id": "kitchen_relay", "name": "Extractor fan"},
            "motion": {"p": "binary_sensor", "dev_cla": "occupancy", "val_tpl": "{{ value_json.occupied }}",
                       "pl_on": "yes", "pl_off": "no", "uniq_id": "kitchen_presence", "name": "Presence"}},
        "stat_t": "kitchen-multi/state", "avty_t": "kitchen-multi/availability", "qos": 1}},
    {"temperature": "22.46", "humidity": 55.4, "relay": "OFF", "occupied": "no"},
    lambda s: [("kitchen-multi/state", json.dumps(s))],
    {"kitchen-multi/relay/set": lambda s, p: s.update(relay=p)},
    availability=("kitchen-multi/availability", "online", "offline"))


# -- Templates of every form taken, and one that is not ------------------------------------

WEATHER = Device(
    "Weather station", "weather-01",
    {f"{P}/sensor/weather-01/outdoor/config": {
        "name": "Outdoor temperature", "unique_id": "weather-01-outdoor", "device_class": "temperature",
        "unit_of_measurement": "°F", "state_topic": "weather/01/state",
        "value_template": "{{ value_json.outdoor.temp | round(1) }}",
        "device": {"identifiers": ["weather-01"], "name": "Weather station", "manufacturer": "DIY"}},
     f"{P}/sensor/weather-01/pressure/config": {
        "name": "Air pressure", "unique_id": "weather-01-pressure", "device_class": "atmospheric_pressure",
        "unit_of_measurement": "Pa", "state_topic": "weather/01/pressure", "value_template": "{{ value | int }}",
        "device": {"identifiers": ["weather-01"]}},
     f"{P}/sensor/weather-01/dew/config": {
        "name": "Dew point", "unique_id": "weather-01-dew", "device_class": "temperature",
        "unit_of_measurement": "°C", "state_topic": "weather/01/state",
        "value_template": "{{ (value_json.outdoor.temp - 32) * 5 / 9 }}",
        "device": {"identifiers": ["weather-01"]}}},
    {"temp": 68.27, "pressure": "101325"},
    lambda s: [("weather/01/state", json.dumps({"outdoor": {"temp": s["temp"]}})),
               ("weather/01/pressure", s["pressure"])])


# -- Optimistic (no state topic), and a write that is never echoed -------------------------

GARDEN = Device(
    "Garden socket", "garden-socket",
    {f"{P}/switch/garden-socket/config": {
        "name": "Garden socket", "unique_id": "garden-socket", "command_topic": "garden/socket/set",
        "payload_on": 1, "payload_off": 0}},
    {}, lambda s: [], {"garden/socket/set": lambda s, p: None})

DEAF = Device(
    "Stuck relay", "stuck-relay",
    {f"{P}/switch/stuck-relay/config": {
        "name": "Stuck relay", "unique_id": "stuck-relay", "command_topic": "stuck/relay/set",
        "state_topic": "stuck/relay/state", "device": {"identifiers": "stuck-relay", "name": "Stuck relay"}}},
    {"state": "OFF"}, lambda s: [("stuck/relay/state", s["state"])])  # answers no command


DEVICES = [TASMOTA, DESK, HALL, LIVING, FRONT_DOOR, RADIATOR, HALL_MOTION, SHELLY_COVER, SHELLY_DOOR, BLE_CLIMATE,
           BLE_LEAK, KITCHEN, WEATHER, GARDEN, DEAF]
KEYS = {d.key for d in DEVICES}


# -- Wrong on purpose --------------------------------------------------------------------

BAD_CONFIGS = {
    f"{P}/hologram/gadget/config": json.dumps({"name": "Strange gadget", "unique_id": "gadget-1",
                                               "state_topic": "gadget/state"}),
    f"{P}/switch/broken-relay/config": json.dumps({"name": "Broken relay", "unique_id": "broken-relay",
                                                   "state_topic": "broken/relay/state"}),
    f"{P}/sensor/garbage/config": "\x00{not json",
    f"{P}/fan/ceiling-fan/config": json.dumps({"name": "Ceiling fan", "unique_id": "ceiling-fan",
                                               "command_topic": "fan/set"}),
}
