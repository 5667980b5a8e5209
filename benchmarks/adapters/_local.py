"""Workloads for the two baselines written here, shared by any minimal in-loop actor kit.

A *kit actor* is built as ``actor_cls(receive, loop)`` where ``receive(message)`` is a
plain function whose return value answers an ask. It exposes ``tell(message)`` (a plain
call), ``ask(message)`` (an awaitable), ``stop()`` and ``is_alive``. The workloads call
``tell`` through a local binding, exactly as a user of that kit would, so a baseline pays
for nothing but its own queue.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from .._measure import perf_counter, time_asks, time_fanout, time_spawn_and_stop
from .._plan import GROUP
from ._base import BaseRuntime, Metrics

STOP: Any = object()


class Ask:
    """A question in a kit actor's queue: the message and the future that gets the answer."""

    __slots__ = ("future", "message")

    def __init__(self, message: Any, future: asyncio.Future[Any]) -> None:
        self.message = message
        self.future = future


class KitActor(Protocol):
    is_alive: bool

    def tell(self, message: Any) -> None: ...

    def ask(self, message: Any) -> asyncio.Future[Any]: ...

    def stop(self) -> None: ...


class KitActorClass(Protocol):
    def __call__(self, receive: Any, loop: asyncio.AbstractEventLoop) -> KitActor: ...


# -- behaviours -----------------------------------------------------------------------


class Counter:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def receive(self, message: Any) -> int:
        self.n += 1
        return self.n


class Latch:
    """Counts actors down; resolves its future when the last one is done."""

    __slots__ = ("future", "remaining")

    def __init__(self, remaining: int, future: asyncio.Future[None]) -> None:
        self.remaining = remaining
        self.future = future

    def count_down(self) -> None:
        self.remaining -= 1
        if not self.remaining:
            self.future.set_result(None)


class Countdown:
    __slots__ = ("latch", "left")

    def __init__(self, left: int, latch: Latch) -> None:
        self.left = left
        self.latch = latch

    def receive(self, message: Any) -> None:
        self.left -= 1
        if not self.left:
            self.latch.count_down()


class RingNode:
    __slots__ = ("done", "next_tell")

    def __init__(self, done: asyncio.Future[None]) -> None:
        self.done = done
        self.next_tell: Any = None

    def receive(self, message: int) -> None:
        if message:
            self.next_tell(message - 1)
        else:
            self.done.set_result(None)


async def settle() -> None:
    """Give freshly spawned actors a few loop turns to start before a clock runs."""
    for _ in range(3):
        await asyncio.sleep(0)


async def wait_all_dead(actors: list[Any]) -> None:
    """Yield to the loop until every actor reports ``is_alive`` false (oldest first)."""
    i, n = 0, len(actors)
    while i < n:
        if actors[i].is_alive:
            await asyncio.sleep(0)
        else:
            i += 1


class KitRuntime(BaseRuntime):
    """Runs the five common workloads on a kit actor class."""

    actor_cls: KitActorClass

    async def wl_tell(self, n: int) -> Metrics:
        loop = asyncio.get_running_loop()
        actor = self.actor_cls(Counter().receive, loop)
        await actor.ask(None)
        tell = actor.tell
        t0 = perf_counter()
        for i in range(n):
            tell(i)
        count = await actor.ask(None)
        elapsed = perf_counter() - t0
        assert count == n + 2, count
        actor.stop()
        return {"msgs_per_s": n / elapsed}

    async def wl_ask(self, n: int) -> Metrics:
        loop = asyncio.get_running_loop()
        actor = self.actor_cls(Counter().receive, loop)
        ask = actor.ask
        await ask(None)
        metrics = await time_asks(ask, n)
        actor.stop()
        return metrics

    async def wl_fanout(self, n: int) -> Metrics:
        loop = asyncio.get_running_loop()
        per_actor = max(1, n // GROUP)
        done: asyncio.Future[None] = loop.create_future()
        latch = Latch(GROUP, done)
        actors = [self.actor_cls(Countdown(per_actor, latch).receive, loop) for _ in range(GROUP)]
        tells = [a.tell for a in actors]
        await settle()
        metrics = await time_fanout(tells, per_actor, done)
        for a in actors:
            a.stop()
        return metrics

    async def wl_ring(self, n: int) -> Metrics:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        nodes = [RingNode(done) for _ in range(GROUP)]
        actors = [self.actor_cls(node.receive, loop) for node in nodes]
        for i, node in enumerate(nodes):
            node.next_tell = actors[(i + 1) % GROUP].tell
        await settle()
        t0 = perf_counter()
        actors[0].tell(n)
        await done
        elapsed = perf_counter() - t0
        for a in actors:
            a.stop()
        # n + 1 messages: n hops after the first delivery
        return {"hops_per_s": n / elapsed}

    async def wl_spawn(self, n: int) -> Metrics:
        loop = asyncio.get_running_loop()
        cls = self.actor_cls
        actors: list[KitActor] = []

        async def spawn_all() -> None:
            actors.extend(cls(Counter().receive, loop) for _ in range(n))
            await actors[-1].ask(None)

        async def stop_all() -> None:
            for a in actors:
                a.stop()
            await wait_all_dead(actors)

        await asyncio.sleep(0)
        return await time_spawn_and_stop(spawn_all, stop_all, n)
