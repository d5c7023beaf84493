"""Shelly Gen2+ JSON-RPC over MQTT, with no I/O: requests as a device takes
them on `<prefix>/rpc` (`{"id", "src", "method", "params"}`), its answers
(`{"id", "src", "dst", "result"}` or `"error": {"code", "message"}`)
published on `<src>/rpc`, and which request each answer is for.

Every request of this provider has a `src` under one root
(`homed-mqtt-devices/<client id>/shelly`), so all answers come on topics
under it: `<root>/<prefix>/probe` for what a device is (GetDeviceInfo,
GetConfig), `<root>/<prefix>` for its whole status (Shelly.GetStatus) and
`<root>/<prefix>/<component>` for one component's calls (Switch.Set, then
Switch.GetStatus). A device's bindings read the status answers as they read
its NotifyStatus notifications."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["RpcCall", "Sent", "Answer", "Rpc", "status_src", "component_src", "probe_src"]


def probe_src(root: str, prefix: str) -> str:
    return f"{root}/{prefix}/probe"


def status_src(root: str, prefix: str) -> str:
    return f"{root}/{prefix}"


def component_src(root: str, prefix: str, component: str) -> str:
    return f"{root}/{prefix}/{component}"


class RpcCall:
    """One call a write makes (`Switch.Set {"id": 0, "on": true}`); the
    characteristics of one component written together are one call (a
    light's `on` and `brightness`)."""

    def __init__(self, method: str, params: Dict[str, Any], component: str):
        self.method, self.params, self.component = method, dict(params), component

    @property
    def merge_key(self) -> Tuple[str, Any]:
        return self.method, self.params.get("id")

    def merge(self, other: "RpcCall") -> None:
        self.params.update(other.params)

    def __repr__(self) -> str:
        return f"RpcCall({self.method} {json.dumps(self.params, sort_keys=True)})"


@dataclass
class Sent:
    """A request waiting for its answer."""

    prefix: str
    method: str
    purpose: str  # "probe", "status", "command", "refresh"
    #: For a command: the device's key and the characteristics it writes.
    key: Optional[str] = None
    refs: List[Any] = field(default_factory=list)
    component: Optional[str] = None


@dataclass
class Answer:
    sent: Sent
    result: Any = None
    #: (code, message) of an error answer.
    error: Optional[Tuple[Any, str]] = None


class Rpc:
    """The requests sent and the answers awaited (one per request id)."""

    def __init__(self, root: str):
        self.root = root
        self.next_id = 0
        self.waiting: Dict[int, Sent] = {}

    def request(self, src: str, sent: Sent, params: Optional[Dict[str, Any]] = None) -> Tuple[str, str]:
        """(topic, text) of a request to `sent.prefix`, answered on `<src>/rpc`."""
        self.next_id += 1
        self.waiting[self.next_id] = sent
        frame: Dict[str, Any] = {"id": self.next_id, "src": src, "method": sent.method}
        if params:
            frame["params"] = params
        return f"{sent.prefix}/rpc", json.dumps(frame, separators=(",", ":"))

    def answer(self, topic: str, payload: bytes) -> Optional[Answer]:
        """The answer a message under the root is, or None (not one, or to a
        request no longer waited for)."""
        if not topic.startswith(self.root + "/") or not topic.endswith("/rpc"):
            return None
        try:
            frame = json.loads(payload)
        except ValueError:
            return None
        if not isinstance(frame, dict) or not isinstance(frame.get("id"), int):
            return None
        sent = self.waiting.pop(frame["id"], None)
        if sent is None:
            return None
        error = frame.get("error")
        if isinstance(error, dict):
            return Answer(sent, error=(error.get("code"), str(error.get("message", ""))))
        if "result" not in frame:
            return Answer(sent, error=(None, "an answer with neither result nor error"))
        return Answer(sent, result=frame["result"])

    def forget(self, prefix: str, purpose: str) -> None:
        """Requests of a device no longer waited for (asked again)."""
        for number in [n for n, s in self.waiting.items() if s.prefix == prefix and s.purpose == purpose]:
            del self.waiting[number]
