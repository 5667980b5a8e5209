"""The turn queue: turns run back to back in one loop callback, within a time slice."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from actor_kit import TIMEOUT

from dovecote import Actor, ActorRef, ActorSystem


class SelfLooper(Actor):
    """Tells itself ``left`` more times, then resolves ``done``."""

    def __init__(self, left: int, done: asyncio.Future[int]) -> None:
        super().__init__()
        self.left = left
        self.handled = 0
        self.done = done

    def on_receive(self, message: Any) -> int:
        self.handled += 1
        if self.left:
            self.left -= 1
            self.context.self.tell("again")
        elif not self.done.done():
            self.done.set_result(self.handled)
        return self.handled


class Relay(Actor):
    """Passes a countdown to ``next``; resolves ``done`` at zero."""

    def __init__(self, done: asyncio.Future[None]) -> None:
        super().__init__()
        self.next: ActorRef | None = None
        self.done = done

    def on_receive(self, message: Any) -> None:
        if isinstance(message, ActorRef):
            self.next = message
        elif message:
            assert self.next is not None
            self.next.tell(message - 1)
        else:
            self.done.set_result(None)


async def test_an_actor_telling_itself_forever_does_not_starve_other_tasks() -> None:
    loop = asyncio.get_running_loop()
    async with ActorSystem("slices", dispatch_slice=0.001) as system:
        done: asyncio.Future[int] = loop.create_future()
        total = 2_000_000
        looper_actor = SelfLooper(total, done)
        looper = system.spawn(lambda: looper_actor)
        looper.tell("go")
        await asyncio.sleep(0)  # the looper starts and gets going
        await asyncio.sleep(0)  # this task is back only once the pump yields the loop
        # ...which happened long before the looper was done (~1 s of work at full speed)
        assert 0 < looper_actor.handled < total // 4
        assert await looper.ask("still responsive?", timeout=TIMEOUT) < total
        looper.stop()


async def test_a_chain_of_tells_between_actors_runs_without_a_loop_pass_per_hop() -> None:
    loop = asyncio.get_running_loop()
    async with ActorSystem("chain") as system:
        done: asyncio.Future[None] = loop.create_future()
        relays = [system.spawn(lambda: Relay(done)) for _ in range(50)]
        for i, relay in enumerate(relays):
            await relay.ask(relays[(i + 1) % len(relays)], timeout=TIMEOUT)
        passes = 0

        async def count_loop_passes() -> None:
            nonlocal passes
            while not done.done():
                passes += 1
                await asyncio.sleep(0)

        counter = asyncio.create_task(count_loop_passes())
        hops = 20_000
        relays[0].tell(hops)
        await asyncio.wait_for(done, TIMEOUT)
        await counter
        # one loop pass per hop would give ~hops passes; the pump needs one per slice
        assert passes < hops / 20


async def test_a_zero_slice_still_delivers_everything_in_order() -> None:
    loop = asyncio.get_running_loop()
    async with ActorSystem("zero", dispatch_slice=0, throughput=1) as system:
        done: asyncio.Future[int] = loop.create_future()
        looper = system.spawn(lambda: SelfLooper(1_000, done))
        looper.tell("go")
        assert await asyncio.wait_for(done, TIMEOUT) == 1_001


@pytest.mark.parametrize("bad", [-0.001, math.nan, math.inf, True, "0.002", None])
async def test_dispatch_slice_must_be_a_finite_non_negative_number(bad: Any) -> None:
    with pytest.raises(ValueError, match="dispatch_slice"):
        ActorSystem("bad", dispatch_slice=bad)
