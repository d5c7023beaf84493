"""A fake ESPHome device as a real process: ESPHome's native API on TCP, in
plaintext or Noise, with aioesphomeapi's own protobuf messages (api_pb2) and
message-type numbers (core.MESSAGE_TYPE_TO_PROTO).

    python fake_device.py --definition devices.json --port PORT [--noise-psk BASE64]
                          [--drop hello|frame] [--devices N]

It answers Hello, DeviceInfo, ListEntities (each entity's message, then
Done), SubscribeStates (every state), Ping and Disconnect, and applies the
commands to its states and sends the new state, as a device does. Stdout:
JSON lines (`listening`, `connected`, `command` with the request's fields).
Stdin: JSON lines `{"press": OBJECT_ID, "event_type": T}` (an event),
`{"state": OBJECT_ID, "fields": {…}}` (a state changed on the device),
`{"stuck": OBJECT_ID}` (its commands are taken and change nothing),
`{"drop": "hello"|"frame"|null, "close": true}` (below; `close` ends the
connections open now). A line may name `"device": INDEX` (0 unless told).

Bad input: `--drop hello` (or the order) closes the socket as soon as the
client's Hello is in (plaintext: its HelloRequest; Noise: its first handshake
frame), unanswered; `--drop frame` sends the first half of the answer's frame
(the HelloResponse, or Noise's server hello) and closes. `done` says `sent`,
the time.monotonic() at which a state order's state was written (a benchmark's
timestamp: CLOCK_MONOTONIC is the machine's).

`--devices N` serves N devices on N ports (the port given and the next
ones, or N free ports): the definition's, each with its own MAC address
(the last byte its index), name and friendly name (` N` after them);
`listening` then says `ports`."""

from __future__ import annotations

import argparse
import asyncio
import base64
import copy
import json
import sys
import threading
import time

from aioesphomeapi import api_pb2
from aioesphomeapi.core import MESSAGE_TYPE_TO_PROTO
from google.protobuf import json_format

TYPE_OF = {cls: number for number, cls in MESSAGE_TYPE_TO_PROTO.items()}


def say(event: str, **fields) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


async def read_varint(reader: asyncio.StreamReader) -> int:
    shift = result = 0
    while True:
        byte = (await reader.readexactly(1))[0]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result
        shift += 7


class Dropped(ConnectionError):
    """The connection closed on purpose, mid-handshake (--drop)."""


def cut(writer, drop: str, frame: bytes) -> None:
    """--drop: nothing of the answer (hello), or half of its frame (frame)."""
    if drop == "frame":
        writer.write(frame[: max(1, len(frame) // 2)])
    say("dropped", how=drop)


class Plaintext:
    """0x00, varint size, varint type, the message."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    async def handshake(self, drop=None) -> None:
        pass  # a plaintext Hello is a message (Device.serve)

    async def read(self):
        preamble = (await self.reader.readexactly(1))[0]
        if preamble != 0x00:
            raise ConnectionError(f"preamble 0x{preamble:02x}: not a plaintext client")
        size = await read_varint(self.reader)
        kind = await read_varint(self.reader)
        return kind, await self.reader.readexactly(size)

    def write(self, kind: int, payload: bytes) -> None:
        self.writer.write(b"\x00" + varint(len(payload)) + varint(kind) + payload)


class Noise:
    """ESPHome's Noise framing: 0x01, a 16-bit big-endian size, the frame.
    The handshake is Noise_NNpsk0_25519_ChaChaPoly_SHA256 with the prologue
    "NoiseAPIInit\\0\\0"; each encrypted frame holds a 16-bit type, a 16-bit
    size and the message."""

    def __init__(self, reader, writer, psk: bytes, name: str, mac: str):
        self.reader, self.writer, self.psk, self.name, self.mac = reader, writer, psk, name, mac
        self.noise = None

    async def _frame(self) -> bytes:
        header = await self.reader.readexactly(3)
        if header[0] != 0x01:
            raise ConnectionError(f"indicator 0x{header[0]:02x}: not a Noise client")
        return await self.reader.readexactly(int.from_bytes(header[1:3], "big"))

    def _send(self, data: bytes) -> None:
        self.writer.write(b"\x01" + len(data).to_bytes(2, "big") + data)

    async def handshake(self, drop=None) -> None:
        from noise.connection import NoiseConnection
        await self._frame()  # the client's hello (empty)
        server_hello = b"\x01" + self.name.encode() + b"\x00" + self.mac.encode() + b"\x00"
        if drop is not None:
            cut(self.writer, drop, b"\x01" + len(server_hello).to_bytes(2, "big") + server_hello)
            raise Dropped(drop)
        self._send(server_hello)
        noise = NoiseConnection.from_name(b"Noise_NNpsk0_25519_ChaChaPoly_SHA256")
        noise.set_as_responder()
        noise.set_psks(self.psk)
        noise.set_prologue(b"NoiseAPIInit\x00\x00")
        noise.start_handshake()
        first = await self._frame()
        if not first or first[0] != 0x00:
            raise ConnectionError("bad Noise handshake frame")
        try:
            noise.read_message(first[1:])
        except Exception:  # noqa: BLE001 - a wrong key
            self._send(b"\x01" + b"Handshake MAC failure")
            raise ConnectionError("the client's key is not this device's")
        self._send(b"\x00" + noise.write_message())
        self.noise = noise

    async def read(self):
        data = self.noise.decrypt(await self._frame())
        kind, size = int.from_bytes(data[0:2], "big"), int.from_bytes(data[2:4], "big")
        return kind, data[4:4 + size]

    def write(self, kind: int, payload: bytes) -> None:
        self._send(self.noise.encrypt(kind.to_bytes(2, "big") + len(payload).to_bytes(2, "big") + payload))


class Device:
    def __init__(self, definition: dict, psk=None):
        self.info = json_format.ParseDict(definition["device_info"], api_pb2.DeviceInfoResponse())
        self.entities = []
        self.states = {}  # key -> state message
        self.by_object_id = {}
        for entity in definition["entities"]:
            msg = json_format.ParseDict(entity["fields"], getattr(api_pb2, entity["type"])())
            self.entities.append(msg)
            self.by_object_id[msg.object_id] = msg
            if "state" in entity:
                self.states[msg.key] = json_format.ParseDict(entity["state"]["fields"],
                                                             getattr(api_pb2, entity["state"]["type"])())
        self.psk = psk
        self.drop = None  # --drop: "hello" or "frame"
        self.writers = set()  # every connection open
        self.sessions = set()
        self.stuck = set()  # keys whose commands change nothing (a relay that is stuck)

    def send(self, session, msg) -> None:
        session.write(TYPE_OF[type(msg)], msg.SerializeToString())

    def publish(self, state) -> float:
        self.states[state.key] = state
        sent = time.monotonic()
        for session in list(self.sessions):
            self.send(session, state)
        return sent

    async def serve(self, reader, writer) -> None:
        if self.psk is not None:
            session = Noise(reader, writer, self.psk, self.info.name, self.info.mac_address)
        else:
            session = Plaintext(reader, writer)
        subscribed = False
        self.writers.add(writer)
        try:
            await session.handshake(self.drop if self.psk is not None else None)
            while True:
                kind, payload = await session.read()
                cls = MESSAGE_TYPE_TO_PROTO.get(kind)
                if cls is None:
                    continue
                msg = cls.FromString(payload)
                if cls is api_pb2.HelloRequest:
                    if self.drop is not None:
                        answer = api_pb2.HelloResponse(api_version_major=1, api_version_minor=10,
                                                       name=self.info.name).SerializeToString()
                        cut(writer, self.drop, b"\x00" + varint(len(answer)) + varint(TYPE_OF[api_pb2.HelloResponse])
                            + answer)
                        await writer.drain()
                        break
                    self.send(session, api_pb2.HelloResponse(api_version_major=1, api_version_minor=10,
                                                             server_info="fake_device (homed tests)",
                                                             name=self.info.name))
                    say("connected", client=msg.client_info)
                elif cls is api_pb2.PingRequest:
                    self.send(session, api_pb2.PingResponse())
                elif cls is api_pb2.DeviceInfoRequest:
                    self.send(session, self.info)
                elif cls is api_pb2.ListEntitiesRequest:
                    for entity in self.entities:
                        self.send(session, entity)
                    self.send(session, api_pb2.ListEntitiesDoneResponse())
                elif cls is api_pb2.SubscribeStatesRequest:
                    subscribed = True
                    self.sessions.add(session)
                    for state in self.states.values():
                        self.send(session, state)
                elif cls is api_pb2.DisconnectRequest:
                    self.send(session, api_pb2.DisconnectResponse())
                    await writer.drain()
                    break
                elif cls.__name__.endswith("CommandRequest"):
                    say("command", type=cls.__name__,
                        fields=json_format.MessageToDict(msg, preserving_proto_field_name=True))
                    self.command(msg)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            self.writers.discard(writer)
            if subscribed:
                self.sessions.discard(session)
            writer.close()

    def command(self, msg) -> None:
        if msg.key in self.stuck:
            return
        old = self.states.get(msg.key)
        if isinstance(msg, api_pb2.SwitchCommandRequest):
            self.publish(api_pb2.SwitchStateResponse(key=msg.key, state=msg.state))
        elif isinstance(msg, api_pb2.LightCommandRequest):
            new = api_pb2.LightStateResponse()
            new.CopyFrom(old or api_pb2.LightStateResponse(key=msg.key))
            for flag, fields in (("has_state", ("state",)), ("has_brightness", ("brightness",)),
                                 ("has_color_mode", ("color_mode",)),
                                 ("has_rgb", ("red", "green", "blue")),
                                 ("has_color_temperature", ("color_temperature",))):
                if getattr(msg, flag):
                    for f in fields:
                        setattr(new, f, getattr(msg, f))
            self.publish(new)
        elif isinstance(msg, api_pb2.CoverCommandRequest):
            new = api_pb2.CoverStateResponse()
            new.CopyFrom(old or api_pb2.CoverStateResponse(key=msg.key))
            if msg.has_position:
                new.position = msg.position
            if msg.has_tilt:
                new.tilt = msg.tilt
            new.current_operation = 0
            self.publish(new)
        elif isinstance(msg, api_pb2.LockCommandRequest):
            self.publish(api_pb2.LockStateResponse(key=msg.key, state={0: 2, 1: 1, 2: 7}[msg.command]))
        elif isinstance(msg, api_pb2.FanCommandRequest):
            new = api_pb2.FanStateResponse()
            new.CopyFrom(old or api_pb2.FanStateResponse(key=msg.key))
            if msg.has_state:
                new.state = msg.state
            if msg.has_speed_level:
                new.speed_level = msg.speed_level
            self.publish(new)
        elif isinstance(msg, api_pb2.ClimateCommandRequest):
            new = api_pb2.ClimateStateResponse()
            new.CopyFrom(old or api_pb2.ClimateStateResponse(key=msg.key))
            if msg.has_mode:
                new.mode = msg.mode
            if msg.has_target_temperature:
                new.target_temperature = msg.target_temperature
            self.publish(new)
        # A button has no state: the command is all there is of it.

    def control(self, order: dict) -> None:
        sent = None
        if "drop" in order:
            self.drop = order["drop"]
            if order.get("close"):
                for writer in list(self.writers):
                    writer.close()
        elif "press" in order:
            entity = self.by_object_id[order["press"]]
            self.publish(api_pb2.EventResponse(key=entity.key, event_type=order["event_type"]))
        elif "stuck" in order:
            self.stuck.add(self.by_object_id[order["stuck"]].key)
        elif "state" in order:
            entity = self.by_object_id[order["state"]]
            state = api_pb2.__dict__[type(self.states[entity.key]).__name__]()
            state.CopyFrom(self.states[entity.key])
            json_format.ParseDict(order["fields"], state)
            sent = self.publish(state)
        say("done", order=order, sent=sent)


def numbered(definition: dict, index: int) -> dict:
    """The definition as the device of that index of --devices."""
    data = copy.deepcopy(definition)
    info = data["device_info"]
    info["mac_address"] = info["mac_address"][:-2] + f"{index:02X}"
    info["name"] = f"{info.get('name', 'device')} {index}"
    if info.get("friendly_name"):
        info["friendly_name"] = f"{info['friendly_name']} {index}"
    return data


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--definition", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--noise-psk")
    parser.add_argument("--drop", choices=["hello", "frame"])
    parser.add_argument("--devices", type=int, default=1)
    args = parser.parse_args()
    with open(args.definition, encoding="utf-8") as f:
        definition = json.load(f)
    psk = base64.b64decode(args.noise_psk) if args.noise_psk else None
    if args.devices == 1:
        devices = [Device(definition, psk)]
    else:
        devices = [Device(numbered(definition, n), psk) for n in range(args.devices)]
    servers = []
    for n, device in enumerate(devices):
        device.drop = args.drop
        servers.append(await asyncio.start_server(device.serve, "127.0.0.1", args.port + n if args.port else 0))
    loop = asyncio.get_running_loop()

    def read_stdin():
        for line in sys.stdin:
            if line.strip():
                order = json.loads(line)
                loop.call_soon_threadsafe(devices[order.pop("device", 0)].control, order)

    threading.Thread(target=read_stdin, daemon=True).start()
    ports = [server.sockets[0].getsockname()[1] for server in servers]
    say("listening", port=ports[0], ports=ports)
    await asyncio.gather(*(server.serve_forever() for server in servers))


if __name__ == "__main__":
    asyncio.run(main())
