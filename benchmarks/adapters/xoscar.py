"""xoscar: actors in an in-process pool (``create_actor_pool(..., n_process=0)``).

Every xoscar call is awaited, tells included (``await ref.method.tell(...)``). With no
sub-processes the actors run on the benchmark's own loop, so completion latches are
plain futures kept in a module-level table (passing the future itself as an actor
argument would go through xoscar's serialization).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import xoscar as xo

from .._measure import perf_counter, time_asks, time_spawn_and_stop
from .._plan import GROUP
from ._base import BaseRuntime, Metrics

_SIGNALS: dict[int, asyncio.Future[None]] = {}
_LATCHES: dict[int, list[int]] = {}
_ids = itertools.count()


def _new_signal() -> tuple[int, asyncio.Future[None]]:
    key = next(_ids)
    future = asyncio.get_running_loop().create_future()
    _SIGNALS[key] = future
    return key, future


class XCounter(xo.Actor):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def inc(self, message: Any) -> int:
        self.n += 1
        return self.n


class XCountdown(xo.Actor):  # type: ignore[misc]
    def __init__(self, left: int, key: int) -> None:
        super().__init__()
        self.left = left
        self.key = key

    def inc(self, message: Any) -> None:
        self.left -= 1
        if not self.left:
            latch = _LATCHES[self.key]
            latch[0] -= 1
            if not latch[0]:
                _SIGNALS.pop(self.key).set_result(None)


class XRingNode(xo.Actor):  # type: ignore[misc]
    def __init__(self, key: int) -> None:
        super().__init__()
        self.key = key
        self.next: Any = None

    def link(self, ref: Any) -> None:
        self.next = ref

    async def hop(self, hops: int) -> None:
        if hops:
            await self.next.hop.tell(hops - 1)
        else:
            _SIGNALS.pop(self.key).set_result(None)


class XoscarRuntime(BaseRuntime):
    name = "xoscar"
    caps = {"tell": 20_000, "ask": 10_000, "fanout": 20_000, "spawn": 2_000, "ring": 10_000}
    pool: Any = None

    async def open(self) -> None:
        self.pool = await xo.create_actor_pool("127.0.0.1", n_process=0)
        await self.pool.__aenter__()

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.__aexit__(None, None, None)
            self.pool = None

    async def _create(self, cls: type, *args: Any) -> Any:
        return await xo.create_actor(cls, *args, address=self.pool.external_address)

    async def wl_tell(self, n: int) -> Metrics:
        ref = await self._create(XCounter)
        await ref.inc(None)
        tell = ref.inc.tell
        t0 = perf_counter()
        for i in range(n):
            await tell(i)
        count = await ref.inc(None)
        elapsed = perf_counter() - t0
        assert count == n + 2, count
        await xo.destroy_actor(ref)
        return {"msgs_per_s": n / elapsed}

    async def wl_ask(self, n: int) -> Metrics:
        ref = await self._create(XCounter)
        ask = ref.inc
        await ask(None)
        metrics = await time_asks(ask, n)
        await xo.destroy_actor(ref)
        return metrics

    async def wl_fanout(self, n: int) -> Metrics:
        per_actor = max(1, n // GROUP)
        key, done = _new_signal()
        _LATCHES[key] = [GROUP]
        refs = [await self._create(XCountdown, per_actor, key) for _ in range(GROUP)]
        tells = [r.inc.tell for r in refs]
        t0 = perf_counter()
        for i in range(per_actor):
            for tell in tells:
                await tell(i)
        await done
        elapsed = perf_counter() - t0
        for r in refs:
            await xo.destroy_actor(r)
        return {"msgs_per_s": per_actor * GROUP / elapsed}

    async def wl_ring(self, n: int) -> Metrics:
        key, done = _new_signal()
        refs = [await self._create(XRingNode, key) for _ in range(GROUP)]
        for i, ref in enumerate(refs):
            await ref.link(refs[(i + 1) % GROUP])
        t0 = perf_counter()
        await refs[0].hop.tell(n)
        await done
        elapsed = perf_counter() - t0
        for r in refs:
            await xo.destroy_actor(r)
        return {"hops_per_s": n / elapsed}

    async def wl_spawn(self, n: int) -> Metrics:
        refs: list[Any] = []

        async def spawn_all() -> None:
            refs.extend([await self._create(XCounter) for _ in range(n)])
            await refs[-1].inc(None)

        async def stop_all() -> None:
            for r in refs:
                await xo.destroy_actor(r)

        return await time_spawn_and_stop(spawn_all, stop_all, n)
