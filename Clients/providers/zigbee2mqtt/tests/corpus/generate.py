#!/usr/bin/env python3
"""Zigbee2MQTT's own device pages as `bridge/devices` entries: the corpus the
provider's mapping tests run on (tests/corpus/devices-N.json).

Zigbee2MQTT's documentation (the zigbee2mqtt.io repository) holds one page per
supported device, `docs/devices/<model>.md`, written by its docgen from the
device's definition: a table (model, vendor, description) and an "Exposes"
section, one `###` part per expose in the definition's order, whose sentences
say its type, property, access, range, unit, `value_on`/`value_off` and enum
values. This script reads those sentences back into exposes entries:

    python3 generate.py --source ~/src/zigbee2mqtt.io          # a checkout
    python3 generate.py --source zigbee2mqtt.io.git --rev main  # or a git dir
    python3 generate.py --source ~/src/zigbee2mqtt.io --check   # the committed file is what it gives

What a page says and does not, and how it is read: z2m_pages.py. Around
each definition the script writes what `bridge/devices` has beside it:
`ieee_address` made from the vendor and model (so an entry keeps it when the
selection changes), `friendly_name` the model, `type` EndDevice for a device
with a battery expose and Router otherwise (the mapping reads neither).

Which pages (`select`): every device page of the VENDORS vendors with the
most pages, and each other page that documents an expose name or a
composite's set of features none of those shows, so the corpus stays a few MB
and still holds every kind of expose the documentation knows; the output
records the source commit and the rule.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
OUTPUT = HERE
#: Devices a file: the corpus is kept in files of at most this many devices
#: (devices-1.json, devices-2.json, …), each well under 2 MiB.
SHARD = 900
sys.path.insert(0, str(HERE))

from z2m_pages import parse_page  # noqa: E402 (this folder's, found by the line above)

#: How many vendors (by number of device pages, most first) the corpus takes whole.
VENDORS = 40


# --- reading the source --------------------------------------------------------------------------

class Source:
    """The device pages of a zigbee2mqtt.io checkout or git directory."""

    def __init__(self, path: Path, rev: str):
        self.path = path
        self.rev = rev
        self.git = not (path / "docs" / "devices").is_dir()
        if self.git:
            self.commit = self._git("rev-parse", rev).strip()
        else:
            try:
                self.commit = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], check=True,
                                             capture_output=True, text=True).stdout.strip()
            except (OSError, subprocess.CalledProcessError):
                self.commit = "unknown (not a git checkout)"

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", "--git-dir", str(self.path), *args], check=True, capture_output=True,
                              text=True).stdout

    def pages(self) -> List[str]:
        if self.git:
            names = self._git("ls-tree", "--name-only", f"{self.rev}:docs/devices").split("\n")
        else:
            names = [p.name for p in (self.path / "docs" / "devices").iterdir()]
        return sorted(n for n in names if n.endswith(".md"))

    def read(self, name: str) -> str:
        if self.git:
            return self._git("show", f"{self.rev}:docs/devices/{name}")
        return (self.path / "docs" / "devices" / name).read_text(encoding="utf-8")


# --- the corpus ----------------------------------------------------------------------------------

def ieee_of(vendor: str, model: str) -> str:
    return "0x" + hashlib.sha256(f"{vendor}\0{model}".encode()).hexdigest()[:16]


def bridge_entry(definition: dict) -> dict:
    battery = any(e.get("name") in ("battery", "battery_low") for e in definition["exposes"])
    return {"ieee_address": ieee_of(definition["vendor"], definition["model"]),
            "friendly_name": definition["model"], "type": "EndDevice" if battery else "Router",
            "supported": True, "interview_completed": True, "definition": definition}


def _shapes(definition: dict) -> set:
    """What a definition shows of the exposes format: each composite's type
    with its feature names, each other expose's type and name."""
    out = set()
    for e in definition["exposes"]:
        if e["type"] in ("light", "switch", "cover", "lock", "climate", "fan"):
            out.add((e["type"],) + tuple(sorted(f["name"] for f in e["features"])))
        else:
            out.add((e["type"], e.get("name")))
    return out


def select(definitions: List[dict]) -> Tuple[List[dict], str]:
    """Every device of the VENDORS vendors with the most pages (ties by name),
    and then, page by page in file-name order, each other device that shows a
    shape (see _shapes) none before it showed: the whole corpus of a few MB
    still holds every expose name and every composite's set of features that
    any page documents."""
    counts = Counter(d["vendor"] for d in definitions)
    top = {v for v, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].lower()))[:VENDORS]}
    chosen = [d for d in definitions if d["vendor"] in top]
    seen = set().union(*(_shapes(d) for d in chosen)) if chosen else set()
    for definition in definitions:
        if definition["vendor"] in top:
            continue
        new = _shapes(definition) - seen
        if new:
            chosen.append(definition)
            seen |= new
    rule = (f"every device page of the {VENDORS} vendors with the most device pages (ties by name), then, in "
            "page order, every other page that documents an expose name or a composite's feature set not seen yet")
    return chosen, rule


def build(source: Source) -> Tuple[dict, Counter]:
    definitions, skipped = [], Counter()
    for name in source.pages():
        definition, missed = parse_page(source.read(name))
        skipped.update(missed)
        if definition is not None:
            definitions.append(definition)
    chosen, rule = select(definitions)
    chosen.sort(key=lambda d: (d["vendor"].lower(), d["model"].lower(), d["model"]))
    corpus = {"source": {"repository": "zigbee2mqtt.io", "commit": source.commit, "pages": len(definitions)},
              "selection": rule, "devices": [bridge_entry(d) for d in chosen]}
    return corpus, skipped


def render(corpus: dict) -> Dict[str, str]:
    """{file name: text}: one device a line, keys sorted: stable, and a change shows
    as the lines of the devices it touches; SHARD devices a file, each with the
    corpus' source and selection."""
    head = {k: v for k, v in corpus.items() if k != "devices"}
    devices = [json.dumps(d, sort_keys=True, ensure_ascii=False, separators=(",", ":")) for d in corpus["devices"]]
    files = {}
    for number, start in enumerate(range(0, len(devices), SHARD), 1):
        lines = ["{", *(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True, ensure_ascii=False)},"
                        for k, v in head.items()), '"devices": [']
        lines.append(",\n".join(devices[start:start + SHARD]))
        lines.append("]}")
        files[f"devices-{number}.json"] = "\n".join(lines) + "\n"
    return files


def read(directory: Path) -> Tuple[dict, Dict[str, str]]:
    """The corpus its files hold, and their texts."""
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(directory.glob("devices-*.json"),
                                                                   key=lambda p: int(p.stem.split("-")[1]))}
    corpus: dict = {}
    for text in texts.values():
        part = json.loads(text)
        devices = corpus.setdefault("devices", [])
        corpus.update({k: v for k, v in part.items() if k != "devices"})
        devices += part["devices"]
    return corpus, texts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, type=Path, help="a zigbee2mqtt.io checkout or git directory")
    parser.add_argument("--rev", default="HEAD", help="the commit to read, for a git directory (HEAD)")
    parser.add_argument("--out", type=Path, default=OUTPUT, help="the directory of devices-N.json (tests/corpus)")
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    corpus, skipped = build(Source(args.source, args.rev))
    files = render(corpus)
    print(f"{len(corpus['devices'])} devices of {corpus['source']['pages']} pages "
          f"({corpus['source']['commit']}); not read: {dict(sorted(skipped.items())) or 'nothing'}", file=sys.stderr)
    current, texts = read(args.out)
    if args.check:
        if texts != files:
            old = {d["ieee_address"]: d for d in current.get("devices", [])}
            new = {d["ieee_address"]: d for d in corpus["devices"]}
            changed = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
            print(f"{args.out} differs from what the pages give: {len(changed)} devices "
                  f"({', '.join((new.get(k) or old[k])['definition']['model'] for k in changed[:10])}…)",
                  file=sys.stderr)
            return 1
        print(f"{args.out} is what the pages give", file=sys.stderr)
        return 0
    for stale in set(texts) - set(files):
        (args.out / stale).unlink()
    for name, text in files.items():
        (args.out / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
