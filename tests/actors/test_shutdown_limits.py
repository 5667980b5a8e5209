"""shutdown honours its timeout whatever the backlog; stopping N actors costs O(N)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from actor_kit import TIMEOUT, Hold, Recorder

from dovecote import (
    Actor,
    ActorSystem,
    DeadLetter,
    DovecoteError,
    ShutdownTimeoutError,
)


class LoopWatch:
    """Records the longest gap between ticks of a 10 ms timer: how long the loop was blocked."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.last = self.loop.time()
        self.longest = 0.0
        self.handle = self.loop.call_later(0.01, self._tick)

    def _tick(self) -> None:
        now = self.loop.time()
        self.longest = max(self.longest, now - self.last)
        self.last = now
        self.handle = self.loop.call_later(0.01, self._tick)

    def stop(self) -> None:
        self.handle.cancel()


async def test_shutdown_returns_in_time_and_keeps_the_loop_running_with_a_large_backlog():
    backlog = 500_000  # dead-lettering it in one callback blocked the loop for ~0.6 s
    system = ActorSystem("backlog")
    counted = asyncio.Event()
    seen = [0]

    def count(_: DeadLetter) -> None:
        seen[0] += 1
        if seen[0] == backlog:
            counted.set()

    system.event_stream.subscribe(count, DeadLetter)
    ref = system.spawn(lambda: Recorder(_Discard()), "busy")
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    tell = ref.tell
    for i in range(backlog):
        tell(i)
    watch = LoopWatch()
    loop = asyncio.get_running_loop()
    started = loop.time()
    shutdown = asyncio.ensure_future(system.shutdown(timeout=0.2))
    await asyncio.sleep(0)
    hold.release.set()
    with contextlib.suppress(ShutdownTimeoutError):  # either outcome is in time
        await asyncio.wait_for(shutdown, TIMEOUT * 5)
    elapsed = loop.time() - started
    assert elapsed < 0.2 + 0.5 + 0.5, f"shutdown(timeout=0.2) took {elapsed:.2f}s"
    await asyncio.wait_for(counted.wait(), 30.0)  # nothing is lost, only later
    watch.stop()
    assert watch.longest < 0.25, f"the loop was blocked for {watch.longest:.2f}s"
    assert system.dead_letters_count == backlog


class _Discard:
    def add(self, item: Any) -> None:
        return None


class Stubborn(Actor):
    """Its handler ignores cancellation: it cannot be stopped until released."""

    def __init__(self, release: asyncio.Event, started: asyncio.Event) -> None:
        super().__init__()
        self.release = release
        self.started = started

    async def on_receive(self, message: Any) -> Any:
        self.started.set()
        while not self.release.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await self.release.wait()
        return None


async def test_a_handler_that_resists_cancellation_makes_shutdown_raise_shutdown_timeout():
    release, started = asyncio.Event(), asyncio.Event()
    system = ActorSystem("stubborn")
    ref = system.spawn(lambda: Stubborn(release, started), "stubborn")
    ref.tell("work")
    await asyncio.wait_for(started.wait(), TIMEOUT)
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(ShutdownTimeoutError) as caught:
        await asyncio.wait_for(system.shutdown(timeout=0.1), TIMEOUT * 2)
    assert loop.time() - began < 0.1 + 0.5 + 0.5
    assert isinstance(caught.value, TimeoutError)
    assert isinstance(caught.value, DovecoteError)
    assert caught.value.actors == ("/user/stubborn",)
    assert "/user/stubborn" in str(caught.value)
    again = loop.time()
    await asyncio.wait_for(system.shutdown(), TIMEOUT)  # returns at once, does not hang
    assert loop.time() - again < 0.1
    release.set()
    await asyncio.wait_for(ref.stop(), TIMEOUT)


async def test_a_shutdown_that_waits_for_one_in_progress_returns_with_it():
    system = ActorSystem("twice")
    system.spawn(Idle, "idle")
    first = asyncio.ensure_future(system.shutdown())
    second = asyncio.ensure_future(system.shutdown())
    await asyncio.wait_for(asyncio.gather(first, second), TIMEOUT)


class Idle(Actor):
    pass


class CountingChildren(dict):  # type: ignore[type-arg]
    """A parent's children dict that counts full scans (values() calls)."""

    scans = 0

    def values(self) -> Any:
        CountingChildren.scans += 1
        return super().values()


class Parent(Actor):
    def on_receive(self, message: Any) -> Any:
        for _ in range(message):
            self.context.spawn(Idle)
        cell = self.context
        cell._children = CountingChildren(cell._children)  # type: ignore[attr-defined]
        return message


async def test_stopping_a_parent_does_not_scan_its_children_at_each_termination(system):
    # Today's O(N) bookkeeping: a count of stopping children. The old code looked over
    # every child at each child's termination: O(N^2) for a parent with N children.
    children = 2_000
    parent = system.spawn(Parent, "parent")
    assert await parent.ask(children, timeout=TIMEOUT) == children
    CountingChildren.scans = 0
    await asyncio.wait_for(parent.stop(), TIMEOUT * 5)
    assert CountingChildren.scans <= 3, CountingChildren.scans
