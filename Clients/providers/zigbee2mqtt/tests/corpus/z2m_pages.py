"""One zigbee2mqtt.io device page read back into its definition, with no I/O.

A page (`docs/devices/<model>.md`, written by Zigbee2MQTT's docgen from the
device's definition) has a table (model, vendor, description, the names of
its exposes) and an "Exposes" section, one `###` part per expose in the
definition's order, whose sentences say its type, property, access, range,
unit, `value_on`/`value_off` and enum values; `parse_page` reads them back.

What the pages do not say, and what is written instead (nothing else is
added to what a page says):

- the features of `light`, `cover`, `fan` and `climate` entries carry no
  access on the page; they get the access Zigbee2MQTT gives every such
  feature, whatever the device (light state, brightness, colour and
  colour temperature, cover position and tilt, climate setpoints and modes:
  7; a climate's local temperature and running state: 5, with the get bit as
  the page says), and the unit it gives every such feature (colour
  temperature in mired, cover position and tilt in %);
- a feature a composite names but does not describe (a light's `level_config`)
  is not written;
- `name` is the property without its endpoint suffix (`state_l1` -> `state`),
  since pages show the property and the label, unless the page's list of
  expose names lacks it, or two exposes are published on that property, and
  the list holds the label's (`Illuminance (lux)`, published as `illuminance`
  beside `Illuminance`, is `illuminance_lux`);
- a binary `true`/`false` is a JSON boolean, any other value a string; enum
  values are strings;
- value steps, presets' values and categories are not on the pages;
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Dict, Iterable, List, Optional, Tuple

__all__ = ["parse_page"]

TYPES = {"numeric", "binary", "enum", "text", "composite", "list", "light", "switch", "cover", "lock",
         "climate", "fan"}

# Access bits (Zigbee2MQTT's exposes): published, settable, gettable.
STATE, SET, GET = 1, 2, 4

TICKED = re.compile(r"`([^`]*)`")

def _number(text: str):
    value = float(text)
    return int(value) if value.is_integer() and re.fullmatch(r"-?\d+", text) else value


def _binary_value(text: str):
    return {"true": True, "false": False}.get(text, text)


def _table(page: str) -> Dict[str, str]:
    rows = {}
    for line in page.split("\n"):
        match = re.match(r"^\|\s*([A-Za-z -]+?)\s*\|\s*(.*?)\s*\|\s*$", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


def _sections(page: str) -> List[Tuple[str, List[str]]]:
    """The `###` parts of the Exposes section: (title, lines), code blocks out."""
    start = page.find("\n## Exposes")
    if start < 0:
        return []
    body = page[start + 1:].split("\n")[1:]
    out: List[Tuple[str, List[str]]] = []
    fenced = False
    for line in body:
        if line.startswith("## "):
            break
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith("### "):
            out.append((line[4:].strip(), []))
        elif out and line.strip():
            out[-1][1].append(line.rstrip())
    return out


def _title(title: str) -> Tuple[str, Optional[str], Optional[str]]:
    """(type, label or None, endpoint or None) from `Label (type, l1 endpoint)`
    or, for an entry without a label, `Light (l1 endpoint)`."""
    label, extra = title, ""
    match = re.match(r"^(.*?)\s*\(([^()]*)\)$", title)
    if match:
        label, extra = match.group(1), match.group(2)
    etype, endpoint = None, None
    for part in (p.strip() for p in extra.split(",") if p.strip()):
        if part in TYPES:
            etype = part
        elif part.endswith(" endpoint"):
            endpoint = part[:-len(" endpoint")]
        else:  # a parenthesis of the label's own
            label, etype = title, None
            break
    if etype is None:
        etype = label.strip().lower()
        label = None
    return etype, label, endpoint


def _name(prop: str, endpoint: Optional[str]) -> str:
    suffix = f"_{endpoint}" if endpoint else ""
    return prop[:-len(suffix)] if suffix and prop.endswith(suffix) else prop


def _payload_props(text: str) -> List[str]:
    return re.findall(r'`\{"([^"]+)":', text)


def _generic(etype: str, label: Optional[str], endpoint: Optional[str], lines: List[str],
             names: List[str], taken: Counter) -> Optional[dict]:
    text = "\n".join(lines)
    prop = None
    match = re.search(r"published state on the `([^`]+)` property", text)
    if match:
        prop = match.group(1)
    else:
        props = _payload_props(text)
        prop = props[0] if props else None
    if prop is None:
        return None
    access = STATE if "Value can be found in the published state" in text else 0
    if "It's not possible to read (`/get`) or write (`/set`) this value." not in text:
        if "To read (`/get`) the value" in text:
            access |= GET
        if "To write (`/set`) a value" in text:
            access |= SET
    name = _name(prop, endpoint)
    if (name not in names or taken[prop] > 1) and label and _snake(label) in names:
        name = _snake(label)  # `illuminance_lux`, published as `illuminance` beside `illuminance`
    entry = {"type": etype, "name": name, "property": prop, "access": access}
    if label:
        entry["label"] = label
    if endpoint:
        entry["endpoint"] = endpoint
    first = lines[0] if lines else ""
    if not first.startswith(("Value can be found", "Value will **not**")):
        entry["description"] = first[:-1] if first.endswith(".") else first
    for line in lines:
        if etype == "numeric":
            match = re.match(r"The minimal value is `([^`]+)` and the maximum value is `([^`]+)`\.", line)
            if match:
                entry["value_min"], entry["value_max"] = _number(match.group(1)), _number(match.group(2))
            match = re.match(r"The unit of this value is `([^`]*)`\.", line)
            if match:
                entry["unit"] = match.group(1)
        elif etype == "binary":
            match = re.match(r"If value equals `([^`]*)` .* is ON, if `([^`]*)` OFF\.", line)
            if match:
                entry["value_on"], entry["value_off"] = _binary_value(match.group(1)), _binary_value(match.group(2))
        elif etype == "enum" and line.startswith("The possible values are:"):
            entry["values"] = TICKED.findall(line)
    return entry


def _feature(name: str, prop: str, ftype: str, access: int, endpoint: Optional[str], **extra) -> dict:
    entry = {"type": ftype, "name": name, "property": prop, "access": access}
    if endpoint:
        entry["endpoint"] = endpoint
    entry.update(extra)
    return entry


def _range(text: str) -> dict:
    match = re.search(r"between `([^`]+)` and `([^`]+)`", text)
    if not match or "undefined" in match.groups():
        return {}
    return {"value_min": _number(match.group(1)), "value_max": _number(match.group(2))}


def _color(name: str, prop: str, endpoint: Optional[str]) -> dict:
    parts = ("x", "y") if name == "color_xy" else ("hue", "saturation")
    return _feature(name, prop, "composite", 7, endpoint,
                    features=[_feature(p, p, "numeric", 7, None) for p in parts])


def _light(endpoint: Optional[str], lines: List[str]) -> Tuple[dict, List[str]]:
    features, undescribed = [], []
    named: List[str] = []
    bullets: Dict[str, str] = {}
    for line in lines:
        if line.startswith("This light supports the following features:"):
            named = TICKED.findall(line)
        match = re.match(r"^- `([a-z_]+)`: (.*)$", line)
        if match:
            bullets[match.group(1)] = match.group(2)
    for name in named:
        text = bullets.get(name)
        props = _payload_props(text or "")
        if text is None or not props:
            undescribed.append(name)
            continue
        prop = props[0]
        if name == "state":
            values = re.findall(r'`\{"[^"]+": "([^"]*)"\}`', text)
            extra = {"value_on": values[0], "value_off": values[1]} if len(values) >= 2 else {}
            if len(values) >= 3:
                extra["value_toggle"] = values[2]
            features.append(_feature("state", prop, "binary", 7, endpoint, **extra))
        elif name == "brightness":
            features.append(_feature(name, prop, "numeric", 7, endpoint, **_range(text)))
        elif name in ("color_temp", "color_temp_startup"):
            features.append(_feature(name, prop, "numeric", 7, endpoint, unit="mired", **_range(text)))
        elif name in ("color_xy", "color_hs"):
            features.append(_color(name, prop, endpoint))
        else:
            undescribed.append(name)
    entry = {"type": "light", "features": features}
    if endpoint:
        entry["endpoint"] = endpoint
    return entry, undescribed


def _state_feature(etype: str, endpoint: Optional[str], lines: List[str]) -> Optional[dict]:
    text = "\n".join(lines)
    match = re.search(r"under the `([^`]+)` property \(value is `([^`]*)` or `([^`]*)`\)", text)
    if not match:
        return None
    prop = match.group(1)
    control = next((l for l in lines if l.startswith(f"To control this {etype} publish")), None)
    access = STATE | (SET if control else 0)
    if f"To read the current state of this {etype}" in text:
        access |= GET
    written = re.findall(r'`\{"[^"]+": "([^"]*)"\}`', control or "")
    if control and " or `" not in control:  # an enum: every value listed, comma separated
        return _feature("state", prop, "enum", access, endpoint, values=written)
    if etype == "cover" and not control:
        return None  # the page says nothing of a read-only cover state's type or values
    on, off = (written[0], written[1]) if len(written) >= 2 else (match.group(2), match.group(3))
    extra = {"value_on": _binary_value(on), "value_off": _binary_value(off)}
    if etype == "switch" and len(written) >= 3 and written[2] != "undefined":
        extra["value_toggle"] = written[2]
    return _feature("state", prop, "binary", access, endpoint, **extra)


def _device_like(etype: str, label: Optional[str], endpoint: Optional[str], lines: List[str]) -> Optional[dict]:
    """switch, lock, cover, fan: a state feature and what the page says of the others."""
    features = []
    state = _state_feature(etype, endpoint, lines)
    if state:
        features.append(state)
    for line in lines:
        match = re.match(r"To change the (position|tilt) publish .*?`\{\"([^\"]+)\": VALUE\}`", line)
        if match and etype == "cover":
            features.append(_feature(match.group(1), match.group(2), "numeric", 7, endpoint, unit="%",
                                     **_range(line)))
        match = re.match(r"To change the mode publish .*?`\{\"([^\"]+)\": VALUE\}` where `VALUE` can be: (.*)$", line)
        if match and etype == "fan":
            features.append(_feature("mode", match.group(1), "enum", 7, endpoint,
                                     values=TICKED.findall(match.group(2))))
        if etype == "lock" and line.startswith("This lock exposes a lock state"):
            values = TICKED.findall(line.split("The possible values are:", 1)[-1])
            prop = "lock_state" + (f"_{endpoint}" if endpoint else "")
            features.append(_feature("lock_state", prop, "enum", STATE, endpoint, values=values))
    if not features:
        return None
    entry = {"type": etype, "features": features}
    if label:
        entry["label"] = label
    if endpoint:
        entry["endpoint"] = endpoint
    return entry


CLIMATE_SETPOINTS = ("occupied_heating_setpoint", "occupied_cooling_setpoint", "current_heating_setpoint",
                     "pi_heating_demand")


def _climate(endpoint: Optional[str], lines: List[str]) -> Tuple[dict, List[str]]:
    named: List[str] = []
    bullets: Dict[str, str] = {}
    for line in lines:
        if line.startswith("This climate device supports the following features:"):
            named = TICKED.findall(line)
        match = re.match(r"^- `([a-z_0-9]+)`: (.*)$", line)
        if match:
            bullets[match.group(1)] = match.group(2)
    features, undescribed = [], []
    for name in named:
        text = bullets.get(name)
        if text is None:
            undescribed.append(name)
            continue
        readable = GET if "To read send a message" in text else 0
        description = text.split(". To ")[0].split(". Possible values")[0]
        props = _payload_props(text)
        if name in CLIMATE_SETPOINTS and props:
            unit = re.search(r"`VALUE` is the (.*?) between", text)
            extra = dict(_range(text), description=description)
            if unit and unit.group(1) != "undefined":
                extra["unit"] = unit.group(1)
            features.append(_feature(name, props[0], "numeric", STATE | SET | readable, endpoint, **extra))
        elif name == "local_temperature":
            unit = re.search(r"\(in ([^)]*)\)\.", text)
            description = re.sub(r" \(in [^)]*\)\..*$", "", text)
            prop = name + (f"_{endpoint}" if endpoint else "")
            extra = {"description": description}
            if unit and unit.group(1) != "undefined":
                extra["unit"] = unit.group(1)
            features.append(_feature(name, prop, "numeric", STATE | readable, endpoint, **extra))
        elif name in ("system_mode", "preset", "mode") and props:
            values = TICKED.findall(text.split("is one of:", 1)[-1].split(". To read")[0].split(". Reading")[0])
            features.append(_feature(name, props[0], "enum", STATE | SET | readable, endpoint,
                                     values=values, description=description))
        elif name == "running_state":
            values = TICKED.findall(text.split("Possible values are:", 1)[-1].split(". To read")[0]
                                    .split(". Reading")[0])
            prop = name + (f"_{endpoint}" if endpoint else "")
            features.append(_feature(name, prop, "enum", STATE | readable, endpoint, values=values,
                                     description=description))
        elif name == "local_temperature_calibration" and props:
            extra = {"description": description}
            match = re.search(r"minimal value is `([^`]+)` and the maximum value is `([^`]+)`", text)
            if match and "undefined" not in match.groups():
                extra.update(value_min=_number(match.group(1)), value_max=_number(match.group(2)))
            features.append(_feature(name, props[0], "numeric", STATE | SET, endpoint, **extra))
        else:
            undescribed.append(name)
    entry = {"type": "climate", "features": features}
    if endpoint:
        entry["endpoint"] = endpoint
    return entry, undescribed


def _snake(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def _composite(etype: str, label: Optional[str], endpoint: Optional[str], lines: List[str],
               names: Iterable[str]) -> dict:
    """A generic composite or list: its property and, for a composite, its
    features as the page lists them."""
    text = "\n".join(lines)
    props = _payload_props(text)
    access = (SET if "Can be set by publishing" in text else 0) | (GET if "To read (`/get`)" in text else 0)
    if etype == "composite" and not access:
        access = STATE
    name = props[0] if props else next((n for n in names if label and n == _snake(label)), _snake(label or etype))
    entry = {"type": etype, "name": _name(name, endpoint), "property": name, "access": access}
    if label:
        entry["label"] = label
    if endpoint:
        entry["endpoint"] = endpoint
    first = lines[0] if lines else ""
    if first and not first.startswith(("Can be set", "To read", "- `")):
        entry["description"] = first[:-1] if first.endswith(".") else first
    if etype == "composite":
        features = []
        for line in lines:
            match = re.match(r"^- `([^`]+)` \(([a-z]+)\)(.*)$", line)
            if not match:
                continue
            fname, ftype, rest = match.groups()
            feature = {"type": ftype, "name": fname, "property": fname, "access": access}
            if ftype == "binary":
                values = re.search(r"allowed values: `([^`]*)` or `([^`]*)`", rest)
                if values:
                    feature["value_on"], feature["value_off"] = (_binary_value(values.group(1)),
                                                                 _binary_value(values.group(2)))
            elif ftype == "enum" and "allowed values:" in rest:
                feature["values"] = TICKED.findall(rest.split("allowed values:", 1)[1])
            features.append(feature)
        entry["features"] = features
    return entry


def parse_page(page: str) -> Tuple[Optional[dict], Counter]:
    """(the page's definition {model, vendor, description, exposes}, counts of
    what it could not read), or (None, …) for a page that is no device page."""
    table = _table(page)
    model = table.get("Model")
    if not model:
        return None, Counter(no_table=1)
    vendor = re.sub(r"^\[(.*)\]\(.*\)$", r"\1", table.get("Vendor", "")).strip()
    names = re.findall(r"([a-z0-9_]+)", table.get("Exposes", ""))
    skipped: Counter = Counter()
    exposes = []
    sections = _sections(page)
    # Properties more than one expose is published on (name them by label).
    taken = Counter(m.group(1) for _, lines in sections
                    for m in [re.search(r"published state on the `([^`]+)` property", "\n".join(lines))] if m)
    for title, lines in sections:
        etype, label, endpoint = _title(title)
        entry = None
        if etype in ("numeric", "binary", "enum", "text"):
            entry = _generic(etype, label, endpoint, lines, names, taken)
        elif etype == "light":
            entry, undescribed = _light(endpoint, lines)
            skipped.update(f"light feature {n}" for n in undescribed)
        elif etype == "climate":
            entry, undescribed = _climate(endpoint, lines)
            skipped.update(f"climate feature {n}" for n in undescribed)
        elif etype in ("switch", "lock", "cover", "fan"):
            entry = _device_like(etype, label, endpoint, lines)
        elif etype in ("composite", "list"):
            entry = _composite(etype, label, endpoint, lines, names)
        if entry is None:
            skipped[f"unreadable {etype}"] += 1
            continue
        exposes.append(entry)
    definition = {"model": model, "vendor": vendor, "description": table.get("Description", ""),
                  "exposes": exposes}
    return definition, skipped

