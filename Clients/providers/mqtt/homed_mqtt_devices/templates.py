"""The value templates devices really send, with no I/O and no Jinja.

Home Assistant renders `value_template` with Jinja. The devices this provider
serves use a handful of forms, and only those are taken:

    {{ value }}                      the payload as text
    {{ value_json.x }}               a key of the JSON payload
    {{ value_json['x'] }}            the same ("x" too), for keys that are no names
    {{ value_json.x.y }}             nested keys (and [0] for a list item), mixed freely
    {{ value_json.x | float }}       with filters: float, int (each with a default:
                                     float(0)), round, round(n), round(n, 'floor'|'ceil'),
                                     lower, upper, string, trim, abs, is_defined,
                                     default(x) / d(x)

Anything else (arithmetic, `if`, tests, other filters, text around the
expression) is refused when the config is read, with the reason, so that the
entity is left out whole rather than misread. A payload that lacks the key a
template names renders to MISSING: the message does not speak of that value
(a shared `tele/STATE` topic carries many).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, List, Optional, Tuple

__all__ = ["Template", "Unsupported", "MISSING", "RenderError", "compile_template", "command_format", "as_text"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Unsupported(ValueError):
    """A template this provider does not take, and why."""


class RenderError(ValueError):
    """A payload the template cannot be applied to (not JSON, not a number)."""


def as_text(value: Any) -> str:
    """A rendered value as Jinja prints it (True, 21.5, None), which is what
    Home Assistant compares with payload_on and the like."""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


_TOKEN = re.compile(r"""\s*(?:
    (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>-?\d+(?:\.\d+)?)
  | (?P<string>'[^'\\]*'|"[^"\\]*")
  | (?P<op>[.\[\]|(),])
)""", re.VERBOSE)


def _tokens(text: str) -> List[Tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if not match:
            raise Unsupported(f"{text[pos:].strip()[:20]!r} is not a key, a filter or a literal this provider reads")
        kind = match.lastgroup
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def _literal(kind: str, text: str) -> Any:
    if kind == "number":
        return float(text) if "." in text else int(text)
    if kind == "string":
        return text[1:-1]
    if kind == "name" and text in ("true", "True", "false", "False", "none", "None"):
        return {"true": True, "True": True, "false": False, "False": False}.get(text)
    raise Unsupported(f"{text!r} is not a literal")


def _number(value: Any, convert: Callable[[Any], Any], name: str, default: Any) -> Any:
    if isinstance(value, (int, float, str)):  # a bool is an int, as in Jinja
        try:
            return convert(value)
        except (ValueError, OverflowError):
            pass
    if default is not MISSING:
        return default
    raise RenderError(f"{value!r} is not a number (| {name})")


def _to_int(value: Any) -> int:
    return int(float(value)) if isinstance(value, str) else int(value)


def _round(value: Any, precision: int = 0, method: str = "common") -> float:
    number = _number(value, float, "round", MISSING)
    if method == "common":
        return round(number, precision)
    scale = 10 ** precision
    op = math.floor if method == "floor" else math.ceil
    return op(number * scale) / scale


def _filter(name: str, args: List[Any]) -> Callable[[Any], Any]:
    def arity(low: int, high: int) -> None:
        if not low <= len(args) <= high:
            raise Unsupported(f"| {name} takes {low} to {high} arguments, not {len(args)}")

    if name == "float":
        arity(0, 1)
        default = args[0] if args else MISSING
        return lambda v: _number(v, float, "float", default)
    if name == "int":
        arity(0, 1)
        default = args[0] if args else MISSING
        return lambda v: _number(v, _to_int, "int", default)
    if name == "round":
        arity(0, 2)
        precision = args[0] if args else 0
        method = args[1] if len(args) > 1 else "common"
        if not isinstance(precision, int) or method not in ("common", "floor", "ceil"):
            raise Unsupported(f"| round({', '.join(map(repr, args))}) is not round(n) or round(n, 'floor'|'ceil')")
        return lambda v: _round(v, precision, method)
    if name in ("lower", "upper", "trim", "string"):
        arity(0, 0)
        text = {"lower": str.lower, "upper": str.upper, "trim": str.strip, "string": str}[name]
        return lambda v: text(as_text(v))
    if name == "abs":
        arity(0, 0)
        return lambda v: abs(v) if isinstance(v, int) else abs(_number(v, float, "abs", MISSING))
    if name == "is_defined":
        arity(0, 0)
        return lambda v: v  # MISSING stays MISSING: the message does not speak of the value
    raise Unsupported(f"the filter | {name} is not one this provider takes")


class Template:
    """A compiled template: `render(text, json_of)` gives the value, MISSING,
    or raises RenderError. `json_of()` parses the payload when the template
    reads `value_json` (once per message, by the caller's cache)."""

    def __init__(self, source: str, uses_json: bool, path: List[Any], filters: List[Tuple[str, Callable, Any]]):
        self.source = source
        self.uses_json = uses_json
        self.path = path
        self.filters = filters

    def render(self, text: str, json_of: Optional[Callable[[], Any]] = None) -> Any:
        if self.uses_json:
            if json_of is None:
                raise RenderError("the payload is not JSON")
            value = json_of()
            for key in self.path:
                if isinstance(value, dict) and isinstance(key, str) and key in value:
                    value = value[key]
                elif isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value):
                    value = value[key]
                else:
                    value = MISSING
                    break
        else:
            value = text
        for name, apply, default in self.filters:
            if value is MISSING:
                if default is not MISSING:
                    value = default
                continue
            value = apply(value)
        return value

    def __repr__(self) -> str:
        return f"Template({self.source!r})"


def compile_template(source: Any) -> Template:
    """A template this provider can render, or Unsupported naming why."""
    if not isinstance(source, str):
        raise Unsupported(f"a template is text, not {type(source).__name__}")
    text = source.strip()
    if "{%" in text or "{#" in text:
        raise Unsupported("statements ({% … %}) are not taken; only one {{ … }} expression")
    match = re.fullmatch(r"\{\{(.*)\}\}", text, re.DOTALL)
    if not match or "{{" in match.group(1) or "}}" in match.group(1):
        raise Unsupported("a template here is one {{ … }} expression and nothing around it")
    tokens = _tokens(match.group(1))
    pos = 0

    def peek(offset: int = 0) -> Tuple[str, str]:
        return tokens[pos + offset] if pos + offset < len(tokens) else ("end", "")

    kind, head = peek()
    if kind != "name" or head not in ("value", "value_json"):
        raise Unsupported(f"it reads {head or 'nothing'!r}; only value and value_json are taken")
    pos += 1
    path: List[Any] = []
    while True:
        kind, text_ = peek()
        if (kind, text_) == ("op", "."):
            key_kind, key = peek(1)
            if key_kind not in ("name", "number") or (key_kind == "number" and not key.isdigit()):
                raise Unsupported("a '.' is followed by a key name")
            path.append(int(key) if key_kind == "number" else key)
            pos += 2
        elif (kind, text_) == ("op", "["):
            key_kind, key = peek(1)
            if key_kind not in ("string", "number") or peek(2) != ("op", "]"):
                raise Unsupported("[…] holds one quoted key or one index")
            literal = _literal(key_kind, key)
            if isinstance(literal, float):
                raise Unsupported("an index is a whole number")
            path.append(literal)
            pos += 3
        else:
            break
    if path and head == "value":
        raise Unsupported("value is text; keys are read from value_json")
    filters: List[Tuple[str, Callable, Any]] = []
    while peek() == ("op", "|"):
        kind, name = peek(1)
        if kind != "name":
            raise Unsupported("| is followed by a filter name")
        pos += 2
        args: List[Any] = []
        if peek() == ("op", "("):
            pos += 1
            while peek() != ("op", ")"):
                arg_kind, arg = peek()
                if arg_kind == "end":
                    raise Unsupported(f"| {name}( is not closed")
                args.append(_literal(arg_kind, arg))
                pos += 1
                if peek() == ("op", ","):
                    pos += 1
            pos += 1
        if name in ("default", "d"):
            if len(args) != 1:
                raise Unsupported(f"| {name} takes one argument")
            filters.append((name, lambda v: v, args[0]))
        else:
            filters.append((name, _filter(name, args), MISSING))
    if pos != len(tokens):
        raise Unsupported(f"{' '.join(t for _, t in tokens[pos:])!r} after the expression is not taken "
                          "(no arithmetic, tests or conditions)")
    return Template(source, head == "value_json", path, filters)


def command_format(source: Any, names: tuple = ("value",)) -> Callable[[str], str]:
    """A command template of the form `PREFIX{{ value }}SUFFIX` (`{"pos":
    {{ position }}}`, `pos,{{ position }}`) as a function of the value's
    text; anything else is Unsupported (what to send would be a guess)."""
    if source is None or source == "":
        return lambda text: text
    if not isinstance(source, str):
        raise Unsupported(f"a template is text, not {type(source).__name__}")
    match = re.fullmatch(r"(.*?)\{\{\s*(\w+)\s*\}\}(.*)", source, re.DOTALL)
    if not match or match.group(2) not in names or "{{" in match.group(3) or "{%" in source:
        raise Unsupported(f"only text around one {{{{ {names[0]} }}}} is taken as a command template")
    prefix, suffix = match.group(1), match.group(3)
    return lambda text: f"{prefix}{text}{suffix}"
