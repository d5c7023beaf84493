"""Shelly Gen2+ devices over MQTT, for the provider (service.py).

A Shelly announces nothing a provider could read, so each device is asked
what it is: Shelly.GetDeviceInfo, Shelly.GetConfig and Shelly.GetStatus on
`<prefix>/rpc`, for the prefixes named with `--shelly` and, unless
`--no-shelly-discovery`, for every `<id>/online` saying `true` whose id
starts with "shelly" (a device's default prefix is its id). It is asked
again each time it comes online, and every RETRY seconds while a named one
does not answer. A write is an RPC call; its error answer fails the write at
once, its result is followed by <Component>.GetStatus, whose answer (or the
device's NotifyStatus) confirms the write as state."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

from homed import pb

from .components import Refused
from .native_entity import names
from .shelly import ShellyDevice, map_shelly
from .shelly_rpc import Answer, Rpc, RpcCall, Sent, component_src, probe_src, status_src

log = logging.getLogger("homed-mqtt-devices")

__all__ = ["ShellySource", "ERROR_CODES"]

#: How long a device has to answer what it is before it is asked again, and
#: how often a named one that does not answer is asked.
ANSWER_WITHIN = 5.0
RETRY = 30.0
PROBE = ("Shelly.GetDeviceInfo", "Shelly.GetConfig", "Shelly.GetStatus")
#: A Shelly's error codes (its RPC's, after gRPC's) as the daemon's.
ERROR_CODES = {-103: pb.INVALID_ARGUMENT, -104: pb.DEADLINE_EXCEEDED, -105: pb.NOT_FOUND, -106: pb.ALREADY_EXISTS,
               -108: pb.FAILED_PRECONDITION, -109: pb.UNAVAILABLE, -114: pb.UNAVAILABLE,
               401: pb.PERMISSION_DENIED}


@dataclass
class Probe:
    """What one device answered so far."""

    started: float
    answers: Dict[str, Answer] = field(default_factory=dict)


class ShellySource:
    def __init__(self, service, prefixes: Iterable[str], discover: bool, root: str):
        self.service = service
        self.named = [p.strip("/") for p in prefixes]
        self.discover = discover
        self.root = root
        self.rpc = Rpc(root)
        self.probes: Dict[str, Probe] = {}  # prefix -> being asked
        self.devices: Dict[str, ShellyDevice] = {}  # prefix -> as last mapped
        self.asked_at: Dict[str, float] = {}  # prefix -> when last asked what it is
        self.online: Dict[str, bool] = {}  # prefix -> what its online topic said last

    def subscriptions(self) -> List[str]:
        topics = [f"{self.root}/#"] + [f"{p}/online" for p in self.named]
        return topics + (["+/online"] if self.discover else [])

    def covers(self, topic: str) -> bool:
        """A topic the root's subscription brings already (RPC answers)."""
        return topic.startswith(self.root + "/")

    def on_connect(self) -> None:
        for prefix in sorted(set(self.named) | set(self.devices)):
            self.ask(prefix)

    def ask(self, prefix: str) -> None:
        """Asks the device what it is, and its whole status."""
        self.rpc.forget(prefix, "probe")
        self.probes[prefix] = Probe(time.monotonic())
        self.asked_at[prefix] = time.monotonic()
        for method in PROBE:
            src = status_src(self.root, prefix) if method == "Shelly.GetStatus" else probe_src(self.root, prefix)
            self._publish(*self.rpc.request(src, Sent(prefix, method, "probe")))

    def handle(self, topic: str, payload: bytes) -> None:
        answer = self.rpc.answer(topic, payload)
        if answer is not None:
            if answer.sent.purpose == "probe":
                self._probed(answer)
            elif answer.sent.purpose == "command":
                self._commanded(answer)
            return
        if topic.endswith("/online") and payload in (b"true", b"false"):
            prefix = topic[:-len("/online")]
            was = self.online.get(prefix)
            self.online[prefix] = payload == b"true"
            if payload == b"false" or (prefix in self.devices and was is not False):
                return  # known and not back from offline (the retained "true" again, on a new subscription)
            if prefix in self.named or prefix in self.devices or (
                    self.discover and "/" not in prefix and prefix.lower().startswith("shelly")):
                self.ask(prefix)

    def tick(self) -> None:
        """A device that said what it is but not all of it is taken as it
        answered; the named devices that did not answer are asked again (sync thread)."""
        now = time.monotonic()
        for prefix, probe in list(self.probes.items()):
            if now - probe.started >= ANSWER_WITHIN:
                silent = (None, f"gave no answer within {ANSWER_WITHIN:g} s")
                for method in PROBE:
                    probe.answers.setdefault(method, Answer(Sent(prefix, method, "probe"), error=silent))
                self._finish(prefix)
        for prefix in self.named:
            probe = self.probes.get(prefix)
            waiting = probe is not None and now - probe.started < ANSWER_WITHIN
            if prefix not in self.devices and not waiting and now - self.asked_at.get(prefix, 0.0) >= RETRY:
                self.ask(prefix)

    # -- what a device is ----------------------------------------------------------------

    def _probed(self, answer: Answer) -> None:
        prefix = answer.sent.prefix
        probe = self.probes.get(prefix)
        if probe is None:
            return
        probe.answers[answer.sent.method] = answer
        if len(probe.answers) == len(PROBE):
            self._finish(prefix)

    def _finish(self, prefix: str) -> None:
        probe = self.probes.pop(prefix)
        self.rpc.forget(prefix, "probe")
        info, config, status = (probe.answers[m] for m in PROBE)
        for method, failed in (("Shelly.GetDeviceInfo", info), ("Shelly.GetStatus", status)):
            if failed.error is not None:
                self.service._once(("shelly-unread", prefix, method, failed.error), logging.ERROR,
                                   "Shelly at %s: %s %s; not registered (asked again when it comes online)",
                                   prefix, method, _error_text(failed.error))
                return
        try:
            device = map_shelly(prefix, self.root, info.result, config.result, status.result)
        except Refused as why:
            self.service._once(("shelly-refused", prefix, str(why)), logging.ERROR,
                               "Shelly at %s refused: %s; left out (the others are registered)", prefix, why)
            return
        label = f"Shelly {device.name!r} ({device.key}, {prefix})"
        signature = json.dumps([info.result, config.result, sorted(status.result)], sort_keys=True, default=str)
        # One line a device: what it did not say and what is left out.
        said = []
        if config.error is not None:
            said.append(f"Shelly.GetConfig {_error_text(config.error)}; registered without its config (its "
                        "components' names and its inputs' types)")
        if not device.entities:
            said.append("none of its components has a HAP counterpart; not registered")
        if device.left_out:
            said.append(f"left out: {names(device.left_out)}")
        if said:
            level = logging.WARNING if config.error is not None or not device.entities else logging.INFO
            self.service._once(("shelly-said", prefix, signature, config.error), level, "%s: %s", label,
                               "; ".join(said))
        self.devices[prefix] = device
        self.service._take_native(f"shelly:{prefix}", device.entities, signature)

    # -- writes --------------------------------------------------------------------------

    def command(self, key: str, refs: List[Any], call: RpcCall) -> Optional[Tuple[str, str]]:
        """(topic, text) of one write's call to the device keyed `key`; None
        when no device answers to that key any more."""
        prefix = next((p for p, d in self.devices.items() if d.key == key), None)
        if prefix is None:
            return None
        sent = Sent(prefix, call.method, "command", key=key, refs=list(refs), component=call.component)
        return self.rpc.request(component_src(self.root, prefix, call.component), sent, call.params)

    def _commanded(self, answer: Answer) -> None:
        sent = answer.sent
        if answer.error is not None:
            code, message = answer.error
            self.service.echo.fail(sent.key, sent.refs, (ERROR_CODES.get(code, pb.FAILED_PRECONDITION),
                                                         f"device {sent.key}: {sent.method} "
                                                         f"{_error_text(answer.error)}"))
            return
        # The call is taken; the component's status (or its NotifyStatus) says what it is now.
        kind = sent.component.partition(":")[0]
        method = "CCT.GetStatus" if kind == "cct" else f"{kind.capitalize()}.GetStatus"
        params = {"id": int(sent.component.partition(":")[2])}
        self._publish(*self.rpc.request(component_src(self.root, sent.prefix, sent.component),
                                        Sent(sent.prefix, method, "refresh"), params))

    def _publish(self, topic: str, text: str) -> None:
        self.service.mqtt.publish(topic, text, qos=0)
        log.debug("%s: %s", topic, text)


def _error_text(error: Tuple[Any, str]) -> str:
    """"answered error 401: …", or what went wrong without an answer."""
    code, message = error
    return f"answered error {code}: {message[:200]}" if code is not None else message
