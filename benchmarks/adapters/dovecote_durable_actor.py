"""dovecote's durable actor row: tell → handled through a SQLite store, beside in memory.

Throughput: N tells to one actor, the clock stops when the actor has handled the N-th
(every message was written, claimed, handled; commits trail by one transaction).
Latency: one tell at a time, timed from ``tell`` until the handler has run. The same two
figures for an ordinary in-memory actor run in the same cell, so they sit side by side.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from dovecote import Actor, ActorOptions, ActorSystem
from dovecote.durable import open_store

from .._measure import percentile, perf_counter
from ._base import Metrics

#: latency samples per figure (each one is a store round trip or more)
LATENCY_SAMPLES = 300


class _Signal(Actor):
    """Counts messages; resolves the waiter once ``target`` have been handled."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0
        self.target = 0
        self.waiter: asyncio.Future[None] | None = None

    def on_receive(self, message: Any) -> None:
        self.n += 1
        if self.n == self.target and self.waiter is not None:
            self.waiter.set_result(None)


async def _measure(ref: Any, actor: _Signal, n: int) -> tuple[float, float, float]:
    loop = asyncio.get_running_loop()

    async def handled(count: int) -> None:
        actor.target = actor.n + count
        actor.waiter = loop.create_future()
        await actor.waiter

    for _ in range(2):  # warm up: the store mailbox exists, first claims made
        wait = asyncio.ensure_future(handled(1))
        ref.tell(0)
        await wait
    wait = asyncio.ensure_future(handled(n))
    t0 = perf_counter()
    for i in range(n):
        ref.tell(i)
    await wait
    rate = n / (perf_counter() - t0)
    lat = []
    for i in range(min(LATENCY_SAMPLES, n)):
        wait = asyncio.ensure_future(handled(1))
        t = perf_counter()
        ref.tell(i)
        await wait
        lat.append(perf_counter() - t)
    lat.sort()
    return rate, percentile(lat, 50) * 1e6, percentile(lat, 99) * 1e6


class DovecoteDurableActorWorkloads:
    """Mixed into the dovecote adapter: the ``durable_actor`` workload."""

    async def wl_durable_actor(self, n: int) -> Metrics:
        out: Metrics = {}
        instances: list[_Signal] = []

        def factory() -> _Signal:
            instances.append(_Signal())
            return instances[-1]

        with tempfile.TemporaryDirectory(prefix="bench-durable-actor-") as folder:
            for durability in ("full", "normal"):
                url = f"sqlite:///{Path(folder) / f'{durability}.db'}"
                async with (
                    open_store(url, sweep_interval=None, durability=durability) as store,
                    ActorSystem("bench-durable") as system,
                ):
                    # the default claim_ahead (16)
                    options = ActorOptions.create().with_durable_mailbox(store, "q")
                    ref = system.spawn(factory, "durable", options)
                    await ref.ask(None)  # started
                    rate, p50, p99 = await _measure(ref, instances[-1], n)
                    out[f"{durability}_per_s"] = rate
                    out[f"{durability}_p50_us"] = p50
                    out[f"{durability}_p99_us"] = p99
            async with ActorSystem("bench-memory") as system:
                ref = system.spawn(factory, "memory")
                await ref.ask(None)
                rate, p50, p99 = await _measure(ref, instances[-1], n)
                out["memory_per_s"], out["memory_p50_us"], out["memory_p99_us"] = rate, p50, p99
        return out
