"""Ask timeouts share one timer per timeout value; these pin down the behaviour."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from dovecote import Actor, AskTimeoutError


class Silent(Actor):
    """Never answers: each message waits on an event that is never set."""

    def __init__(self) -> None:
        super().__init__()
        self.never = asyncio.Event()

    async def on_receive(self, message: Any) -> Any:
        await self.never.wait()


class Echo(Actor):
    def on_receive(self, message: Any) -> Any:
        return message


async def test_a_shorter_timeout_made_later_expires_before_a_longer_one(system):
    ref = system.spawn(Silent, "silent")
    slow = asyncio.ensure_future(ref.ask("slow", timeout=2.0))
    fast = asyncio.ensure_future(ref.ask("fast", timeout=0.05))
    with pytest.raises(AskTimeoutError, match=r"0\.05s"):
        await asyncio.wait_for(fast, 1.0)
    assert not slow.done()
    slow.cancel()


async def test_asks_with_the_same_timeout_expire_in_the_order_they_were_made(system):
    ref = system.spawn(Silent, "silent")
    order: list[str] = []

    async def ask(name: str) -> None:
        with pytest.raises(AskTimeoutError):
            await ref.ask(name, timeout=0.05)
        order.append(name)

    await asyncio.wait_for(asyncio.gather(ask("a"), ask("b"), ask("c")), 2.0)
    assert order == ["a", "b", "c"]


async def test_answered_asks_do_not_pile_up_in_the_timeout_queue(system):
    ref = system.spawn(Echo, "echo")
    for i in range(1_000):
        assert await ref.ask(i, timeout=30.0) == i
    lanes = system._ask_timeouts._lanes
    assert len(lanes[30.0].entries) <= 2


async def test_an_infinite_timeout_never_expires_and_arms_no_timer(system):
    ref = system.spawn(Echo, "echo")
    assert await ref.ask("x", timeout=math.inf) == "x"
    assert math.inf not in system._ask_timeouts._lanes


async def test_an_ask_answered_just_in_time_is_not_failed_later(system):
    ref = system.spawn(Echo, "echo")
    assert await ref.ask("first", timeout=0.05) == "first"
    await asyncio.sleep(0.08)  # past the first deadline: its timer fires on a done future
    assert await ref.ask("second", timeout=0.05) == "second"


async def test_asks_alternating_between_timeouts_each_expire_on_their_own(system):
    ref = system.spawn(Silent, "silent")
    first = asyncio.ensure_future(ref.ask("first", timeout=0.05))
    long = asyncio.ensure_future(ref.ask("long", timeout=5.0))
    again = asyncio.ensure_future(ref.ask("again", timeout=0.05))
    for fast in (first, again):
        with pytest.raises(AskTimeoutError, match=r"0\.05s"):
            await asyncio.wait_for(fast, 1.0)
    assert not long.done()
    long.cancel()
