"""Pykka: one thread per actor (``ThreadingActor``); tell/ask from the benchmark thread.

Pykka does not use the event loop, so its workload coroutines block (nothing else runs
on the benchmark's loop) and it is measured on the default loop only.
"""

from __future__ import annotations

import threading
from typing import Any

import pykka

from .._measure import latency_metrics, perf_counter, time_spawn_and_stop
from .._plan import GROUP
from ._base import BaseRuntime, Metrics

_TIMEOUT = 120.0


class _Counter(pykka.ThreadingActor):
    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def on_receive(self, message: Any) -> int:
        self.n += 1
        return self.n


class _Latch:
    def __init__(self, remaining: int) -> None:
        self.remaining = remaining
        self.lock = threading.Lock()
        self.event = threading.Event()

    def count_down(self) -> None:
        with self.lock:
            self.remaining -= 1
            if not self.remaining:
                self.event.set()


class _Countdown(pykka.ThreadingActor):
    def __init__(self, left: int, latch: _Latch) -> None:
        super().__init__()
        self.left = left
        self.latch = latch

    def on_receive(self, message: Any) -> None:
        self.left -= 1
        if not self.left:
            self.latch.count_down()


class _RingNode(pykka.ThreadingActor):
    def __init__(self, done: threading.Event) -> None:
        super().__init__()
        self.done = done
        self.next: Any = None

    def on_receive(self, message: Any) -> None:
        if type(message) is int:
            if message:
                self.next.tell(message - 1)
            else:
                self.done.set()
        else:
            self.next = message[1]


def _stop_all(refs: list[Any]) -> None:
    futures = [ref.stop(block=False) for ref in refs]
    for f in futures:
        f.get(timeout=_TIMEOUT)


class PykkaRuntime(BaseRuntime):
    name = "pykka"
    loop_bound = False
    # a warm-up round of the 1,000-actor workloads would start 1,000 more threads
    no_warmup = frozenset({"fanout", "ring", "spawn"})
    caps = {"tell": 100_000, "ask": 10_000, "fanout": 20_000, "spawn": 1_000, "ring": 30_000}

    async def close(self) -> None:
        pykka.ActorRegistry.stop_all()

    async def wl_tell(self, n: int) -> Metrics:
        ref = _Counter.start()
        ref.ask(None, timeout=_TIMEOUT)
        tell = ref.tell
        t0 = perf_counter()
        for i in range(n):
            tell(i)
        ref.ask(None, timeout=_TIMEOUT)
        elapsed = perf_counter() - t0
        ref.stop()
        return {"msgs_per_s": n / elapsed}

    async def wl_ask(self, n: int) -> Metrics:
        ref = _Counter.start()
        ask = ref.ask
        ask(None, timeout=_TIMEOUT)
        lat = [0.0] * n
        t0 = perf_counter()
        for i in range(n):
            t = perf_counter()
            ask(i, timeout=_TIMEOUT)
            lat[i] = perf_counter() - t
        elapsed = perf_counter() - t0
        ref.stop()
        return latency_metrics(lat, elapsed)

    async def wl_fanout(self, n: int) -> Metrics:
        per_actor = max(1, n // GROUP)
        latch = _Latch(GROUP)
        refs = [_Countdown.start(per_actor, latch) for _ in range(GROUP)]
        tells = [r.tell for r in refs]
        t0 = perf_counter()
        for i in range(per_actor):
            for tell in tells:
                tell(i)
        if not latch.event.wait(_TIMEOUT):
            raise TimeoutError("fan-out did not finish")
        elapsed = perf_counter() - t0
        _stop_all(refs)
        return {"msgs_per_s": per_actor * GROUP / elapsed}

    async def wl_ring(self, n: int) -> Metrics:
        done = threading.Event()
        refs = [_RingNode.start(done) for _ in range(GROUP)]
        for i, ref in enumerate(refs):
            ref.ask(("link", refs[(i + 1) % GROUP]), timeout=_TIMEOUT)
        t0 = perf_counter()
        refs[0].tell(n)
        if not done.wait(_TIMEOUT):
            raise TimeoutError("ring did not finish")
        elapsed = perf_counter() - t0
        _stop_all(refs)
        return {"hops_per_s": n / elapsed}

    async def wl_spawn(self, n: int) -> Metrics:
        refs: list[Any] = []

        async def spawn_all() -> None:
            refs.extend(_Counter.start() for _ in range(n))
            refs[-1].ask(None, timeout=_TIMEOUT)

        async def stop_all() -> None:
            _stop_all(refs)

        return await time_spawn_and_stop(spawn_all, stop_all, n)
