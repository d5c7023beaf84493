"""The remote readers' consumer (homed_nats.consumer.StreamConsumer) on a real
nats-server: every record after a position, in order, once, no more asked for
than the reader takes; a consumer that can deliver no more in order says so,
and one made after its last record goes on with nothing skipped."""

import asyncio

import nats

from homed_nats.consumer import StreamConsumer


async def stream_of(url, count):
    nc = await nats.connect(url, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
    js = nc.jetstream(timeout=5)
    await js.add_stream(name="S", subjects=["s.>"])
    for i in range(count):
        await js.publish(f"s.{i % 3}", str(i + 1).encode())
    return nc, js


def test_a_reader_that_does_not_take_is_sent_no_more_than_a_batch_and_then_gets_every_record_once(server):
    """With nothing taken, one batch waits and no more is asked for; taking
    gives the records in order, each once, until the stream's end."""
    async def scenario():
        nc, js = await stream_of(server.url, 50)
        try:
            consumer = await StreamConsumer(nc, js, "S", ["s.>"], 0, batch=10).start()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 10
            while len(consumer._messages) < 10 and loop.time() < deadline:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.3)  # time enough for more, were more asked for
            assert len(consumer._messages) == 10 and not consumer.broken
            bodies = []
            while len(bodies) < 50 and loop.time() < deadline:
                bodies += [int(m.data) for m in await consumer.take(1)]
            assert bodies == list(range(1, 51))
            assert [m.metadata.sequence.stream for m in consumer._messages] == []
            await consumer.close()
        finally:
            await nc.close()
    asyncio.run(scenario())


def test_a_consumer_a_server_restart_lost_is_found_broken_by_take(server):
    async def scenario():
        nc, js = await stream_of(server.url, 5)
        try:
            consumer = await StreamConsumer(nc, js, "S", ["s.>"], 0, quiet_check=0.2).start()
            assert [int(m.data) for m in await consumer.take(5)] == [1, 2, 3, 4, 5]
            server.kill()
            server.start()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 20
            while not consumer.broken and loop.time() < deadline:
                # As the remote reader's caller may: each take cut short by its own timeout.
                try:
                    await asyncio.wait_for(consumer.take(1), 0.1)
                except asyncio.TimeoutError:
                    pass
            assert consumer.broken
            assert consumer.why == f"the server no longer has consumer {consumer.name}"
            again = await StreamConsumer(nc, js, "S", ["s.>"], 5).start()
            await js.publish("s.0", b"6")
            assert [int(m.data) for m in await again.take(5)] == [6]
            await again.close()
        finally:
            await nc.close()
    asyncio.run(scenario())
