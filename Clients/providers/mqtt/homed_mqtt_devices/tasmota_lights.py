"""A Tasmota light as a Lightbulb, with no I/O, as Tasmota's own integration
reads it: `lt_st` says its channels (0 on/off, 1 a dimmer, 2 cold/warm white,
3 RGB, 4 RGBW, 5 RGBCW); `lk` 0 splits an RGBW/RGBCW light in two (the colour
one on `Dimmer1`, the white one on `Dimmer2`), SetOption68 makes each PWM
channel a dimmer of its own (`Channel<n>`), a Tuya MCU dims with `Dimmer3`,
SetOption82 narrows the white range to 200–380 mireds.

States come in RESULT and STATE payloads (`POWER`, `Dimmer`, `HSBColor`
"hue,saturation,brightness", `CT` in mireds); a write is one Backlog of
`Dimmer`, `Power<n>`, `HsbColor1` (hue), `HsbColor2` (saturation) and `CT`
commands, the dimmer first: a dimmer turns the light on, so Power ON is left
out beside it, unless SetOption20 unlinks them (then Power follows it), as
Tasmota's own integration sends them."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .bindings import Message
from .components import Refused
from .native_entity import Entity, json_object, number
from .tasmota_states import Backlog, bind_read, field_reader, power_reader
from .templates import MISSING, RenderError, as_text

__all__ = ["light", "LIGHT_TYPES"]

DIMMER, COLD_WARM, RGB, RGBW, RGBCW = 1, 2, 3, 4, 5
LIGHT_TYPES = {0: "on/off", DIMMER: "dimmer", COLD_WARM: "cold/warm white", RGB: "RGB", RGBW: "RGBW", RGBCW: "RGBCW"}
SO_NOT_POWER_LINKED = "20"
SO_PWM_CHANNELS = "68"
SO_REDUCED_CT = "82"
CT_RANGE, REDUCED_CT_RANGE = (153, 500), (200, 380)


def light(e: Entity, c, idx: int, relays: List[int], states: List[Optional[str]], cmnd: str,
          readers: Tuple[str, ...]) -> None:
    kind, dimmer_state, dimmer_command = _channels(c, idx, relays)
    service = e.service("Lightbulb")
    backlog = cmnd + "Backlog"
    off, on = states[0], states[1]
    # A dimmer turns the light on, unless SetOption20 unlinks them: then Power is sent after it.
    implied = None if c.option(SO_NOT_POWER_LINKED) else dimmer_command
    bind_read(e, service, "On", readers, power_reader(idx, states), order=-1,
              write=lambda v, cur: [(backlog, Backlog(f"Power{idx + 1} {on if v else off}",
                                                      implied if v and kind >= DIMMER else None))])
    if kind >= DIMMER:
        bind_read(e, service, "Brightness", readers, field_reader(dimmer_state, number), tolerance=1, order=-2,
                  write=lambda v, cur: [(backlog, Backlog(f"{dimmer_command} {round(v)}"))])
    if kind >= RGB:
        for part, ctype in enumerate(("Hue", "Saturation")):
            bind_read(e, service, ctype, readers, _hsb(part), tolerance=2, order=part,
                      write=lambda v, cur, part=part: [(backlog, Backlog(f"HsbColor{part + 1} {round(v)}"))])
    if kind in (COLD_WARM, RGBCW):
        low, high = REDUCED_CT_RANGE if c.option(SO_REDUCED_CT) else CT_RANGE
        bind_read(e, service, "ColorTemperature", readers, field_reader("CT", number), tolerance=1,
                  meta={"min_value": low, "max_value": high},
                  write=lambda v, cur: [(backlog, Backlog(f"CT {round(v)}"))])


def _channels(c, idx: int, relays: List[int]) -> Tuple[int, str, str]:
    """(light type, the dimmer's state key, the dimmer's command) of light `idx`."""
    kind = c.number("lt_st")
    if kind not in LIGHT_TYPES:
        raise Refused(f"lt_st {kind} is no light type this provider knows (0 to 5)")
    dimmer_state = dimmer_command = "Dimmer"
    if c.number("ty"):
        dimmer_command = "Dimmer3"  # a Tuya MCU's dimmer
    if c.option(SO_PWM_CHANNELS):
        return DIMMER, f"Channel{idx + 1}", f"Channel{idx + 1}"
    if not c.number("lk", 1) and kind >= RGBW:
        position = idx - relays.index(2)
        if position == 0:
            return RGB, "Dimmer1", "Dimmer1"
        if position == 1:
            return (DIMMER if kind == RGBW else COLD_WARM), "Dimmer2", "Dimmer2"
    return kind, dimmer_state, dimmer_command


def _hsb(part: int):
    """Hue (0) or saturation (1) of `HSBColor` "hue,saturation,brightness"."""
    def read(message: Message, current: Dict):
        value = json_object(message).get("HSBColor", MISSING)
        if value is MISSING or value is None:
            return MISSING
        parts = as_text(value).split(",")
        if len(parts) != 3:
            raise RenderError(f"HSBColor {as_text(value)[:40]!r} is not 'hue,saturation,brightness'")
        return number(parts[part])
    return read
