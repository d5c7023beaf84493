"""Lights, switches and outlets as HAP services, with no I/O: a `light` expose
is a Lightbulb (on, brightness scaled to percent, colour as hue and
saturation, colour temperature in mireds), a `switch` a Switch or, for a plug,
an Outlet; one service per endpoint."""

from __future__ import annotations

from typing import Optional

from .binding import MISSING
from .builder import (CATALOG, Builder, binary_values, device_range, features, gettable, label, num, settable,
                      suffix, two_way)
from .values import scale, unscale, xy_to_hs

__all__ = ["light", "switch", "on_binding"]


def on_binding(state_f: dict) -> dict:
    prop = state_f["property"]
    on, off = binary_values(state_f, "ON", "OFF")
    return dict(props=(prop,), decode=two_way(prop, on, off, True, False),
                encode=lambda v: {prop: on if v else off}, gettable=gettable(state_f))


def light(b: Builder, expose: dict, looks_like_plug: bool) -> None:
    feats = features(expose)
    state_f = feats.get("state")
    if not state_f or not state_f.get("property"):
        raise ValueError("a light without a state feature")
    key = "light" + suffix(expose)
    service = b.service("Lightbulb", key, label(b.name, expose))
    b.bind(service, "On", on_binding(state_f), writable=settable(state_f))
    bright = feats.get("brightness")
    if bright and bright.get("property"):
        bprop = bright["property"]
        low, high = bright.get("value_min", 0), bright.get("value_max", 254)
        b.bind(service, "Brightness", dict(
            props=(bprop,), decode=lambda s: scale(num(s[bprop]), low, high),
            encode=lambda v: {bprop: unscale(v, low, high)}, bounds=CATALOG["Brightness"], tolerance=1,
            gettable=gettable(bright)), writable=settable(bright))
    color = feats.get("color_hs") or feats.get("color_xy")
    if color and color.get("property"):
        cprop = color["property"]

        def hs(state, prop=cprop):
            value = state.get(prop)
            if not isinstance(value, dict):
                return None
            if "hue" in value and "saturation" in value:
                return float(num(value["hue"])), float(num(value["saturation"]))
            if "x" in value and "y" in value:
                return xy_to_hs(num(value["x"]), num(value["y"]))
            return None

        writable = settable(color)
        xy_only = color.get("name") == "color_xy"
        if xy_only:
            # Set as x and y (DeviceMap.payload converts the hue and saturation
            # written); a hue read back through 4-decimal xy is within 6° of
            # the one written down to 1 % saturation.
            b.xy_colors.add(cprop)
        b.bind(service, "Hue", dict(
            props=(cprop,), decode=lambda s: (hs(s) or (MISSING,))[0], encode=lambda v: {cprop: {"hue": v}},
            bounds=CATALOG["Hue"], tolerance=6 if xy_only else 2, gettable=gettable(color)), writable=writable)
        b.bind(service, "Saturation", dict(
            props=(cprop,), decode=lambda s: (hs(s) or (None, MISSING))[1],
            encode=lambda v: {cprop: {"saturation": v}}, bounds=CATALOG["Saturation"], tolerance=2,
            gettable=gettable(color)), writable=writable)
    temperature = feats.get("color_temp")
    if temperature and temperature.get("property"):
        # Mireds on both sides, in the bulb's own range (often wider than HAP's
        # 140..500: the daemon takes it as the bulb declares it).
        tprop = temperature["property"]
        bounds, meta = device_range("ColorTemperature", temperature.get("value_min"), temperature.get("value_max"))
        b.bind(service, "ColorTemperature", dict(
            props=(tprop,), decode=lambda s: num(s[tprop]), encode=lambda v: {tprop: int(round(v))},
            bounds=bounds, tolerance=1, gettable=gettable(temperature)), meta=meta,
            writable=settable(temperature))


def switch(b: Builder, expose: dict, looks_like_plug: bool, power_prop: Optional[str]) -> None:
    feats = features(expose)
    state_f = feats.get("state")
    if not state_f or not state_f.get("property"):
        raise ValueError("a switch without a state feature")
    prop = state_f["property"]
    if prop != "state" + suffix(expose):
        # A setting made a switch (`away_mode`, `auto_lock`): a Switch of its
        # own, keyed by its property, whatever the device is.
        stype, key = "Switch", f"switch_{prop}"
        name = f"{b.name} {expose.get('label') or prop.replace('_', ' ').capitalize()}"
    else:
        stype = "Outlet" if looks_like_plug else "Switch"
        key, name = stype.lower() + suffix(expose), label(b.name, expose)
    service = b.service(stype, key, name)
    on = on_binding(state_f)
    b.bind(service, "On", on, writable=settable(state_f))
    if stype == "Outlet":
        if power_prop and not suffix(expose):
            in_use = dict(props=(power_prop,), decode=lambda s: num(s[power_prop]) > 0)
        else:  # no power reading: in use while on
            in_use = dict(props=on["props"], decode=on["decode"])
        b.bind(service, "OutletInUse", in_use)

