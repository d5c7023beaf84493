"""Is each dependency a program needs installed, at a version it was tested with?

A program checks this first, before it imports anything outside the standard
library: a dependency too old or too new for it (``paho-mqtt`` 1.6.1 from Debian
where 2.x is needed, a ``HAP-python`` newer than the one tested) would otherwise
end in a traceback far from the cause. The versions come from the distribution's
own metadata (its ``pyproject.toml`` as installed), so they are written once.
Only the standard library is used here, and ``homed/__init__.py`` imports nothing
eagerly, so that this module loads even when ``protobuf`` is the broken one.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from typing import Iterable, List, Optional, Tuple

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*?)\s*(;.*)?$")
_CLAUSE = re.compile(r"^\s*(===|==|!=|~=|<=|>=|<|>)\s*([0-9][0-9A-Za-z.*+!-]*)\s*$")


def release(version: str) -> Tuple[int, ...]:
    """The numeric release of a version ("2.10.1rc1" → (2, 10, 1)); enough for
    the ranges this project declares, which name releases only."""
    numbers = []
    for part in version.split("+", 1)[0].split("."):
        digits = re.match(r"\d+", part)
        if not digits:
            break
        numbers.append(int(digits.group()))
        if digits.group() != part:
            break
    return tuple(numbers)


def _padded(a: Tuple[int, ...], b: Tuple[int, ...]) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def satisfies(found: str, operator: str, wanted: str) -> bool:
    if wanted.endswith(".*"):
        prefix = release(wanted[:-2])
        same = release(found)[: len(prefix)] == prefix
        return same if operator == "==" else not same
    have, need = _padded(release(found), release(wanted))
    if operator == "~=":
        head = release(wanted)[:-1]
        return have >= need and release(found)[: len(head)] == head
    return {"==": have == need, "===": found == wanted, "!=": have != need, "<=": have <= need,
            ">=": have >= need, "<": have < need, ">": have > need}[operator]


def parse(requirement: str) -> Optional[Tuple[str, List[Tuple[str, str]]]]:
    """("paho-mqtt", [(">=", "2.0"), ("<", "3")]) of "paho-mqtt<3,>=2.0"; None for
    a requirement that only applies with an extra or on another platform."""
    match = _REQUIREMENT.match(requirement)
    if not match:
        return None
    name, _extras, specifier, marker = match.groups()
    if marker and "extra" in marker:
        return None
    specifier = specifier.strip().strip("()")
    clauses = []
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        parsed = _CLAUSE.match(clause)
        if parsed:
            clauses.append((parsed.group(1), parsed.group(2)))
    return name, clauses


def describe(clauses: Iterable[Tuple[str, str]]) -> str:
    ordered = sorted(clauses, key=lambda c: c[0] not in (">=", ">", "==", "~="))
    return ", ".join(f"{op} {version}" for op, version in ordered)


def problems(distribution: str, requirements: Optional[List[str]] = None) -> List[str]:
    """One sentence for each requirement of ``distribution`` (and of the homed
    distributions it needs) that the installed packages do not meet."""
    found_problems: List[str] = []
    seen = set()
    pending = [(distribution, requirements)]
    while pending:
        dist, reqs = pending.pop()
        if reqs is None:
            try:
                reqs = metadata.requires(dist) or []
            except metadata.PackageNotFoundError:
                continue  # run from a checkout without being installed: nothing to read
        for requirement in reqs:
            parsed = parse(requirement)
            if parsed is None:
                continue
            name, clauses = parsed
            key = name.lower().replace("_", "-")
            if key in seen:
                continue
            seen.add(key)
            wanted = describe(clauses)
            try:
                version = metadata.version(name)
            except metadata.PackageNotFoundError:
                found_problems.append(f"needs {name}{' ' + wanted if wanted else ''} (not installed)")
                continue
            if not all(satisfies(version, op, v) for op, v in clauses):
                found_problems.append(f"needs {name} {wanted} (found {version})")
            if key.startswith("homed"):
                pending.append((name, None))
    return found_problems


def check(distribution: str, program: str) -> None:
    """Exit 2 with one line per unmet dependency; return when all are met."""
    unmet = problems(distribution)
    if unmet:
        for line in unmet:
            print(f"{program}: {line}; install it with the versions in Clients/constraints.txt",
                  file=sys.stderr)
        sys.exit(2)
