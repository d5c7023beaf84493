"""The conformance list (Tests/Conformance/scenarios.json, its README says what
each step does) run with the Python client against a real homed: one test per
scenario. The Swift and C runners execute the same list."""

from __future__ import annotations

import json
import threading
from concurrent.futures import Future
from typing import Dict, List, Optional

import pytest

from homed import Client, HomedError, StreamCursor, pb

from homed_testkit import HomedProcess, kill_pid, repository, require_binary

LIST = json.loads((repository() / "Tests" / "Conformance" / "scenarios.json").read_text())
WAIT = 5.0


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    process = HomedProcess(require_binary(), str(tmp_path_factory.mktemp("conformance")))
    process.args = [process.binary, "--socket", process.socket_path] + LIST["daemon"]
    process.start()
    try:
        yield process
    finally:
        kill_pid(process.proc)


def value_message(spec: dict):
    (kind, number), = spec.items()
    return pb.Value(**{f"{kind}_value": number})


def value_spec(value) -> Optional[dict]:
    kind = value.WhichOneof("kind")
    return None if kind is None else {kind[: -len("_value")]: getattr(value, kind)}


class Stream:
    """A subscription, its cursor, and what was read but not yet expected."""

    def __init__(self, client: Client, subscription):
        self.client = client
        self.subscription = subscription
        self.cursor = StreamCursor()
        self.values: List = []    # fresh value events not yet expected
        self.snapshot: List = []  # snapshot characteristics since the last SNAPSHOT_END
        self.ended: Optional[tuple] = None  # ("end", code) once the stream ended
        self.cancelled = False

    def read(self, timeout: float):
        """The next message (fresh events kept), None when the stream ended."""
        try:
            message = self.subscription.get(timeout)
        except HomedError as error:
            self.ended = ("end", error.code)
            return None
        if message is None:
            # The client ends iteration for OK and for the CANCELLED of its own cancel.
            self.ended = ("end", pb.CANCELLED if self.cancelled else pb.OK)
            return None
        fresh = self.cursor.accept(message)
        self.values += [event for event in fresh if event.WhichOneof("body") == "value"]
        self.snapshot += list(message.snapshot)
        return message


class Scenario:
    def __init__(self, daemon: HomedProcess):
        self.daemon = daemon
        self.clients: Dict[str, Client] = {}
        self.streams: Dict[str, Stream] = {}
        self.calls: Dict[str, Future] = {}
        self.providers: Dict[str, object] = {}  # client name -> its OpenProvider stream

    def close(self):
        for client in self.clients.values():
            client.close()

    # -- names --------------------------------------------------------------

    def resolve(self, client: Client, name) -> int:
        if isinstance(name, int):
            return name
        accessory_name, type_name = name.split("/")
        for home in client.get_home().homes:
            for accessory in home.accessories:
                if accessory.name != accessory_name:
                    continue
                for service in accessory.services:
                    for characteristic in service.characteristics:
                        if characteristic.type_name == type_name:
                            return characteristic.id
        raise AssertionError(f"no characteristic {name!r} in the home")

    # -- checks -------------------------------------------------------------

    @staticmethod
    def check_items(results, expected, what):
        assert len(results) == len(expected), f"{what}: {len(results)} results, expected {len(expected)}"
        for index, (result, want) in enumerate(zip(results, expected), start=1):
            code = pb.status_name(result.code)
            assert code == want.get("code", "OK"), f"{what} item {index}: {code} ({result.message}), expected {want}"
            if "value" in want:
                assert value_spec(result.value) == want["value"], f"{what} item {index}: value {result.value}"
            if want.get("seq") == "nonzero":
                assert result.seq > 0, f"{what} item {index}: seq 0"
            if want.get("seq") == "zero":
                assert result.seq == 0, f"{what} item {index}: seq {result.seq}"
            if "message_contains" in want:
                assert want["message_contains"] in result.message, f"{what} item {index}: {result.message!r}"

    @staticmethod
    def check_code(error: Optional[HomedError], expected: str, what: str):
        got = "OK" if error is None else error.code_name
        detail = "" if error is None else f" ({error.message})"
        assert got == expected, f"{what}: {got}{detail}, expected {expected}"

    # -- steps --------------------------------------------------------------

    def step(self, step: dict):
        getattr(self, "op_" + step["op"])(step)

    def op_connect(self, step):
        error = None
        try:
            client = Client.connect(self.daemon.socket_path, client_name="conformance-" + step["client"],
                                    protocol_version=step.get("protocol_version", 1),
                                    max_frame_size=step.get("request_max_frame_size", 0), call_timeout=WAIT)
        except HomedError as e:
            error = e
        self.check_code(error, step.get("expect", "OK"), "connect")
        if error is None:
            self.clients[step["client"]] = client
            hello = client.hello_reply
            assert hello.connection_id > 0 and hello.journal_id, hello
            assert "batch-events" in hello.capabilities, hello
            if "max_frame_size" in step:
                assert hello.max_frame_size == step["max_frame_size"], hello

    def op_disconnect(self, step):
        self.clients.pop(step["client"]).close()

    def op_call(self, step):
        client = self.clients[step["client"]]
        timeout = step["timeout_ms"] / 1000 if "timeout_ms" in step else None
        error = None
        try:
            client.call_raw(step["method"], b"", timeout=timeout)
        except HomedError as e:
            error = e
        self.check_code(error, step["expect"], step["method"])

    def op_read(self, step):
        client = self.clients[step["client"]]
        ids = [self.resolve(client, name) for name in step["ids"]]
        self.check_items(client.read(ids).reads, step["items"], "read")

    def write_request(self, client, step):
        request = pb.WriteCharacteristicsRequest(atomic=step.get("atomic", False),
                                                 validate_only=step.get("validate_only", False))
        for name, value in step["writes"]:
            request.writes.add(characteristic_id=self.resolve(client, name), value=value_message(value))
        return request

    def op_write(self, step):
        client = self.clients[step["client"]]
        request = self.write_request(client, step)
        error = response = None
        try:
            response = client.call("WriteCharacteristics", request)
        except HomedError as e:
            error = e
        self.check_code(error, step.get("expect", "OK"), "write")
        if response is not None:
            self.check_items(response.results, step.get("items", []), "write")

    def op_write_begin(self, step):
        client = self.clients[step["client"]]
        request = self.write_request(client, step)
        future: Future = Future()

        def run():
            try:
                future.set_result(client.call("WriteCharacteristics", request, timeout=10))
            except BaseException as e:  # handed to write_end
                future.set_exception(e)

        threading.Thread(target=run, daemon=True).start()
        self.calls[step["call"]] = future

    def op_write_end(self, step):
        response = self.calls.pop(step["call"]).result(timeout=10)
        self.check_items(response.results, step["items"], "write")

    def op_oversized_request(self, step):
        client = self.clients[step["client"]]
        count = client.max_frame_size // 3 + 1
        request = pb.ReadCharacteristicsRequest(characteristic_ids=range(1_000_000, 1_000_000 + count))
        error = None
        try:
            client.call("ReadCharacteristics", request)
        except HomedError as e:
            error = e
        self.check_code(error, step["expect"], "oversized request")

    def op_subscribe(self, step):
        client = self.clients[step["client"]]
        request = pb.SubscribeRequest(snapshot=step.get("snapshot", False))
        request.filter.characteristic_ids.extend(self.resolve(client, name) for name in step["ids"])
        if "since_seq" in step:
            request.since_seq = step["since_seq"]
            request.journal_id = step["journal_id"]
        stream_cursor = None
        if "resume_from" in step:
            stream_cursor = self.streams[step["resume_from"]].cursor
            stream_cursor.resume(request)
        timeout = step["timeout_ms"] / 1000 if "timeout_ms" in step else None
        stream = Stream(client, client.subscribe(request, timeout=timeout))
        if stream_cursor is not None:
            stream.cursor = stream_cursor
        self.streams[step["stream"]] = stream

    def op_expect_marker(self, step):
        stream = self.streams[step["stream"]]
        while True:
            message = stream.read(WAIT)
            assert message is not None, f"the stream ended ({stream.ended}) before a {step['kind']} marker"
            if message.HasField("marker"):
                break
        kind = pb.ENUMS["MarkerKind"]
        names = {number: name for name, number in kind.items()}
        assert names[message.marker.kind] == step["kind"], f"marker {names[message.marker.kind]}, expected {step['kind']}"
        if step.get("reason"):
            assert message.marker.reason, "the marker has no reason"
        if message.marker.kind == pb.MARKER_RESYNC:
            stream.snapshot = []  # a fresh snapshot follows

    def op_expect_snapshot(self, step):
        stream = self.streams[step["stream"]]
        while True:
            message = stream.read(WAIT)
            assert message is not None, f"the stream ended ({stream.ended}) before SNAPSHOT_END"
            if message.HasField("marker") and message.marker.kind == pb.MARKER_SNAPSHOT_END:
                break
        client = stream.client
        expected = [(self.resolve(client, name), value) for name, value in step["values"]]
        got = [(characteristic.id, value_spec(characteristic.value)) for characteristic in stream.snapshot]
        assert got == expected, f"snapshot {got}, expected {expected}"
        stream.snapshot = []

    def op_expect_values(self, step):
        stream = self.streams[step["stream"]]
        client = stream.client
        expected = [(self.resolve(client, name), value) for name, value in step["values"]]
        while len(stream.values) < len(expected):
            message = stream.read(WAIT)
            assert message is not None, f"the stream ended ({stream.ended}) with {len(stream.values)} values"
        events, stream.values = stream.values[: len(expected)], stream.values[len(expected):]
        got = [(event.value.characteristic_id, value_spec(event.value.value)) for event in events]
        assert got == expected, f"values {got}, expected {expected}"
        if "origin" in step:
            origin_id = self.clients[step["origin"]].connection_id
            for event in events:
                assert event.origin.kind == pb.ORIGIN_CLIENT and event.origin.connection_id == origin_id, event.origin

    def op_expect_quiet(self, step):
        stream = self.streams[step["stream"]]
        try:
            stream.read(step["ms"] / 1000)
        except TimeoutError:
            pass
        assert not stream.values, f"unexpected events: {stream.values}"

    def op_cancel(self, step):
        stream = self.streams[step["stream"]]
        stream.cancelled = True
        stream.subscription.cancel()

    def op_expect_end(self, step):
        stream = self.streams[step["stream"]]
        while stream.ended is None:
            stream.read(WAIT)
        assert pb.status_name(stream.ended[1]) == step["code"], f"ended with {stream.ended}, expected {step['code']}"

    # -- providers ----------------------------------------------------------

    def op_provider_open(self, step):
        client = self.clients[step["client"]]
        self.providers[step["client"]] = client.stream("OpenProvider", pb.OpenProviderRequest(provider_id=step["provider_id"]))
        command = self.next_command(step["client"])
        assert command.WhichOneof("command") == "opened", command
        assert command.opened.provider_id == step["provider_id"]
        assert list(command.opened.known_keys) == step["known_keys"]

    def next_command(self, name):
        command = self.providers[name].get(WAIT)
        assert command is not None, "the provider's stream ended"
        return command

    def op_provider_register(self, step):
        client = self.clients[step["client"]]
        request = pb.RegisterAccessoriesRequest()
        for spec in step["accessories"]:
            accessory = request.accessories.add(key=spec["key"], name=spec["name"],
                                                category=pb.ENUMS["AccessoryCategory"][spec["category"]])
            for service_spec in spec["services"]:
                service = accessory.services.add(type=service_spec["type"])
                for characteristic_spec in service_spec["characteristics"]:
                    characteristic = service.characteristics.add(type=characteristic_spec["type"])
                    if "value" in characteristic_spec:
                        characteristic.value.CopyFrom(value_message(characteristic_spec["value"]))
        error = None
        try:
            client.call("RegisterAccessories", request)
        except HomedError as e:
            error = e
        self.check_code(error, step.get("expect", "OK"), "register")

    def op_provider_expect_write(self, step):
        client = self.clients[step["client"]]
        while True:
            command = self.next_command(step["client"])
            kind = command.WhichOneof("command")
            if kind == "ping":
                client.call("AnswerCommand", pb.CommandAnswer(request_id=command.request_id))
                continue
            assert kind == "write", f"a {kind} command, expected a write"
            break
        expected = [(self.resolve(client, name), value) for name, value in step["writes"]]
        got = [(write.characteristic_id, value_spec(write.value)) for write in command.write.writes]
        assert got == expected, f"the provider was sent {got}, expected {expected}"
        answer = pb.CommandAnswer(request_id=command.request_id)
        if step["answer"] == "OK":
            for write in command.write.writes:
                answer.writes.add(characteristic_id=write.characteristic_id)
        else:
            answer.code = pb.ENUMS["StatusCode"][step["answer"]]
            answer.message = step.get("message", "")
        assert client.call("AnswerCommand", answer).accepted


@pytest.mark.parametrize("scenario", LIST["scenarios"], ids=[s["name"] for s in LIST["scenarios"]])
def test_conformance(daemon, scenario):
    run = Scenario(daemon)
    try:
        for number, step in enumerate(scenario["steps"], start=1):
            try:
                run.step(step)
            except (AssertionError, HomedError, TimeoutError) as error:
                pytest.fail(f"{scenario['name']}, step {number} ({step['op']}): {type(error).__name__}: {error}")
    finally:
        run.close()
