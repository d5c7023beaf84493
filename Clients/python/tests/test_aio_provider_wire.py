"""homed.aio.Provider against the in-test fake daemon of test_aio_wire: a
command that waits for a registration in flight past its deadline is neither
handled nor answered, while one whose deadline is still ahead is. No homed
binary needed."""

import asyncio

import homed.aio
from homed import pb
from .test_aio_wire import WAIT, FakeDaemon, frame, run

LAMP = {"key": "lamp-1", "name": "Desk Lamp", "category": "LIGHTBULB",
        "services": [{"type": "Lightbulb", "characteristics": [{"type": "On", "value": False}]}]}
ON_ID = 42


def message(call_id, payload) -> bytes:
    return frame(call_id, message=pb.CallMessage(payload=payload.SerializeToString()))


def ok(call_id) -> bytes:
    return frame(call_id, status=pb.CallStatus(code=pb.OK))


class ProviderDaemon:
    """Opens the provider's session; when the registration comes, sends two
    reads of the id it is about to give (one due in 50 ms, one in 5 s) and
    answers the registration only 300 ms later. Records the answers."""

    def __init__(self):
        self.stream_call = None
        self.answers = []
        self.answered = asyncio.Event()

    async def on_open(self, daemon, writer, request):
        method = request.open.method.rsplit("/", 1)[-1]
        if method == "OpenProvider":
            self.stream_call = request.call_id
            opened = pb.ProviderCommand(request_id=0)
            opened.opened.provider_id = "fake"
            opened.opened.ping_interval_ms = 60000
            writer.write(message(request.call_id, opened))
        elif method == "RegisterAccessories":
            for request_id, timeout_ms in ((7, 50), (8, 5000)):
                read = pb.ProviderCommand(request_id=request_id, timeout_ms=timeout_ms)
                read.read.characteristic_ids.append(ON_ID)
                writer.write(message(self.stream_call, read))
            await writer.drain()
            await asyncio.sleep(0.3)
            response = pb.RegisterAccessoriesResponse(seq=1)
            accessory = response.accessories.add(id=40, provider_key="lamp-1")
            accessory.services.add(type_name="AccessoryInformation").characteristics.add(id=41, type_name="Identify")
            on = accessory.services.add(type_name="Lightbulb").characteristics.add(id=ON_ID, type_name="On")
            on.metadata.format = pb.FORMAT_BOOL
            writer.write(message(request.call_id, response) + ok(request.call_id))
        elif method == "AnswerCommand":
            self.answers.append(pb.CommandAnswer.FromString(request.open.request))
            writer.write(message(request.call_id, pb.AnswerCommandResponse(accepted=True)) + ok(request.call_id))
            self.answered.set()
        else:
            writer.write(frame(request.call_id, status=pb.CallStatus(code=pb.UNIMPLEMENTED, message="no")))


def test_a_command_whose_deadline_passes_while_a_registration_is_in_flight_is_skipped():
    fake = ProviderDaemon()
    reads = []

    async def on_read(refs):
        reads.append(list(refs))
        return {ref: True for ref in refs}

    async def scenario():
        async with FakeDaemon(on_open=fake.on_open) as daemon:
            provider = homed.aio.Provider("fake", [LAMP], on_read=on_read, socket_path=daemon.path)
            async with provider:
                assert await provider.wait_registered(WAIT), provider.error
                await asyncio.wait_for(fake.answered.wait(), WAIT)
                await asyncio.sleep(0.1)  # an answer to the late one would have come by now
                return provider.stats

    stats = run(scenario())
    assert [a.request_id for a in fake.answers] == [8]
    assert fake.answers[0].reads[0].characteristic_id == ON_ID and fake.answers[0].reads[0].value.bool_value
    assert reads == [[("lamp-1", "Lightbulb", "On")]]
    assert stats["late"] == 1 and stats["reads"] == 1
