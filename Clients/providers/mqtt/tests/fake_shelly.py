"""A Shelly Gen2+ on a real broker, answering JSON-RPC as its firmware does,
with the answers recorded from real devices (tests/recorded): on every
connection it says `true` on `<prefix>/online` (retained, its last will
`false`); a request on `<prefix>/rpc` is answered on `<src>/rpc` with
`{"id", "src", "dst", "result"}` (Shelly.GetDeviceInfo, Shelly.GetConfig,
Shelly.GetStatus, <Component>.GetStatus: the recorded answers) or with the
recorded error frame's error; a call that changes a component (Switch.Set,
Cover.GoToPosition / Open / Close / Stop, Light.Set, CCT.Set) is answered,
taken, and told as NotifyStatus on `<prefix>/events/rpc` (a cover's moving
first, then where it stopped) — or taken silently, or not at all (`mode`); a
press is a NotifyEvent."""

from __future__ import annotations

import copy
import json
import socket
import threading
import time
from typing import Any, Dict, List, Optional

import paho.mqtt.client as mqtt


class FakeShelly:
    def __init__(self, port: int, device: dict, error: Optional[dict] = None):
        self.port = port
        self.info, self.config, self.status = (copy.deepcopy(device[k]) for k in ("shelly", "config", "status"))
        self.moving = copy.deepcopy(device.get("statuses", {}))  # component -> its recorded status while moving
        self.error = error  # the recorded error answer, for the methods in `refusing`
        self.refusing: set = set()
        #: "reports": takes a call and says what changed (NotifyStatus); "quiet":
        #: takes it silently (rpc_ntf off); "ignores": answers it and changes nothing.
        self.mode = "reports"
        self.id = self.info["id"]
        self.prefix = (self.config.get("mqtt") or {}).get("topic_prefix") or self.id
        self.calls: List[dict] = []
        self.cond = threading.Condition()
        self.connected = threading.Event()
        self.client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id=f"fake-{self.id}")
        self.client.reconnect_delay_set(1, 1)
        self.client.will_set(f"{self.prefix}/online", "false", qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = lambda *a: self.connected.clear()
        self.client.on_message = self._on_message

    def start(self) -> "FakeShelly":
        self.client.connect_async("127.0.0.1", self.port, keepalive=5)
        self.client.loop_start()
        if not self.connected.wait(10):
            raise AssertionError(f"the fake Shelly {self.id} did not connect to the broker")
        return self

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def drop_connection(self) -> None:
        """As a device that loses power: the broker says its will; it connects again a second later."""
        self.connected.clear()
        self.client.socket().shutdown(socket.SHUT_RDWR)

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        if reason.is_failure:
            return
        client.subscribe(f"{self.prefix}/rpc", qos=1)
        client.publish(f"{self.prefix}/online", "true", qos=1, retain=True)
        self.connected.set()

    def raw(self, topic: str, payload, retain: bool = False) -> None:
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        if threading.current_thread() is not getattr(self.client, "_thread", None):
            info.wait_for_publish(5)

    def online(self, yes: bool) -> None:
        self.raw(f"{self.prefix}/online", "true" if yes else "false", retain=True)

    # -- notifications ------------------------------------------------------------------

    def notify(self, component: str, changes: Dict[str, Any]) -> None:
        """NotifyStatus: what changed of one component (its id with it)."""
        self.status[component].update(changes)
        params = {"ts": round(time.time(), 2), component: {"id": self.status[component].get("id"), **changes}}
        self._event("NotifyStatus", params)

    def press(self, component: str, event: str) -> None:
        now = round(time.time(), 2)
        self._event("NotifyEvent", {"ts": now, "events": [{"component": component,
                                                           "id": int(component.partition(":")[2]),
                                                           "event": event, "ts": now}]})

    def _event(self, method: str, params: dict) -> None:
        self.raw(f"{self.prefix}/events/rpc", json.dumps({"src": self.id, "dst": f"{self.prefix}/events",
                                                          "method": method, "params": params}))

    # -- calls ------------------------------------------------------------------------------

    def _on_message(self, client, userdata, message):
        frame = json.loads(message.payload)
        with self.cond:
            self.calls.append(frame)
            self.cond.notify_all()
        method, params = frame.get("method", ""), frame.get("params") or {}
        if method in self.refusing:
            self._answer(frame, error=self.error)
            return
        kind = method.partition(".")[0].lower()
        component = f"{kind}:{params.get('id')}"
        if method == "Shelly.GetDeviceInfo":
            self._answer(frame, result=self.info)
        elif method == "Shelly.GetConfig":
            self._answer(frame, result=self.config)
        elif method == "Shelly.GetStatus":
            self._answer(frame, result=self.status)
        elif method.endswith(".GetStatus") and component in self.status:
            self._answer(frame, result=self.status[component])
        elif method in ("Switch.Set", "Light.Set", "CCT.Set") and component in self.status:
            was_on = self.status[component].get("output")
            self._answer(frame, result={"was_on": was_on} if kind == "switch" else None)
            changes = {"output": params["on"]} if "on" in params else {}
            changes.update({k: params[k] for k in ("brightness", "ct") if k in params})
            if kind != "switch" and "brightness" in params and "on" not in params:
                changes["output"] = True  # a brightness set turns the light on
            self._take(component, changes)
        elif kind == "cover" and component in self.status:
            self._answer(frame, result=None)
            self._cover(component, method, params)
        else:
            self._answer(frame, error={"code": 404, "message": f"No handler for {method}"})

    def _take(self, component: str, changes: Dict[str, Any]) -> None:
        if self.mode == "reports":
            self.notify(component, changes)
        elif self.mode == "quiet":
            self.status[component].update(changes)

    def _cover(self, component: str, method: str, params: dict) -> None:
        current = self.status[component].get("current_pos", 0)
        target = {"Cover.Open": 100, "Cover.Close": 0}.get(method, params.get("pos"))
        if method == "Cover.Stop" or target is None or target == current:
            self._take(component, {"state": "stopped"})
            return
        moving = copy.deepcopy(self.moving.get(component, {}))
        state = "opening" if target > current else "closing"
        self._take(component, {**{k: moving[k] for k in ("move_timeout", "move_started_at") if k in moving},
                               "state": state, "target_pos": target})
        self.status[component].pop("target_pos", None)
        self._take(component, {"state": "stopped", "current_pos": target, "last_direction": state[:-3]})

    def _answer(self, frame: dict, result: Any = None, error: Optional[dict] = None) -> None:
        answer: Dict[str, Any] = {"id": frame.get("id"), "src": self.id, "dst": frame.get("src")}
        if error is not None:
            answer["error"] = error
        else:
            answer["result"] = result
        self.raw(f"{frame.get('src')}/rpc", json.dumps(answer))

    def forget_calls(self) -> None:
        with self.cond:
            self.calls.clear()

    def wait_call(self, method: str, timeout: float = 5.0) -> dict:
        """The next call of `method` the device got (taken off the list)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for index, frame in enumerate(self.calls):
                    if frame.get("method") == method:
                        del self.calls[index]
                        return frame
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no {method} within {timeout} s; got {[c.get('method') for c in self.calls]}")
                self.cond.wait(remaining)
