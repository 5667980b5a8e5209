"""The turn queue schedules anything with a ``_run()`` turn: no actor needed."""

from __future__ import annotations

import asyncio

from dovecote.dispatch import TurnQueue


class Job:
    def __init__(self, queue: TurnQueue, log: list[str], name: str, turns: int) -> None:
        self.queue, self.log, self.name, self.left = queue, log, name, turns

    def _run(self) -> None:
        self.log.append(self.name)
        self.left -= 1
        if self.left:
            self.queue.schedule(self)  # more work: back of the queue


async def test_turns_run_round_robin_in_one_loop_callback() -> None:
    loop = asyncio.get_running_loop()
    queue = TurnQueue(loop, 1.0)
    log: list[str] = []
    queue.schedule(Job(queue, log, "a", 3))
    queue.schedule(Job(queue, log, "b", 2))
    assert log == []  # nothing runs until the loop gets to the pump
    await asyncio.sleep(0)
    assert log == ["a", "b", "a", "b", "a"]


async def test_a_zero_slice_hands_the_loop_back_between_turns() -> None:
    loop = asyncio.get_running_loop()
    queue = TurnQueue(loop, 0.0)
    log: list[str] = []
    queue.schedule(Job(queue, log, "a", 10))
    await asyncio.sleep(0)
    assert 0 < len(log) < 10  # other callbacks get the loop before the work is done
    for _ in range(10):
        await asyncio.sleep(0)
    assert log == ["a"] * 10
