#!/usr/bin/env python3
"""Generates the HAP catalog Swift source from the HAP reference JSON.

Reads Tests/Fixtures/hap/characteristics.json and services.json (HAP-python's
machine-readable catalog) with apple-additions.json merged over them (what Apple's
own service metadata lists and HAP-python's catalog omits, such as Lightbulb's
ColorTemperature), and writes Sources/HomeModel/Catalog/HAPCatalog+Generated.swift.
The output is committed and deterministic: the same JSON always gives the same bytes.

    Scripts/generate-catalog.py          regenerate in place
    Scripts/generate-catalog.py --check  exit 1 if the committed file differs from a fresh run
"""

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HAP = ROOT / "Tests" / "Fixtures" / "hap"
OUTPUT = ROOT / "Sources" / "HomeModel" / "Catalog" / "HAPCatalog+Generated.swift"

# Characteristics whose value is an occurrence rather than a state: every write is
# an event a subscriber must see (two single presses are two presses), so they are
# never deduplicated or coalesced, and they have no current value until one happens.
# HAP says as much for ProgrammableSwitchEvent (a read returns null); the JSON has
# no field for it, so it is listed here.
EVENT_ONLY = {"ProgrammableSwitchEvent"}

# Every key the JSON may carry. An unknown key fails the run rather than being
# silently dropped from the catalog.
CHARACTERISTIC_KEYS = {
    "Format", "Permissions", "UUID", "ValidValues", "ValidBits", "minValue", "maxValue",
    "minStep", "stepValue", "unit", "MaximumLength",
}
SERVICE_KEYS = {"UUID", "RequiredCharacteristics", "OptionalCharacteristics"}
FORMATS = {"bool", "uint8", "uint16", "uint32", "uint64", "int", "float", "string", "tlv8", "data"}
UNITS = {"celsius": ".celsius", "percentage": ".percentage", "arcdegrees": ".arcDegrees",
         "lux": ".lux", "seconds": ".seconds"}
PERMISSIONS = {"pr", "pw", "ev", "wr"}


def fail(message):
    sys.exit(f"generate-catalog: {message}")


def swift_string(text):
    """A Swift string literal; the JSON is UTF-8, so non-ASCII text stays as it is."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    if any(ord(c) < 0x20 for c in escaped):
        fail(f"control character in {text!r}")
    return f'"{escaped}"'


def swift_number(value):
    """A Double literal; integral values without a fraction, others as Python's shortest repr."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        fail(f"not a finite number: {value!r}")
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def swift_optional_number(value):
    return "nil" if value is None else swift_number(value)


def characteristic_entry(name, spec):
    unknown = set(spec) - CHARACTERISTIC_KEYS
    if unknown:
        fail(f"characteristic {name}: unknown keys {sorted(unknown)}")
    fmt = spec["Format"]
    if fmt not in FORMATS:
        fail(f"characteristic {name}: unknown format {fmt!r}")
    perms = spec["Permissions"]
    if set(perms) - PERMISSIONS:
        fail(f"characteristic {name}: unknown permissions {perms}")
    unit = spec.get("unit")
    if unit is not None and unit not in UNITS:
        fail(f"characteristic {name}: unknown unit {unit!r}")
    # HAP-python spells the step `minStep` everywhere but once (`stepValue` on
    # FilterLifeLevel); both mean HAP's minStep.
    if "minStep" in spec and "stepValue" in spec:
        fail(f"characteristic {name}: both minStep and stepValue")
    step = spec.get("minStep", spec.get("stepValue"))

    valid_values = sorted(((value, label) for label, value in spec.get("ValidValues", {}).items()))
    if len({value for value, _ in valid_values}) != len(valid_values):
        fail(f"characteristic {name}: two valid values share a number")
    valid_bits = sorted(((int(bit), label) for bit, label in spec.get("ValidBits", {}).items()))
    if any(not 0 <= bit < 64 for bit, _ in valid_bits):
        fail(f"characteristic {name}: a valid bit outside 0..63")

    values = ", ".join(f"(name: {swift_string(label)}, value: {value})" for value, label in valid_values)
    bits = ", ".join(f"(bit: {bit}, name: {swift_string(label)})" for bit, label in valid_bits)
    max_length = spec.get("MaximumLength")
    lines = [
        "        CharacteristicTypeInfo(",
        f"            uuid: {swift_string(spec['UUID'].upper())}, name: {swift_string(name)}, format: .{fmt},",
        "            permissions: CharacteristicProperties("
        f"readable: {str('pr' in perms).lower()}, writable: {str('pw' in perms).lower()}, "
        f"supportsEventNotification: {str('ev' in perms).lower()}, writeResponse: {str('wr' in perms).lower()}),",
        f"            unit: {UNITS.get(unit, '.none')}, minValue: {swift_optional_number(spec.get('minValue'))}, "
        f"maxValue: {swift_optional_number(spec.get('maxValue'))}, minStep: {swift_optional_number(step)},",
        f"            validValues: [{values}],",
        f"            validBits: [{bits}], maxLength: {'nil' if max_length is None else int(max_length)}, "
        f"isEventOnly: {str(name in EVENT_ONLY).lower()}",
        "        ),",
    ]
    return "\n".join(lines)


def service_entry(name, spec, characteristics):
    unknown = set(spec) - SERVICE_KEYS
    if unknown:
        fail(f"service {name}: unknown keys {sorted(unknown)}")
    for key in ("RequiredCharacteristics", "OptionalCharacteristics"):
        for member in spec.get(key, []):
            if member not in characteristics:
                fail(f"service {name}: {key} names unknown characteristic {member!r}")
    required = ", ".join(swift_string(c) for c in spec.get("RequiredCharacteristics", []))
    optional = ", ".join(swift_string(c) for c in spec.get("OptionalCharacteristics", []))
    return "\n".join([
        "        ServiceTypeInfo(",
        f"            uuid: {swift_string(spec['UUID'].upper())}, name: {swift_string(name)},",
        f"            requiredCharacteristics: [{required}],",
        f"            optionalCharacteristics: [{optional}]",
        "        ),",
    ])


def merge_additions(characteristics, services, additions):
    """Adds Apple's characteristics and optional characteristics that the base
    catalog lacks. Strict both ways, so that the file stays a list of true omissions:
    an addition the base already has, or one naming a service or characteristic that
    does not exist, fails the run."""
    for name, spec in additions["characteristics"].items():
        if name in characteristics:
            fail(f"apple-additions.json adds characteristic {name}, which the catalog already has")
        characteristics[name] = spec
    for service, names in additions["optional"].items():
        if service not in services:
            fail(f"apple-additions.json names service {service}, which the catalog lacks")
        spec = services[service]
        present = set(spec.get("RequiredCharacteristics", [])) | set(spec.get("OptionalCharacteristics", []))
        for name in names:
            if name not in characteristics:
                fail(f"apple-additions.json: {service} lists {name}, which is no characteristic")
            if name in present:
                fail(f"apple-additions.json: {service} already has {name}")
        spec["OptionalCharacteristics"] = spec.get("OptionalCharacteristics", []) + names


def generate():
    characteristics = json.loads((HAP / "characteristics.json").read_text(encoding="utf-8"))
    services = json.loads((HAP / "services.json").read_text(encoding="utf-8"))
    merge_additions(characteristics, services, json.loads((HAP / "apple-additions.json").read_text(encoding="utf-8")))
    missing = EVENT_ONLY - set(characteristics)
    if missing:
        fail(f"EVENT_ONLY names unknown characteristics {sorted(missing)}")

    out = [
        "// GENERATED by Scripts/generate-catalog.py from Tests/Fixtures/hap/*.json. DO NOT EDIT.",
        "// Regenerate with `Scripts/generate-catalog.py`; `--check` verifies this file is current.",
        "// swift-format-ignore-file",
        "",
        "extension HAPCatalog {",
        f"    /// Every standard HAP characteristic type ({len(characteristics)}), sorted by name.",
        "    public static let characteristicTypes: [CharacteristicTypeInfo] = [",
    ]
    out += [characteristic_entry(name, characteristics[name]) for name in sorted(characteristics)]
    out += [
        "    ]",
        "",
        f"    /// Every standard HAP service type ({len(services)}), sorted by name.",
        "    public static let serviceTypes: [ServiceTypeInfo] = [",
    ]
    out += [service_entry(name, services[name], characteristics) for name in sorted(services)]
    out += ["    ]", "}", ""]
    return "\n".join(out)


def main(argv):
    if argv not in ([], ["--check"]):
        sys.exit("usage: Scripts/generate-catalog.py [--check]")
    text = generate()
    if argv == ["--check"]:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else None
        if current != text:
            print(f"generated code is stale: {OUTPUT.relative_to(ROOT)} differs from a fresh run "
                  "(run Scripts/generate-catalog.py)", file=sys.stderr)
            return 1
        return 0
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"regenerated: {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
