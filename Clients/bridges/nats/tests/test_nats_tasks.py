"""Cancels that must not be lost (homed_nats.tasks): the bridge cancels its
publishing tasks to start again from the stream's tail, and waits for them."""

import asyncio

import pytest

from homed_nats.tasks import end_all, result_within


def test_a_cancel_arriving_with_the_result_is_raised_not_dropped():
    """The acknowledgement and the bridge's cancel in the same turn of the loop:
    the waiting task ends cancelled (Python 3.11's wait_for returned the result
    and went on, and the bridge waited for that task for ever)."""
    async def scenario():
        future = asyncio.get_running_loop().create_future()
        waiting = asyncio.ensure_future(result_within(future, 3))
        await asyncio.sleep(0)  # waiting on the future now
        future.set_result({"seq": 1})
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    asyncio.run(scenario())


def test_no_result_within_the_timeout_is_none_and_the_future_is_left_alone():
    async def scenario():
        future = asyncio.get_running_loop().create_future()
        assert await result_within(future, 0.01) is None
        assert not future.done()
        future.set_result("late")
        assert await result_within(future, 0.01) == "late"
    asyncio.run(scenario())


def test_a_task_that_goes_on_after_a_cancel_is_cancelled_again_until_it_ends():
    """end_all returns only once every task has ended, also one that took the
    first cancel for itself (as a library's wait may)."""
    async def scenario():
        took = []

        async def stubborn():
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                took.append("first cancel")
            await asyncio.Event().wait()

        async def failing():
            raise RuntimeError("the first failure")

        tasks = [asyncio.ensure_future(stubborn()), asyncio.ensure_future(failing())]
        await asyncio.sleep(0)
        await asyncio.wait_for(end_all(tasks), 5)
        assert took == ["first cancel"]
        assert tasks[0].cancelled()
        assert isinstance(tasks[1].exception(), RuntimeError)
    asyncio.run(scenario())
