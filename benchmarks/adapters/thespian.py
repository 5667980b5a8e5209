"""Thespian: the in-process ``simpleSystemBase`` and the process-per-actor ``multiprocTCPBase``.

Thespian's external API (``tell``/``ask`` on the ActorSystem) is synchronous, so the
workload coroutines block. An actor cannot tell a tell from an ask, so questions are a
distinct message type (`Q`) that is answered, while plain ints are only counted.

The multi-process base runs every actor in its own OS process (about 2.5k tells/s and
10 ms per spawn here), so its cells are kept small, and the 1,000-actor workloads (fan-out,
ring) are not run on it. Its memory figure is the PSS delta of this process plus the
processes in the sessions the actor system started (its admin detaches with setsid).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from thespian.actors import Actor, ActorExitRequest, ActorSystem

from .._measure import (
    collect,
    latency_metrics,
    perf_counter,
    process_table,
    pss_bytes,
    time_spawn_and_stop,
)
from .._plan import GROUP
from ._base import BaseRuntime, Metrics

_TIMEOUT = 60.0


class Q:
    """A question: answered with the actor's count."""

    __slots__ = ()


class Link:
    __slots__ = ("target",)

    def __init__(self, target: Any) -> None:
        self.target = target


class TCounter(Actor):  # type: ignore[misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.n = 0

    def receiveMessage(self, message: Any, sender: Any) -> None:  # Thespian API
        if type(message) is int:
            self.n += 1
        elif type(message) is Q:
            self.n += 1
            self.send(sender, self.n)


class TCountdown(Actor):  # type: ignore[misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.n = 0

    def receiveMessage(self, message: Any, sender: Any) -> None:
        if type(message) is int:
            self.n += 1
        elif type(message) is Q:
            self.send(sender, self.n)


class TRingNode(Actor):  # type: ignore[misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.next: Any = None

    def receiveMessage(self, message: Any, sender: Any) -> None:
        if type(message) is tuple:
            hops, origin = message
            if origin is None:
                origin = sender
            if hops:
                self.send(self.next, (hops - 1, origin))
            else:
                self.send(origin, "done")
        elif type(message) is Link:
            self.next = message.target
            self.send(sender, "linked")


class _ThespianRuntime(BaseRuntime):
    loop_bound = False
    base = "simpleSystemBase"
    system: Any = None

    #: session ids of the processes the system started (the admin detaches with setsid)
    sessions: frozenset[int] = frozenset()

    async def open(self) -> None:
        before = set(process_table())
        self.system = ActorSystem(self.base, transientUnique=True)
        table = process_table()
        self.sessions = frozenset(table[pid][1] for pid in set(table) - before)

    def _own_processes(self) -> list[int]:
        """This process and every live process in a session the actor system started."""
        me = os.getpid()
        return [me] + [
            pid for pid, (_p, sid) in process_table().items() if sid in self.sessions and pid != me
        ]

    def _pss_tree(self) -> int:
        return sum(pss_bytes(pid) for pid in self._own_processes())

    async def close(self) -> None:
        if self.system is not None:
            self.system.shutdown()
            self.system = None

    def _ask(self, addr: Any, message: Any) -> Any:
        answer = self.system.ask(addr, message, _TIMEOUT)
        if answer is None:
            raise TimeoutError(f"no answer from {addr}")
        return answer

    async def wl_tell(self, n: int) -> Metrics:
        asys = self.system
        addr = asys.createActor(TCounter)
        self._ask(addr, Q())
        tell = asys.tell
        t0 = perf_counter()
        for i in range(n):
            tell(addr, i)
        count = self._ask(addr, Q())
        elapsed = perf_counter() - t0
        assert count == n + 2, count
        tell(addr, ActorExitRequest())
        return {"msgs_per_s": n / elapsed}

    async def wl_ask(self, n: int) -> Metrics:
        asys = self.system
        addr = asys.createActor(TCounter)
        self._ask(addr, Q())
        ask = asys.ask
        q = Q()
        lat = [0.0] * n
        t0 = perf_counter()
        for i in range(n):
            t = perf_counter()
            if ask(addr, q, _TIMEOUT) is None:
                raise TimeoutError("ask timed out")
            lat[i] = perf_counter() - t
        elapsed = perf_counter() - t0
        asys.tell(addr, ActorExitRequest())
        return latency_metrics(lat, elapsed)


class SimpleThespianRuntime(_ThespianRuntime):
    name = "thespian_simple"
    base = "simpleSystemBase"
    caps = {"tell": 100_000, "ask": 20_000, "fanout": 100_000, "spawn": 5_000, "ring": 100_000}

    async def wl_fanout(self, n: int) -> Metrics:
        # Simple-base tells run synchronously; one question per actor at the end confirms
        # that each has counted its share.
        asys = self.system
        per_actor = max(1, n // GROUP)
        addrs = [asys.createActor(TCountdown) for _ in range(GROUP)]
        tell = asys.tell
        t0 = perf_counter()
        for i in range(per_actor):
            for addr in addrs:
                tell(addr, i)
        q = Q()
        for addr in addrs:
            if self._ask(addr, q) != per_actor:
                raise AssertionError("fan-out lost messages")
        elapsed = perf_counter() - t0
        for addr in addrs:
            tell(addr, ActorExitRequest())
        return {"msgs_per_s": per_actor * GROUP / elapsed}

    async def wl_ring(self, n: int) -> Metrics:
        asys = self.system
        addrs = [asys.createActor(TRingNode) for _ in range(GROUP)]
        for i, addr in enumerate(addrs):
            self._ask(addr, Link(addrs[(i + 1) % GROUP]))
        t0 = perf_counter()
        if self._ask(addrs[0], (n, None)) != "done":
            raise AssertionError("ring answered something else")
        elapsed = perf_counter() - t0
        for addr in addrs:
            asys.tell(addr, ActorExitRequest())
        return {"hops_per_s": n / elapsed}

    async def wl_spawn(self, n: int) -> Metrics:
        asys = self.system
        addrs: list[Any] = []

        async def spawn_all() -> None:
            addrs.extend(asys.createActor(TCounter) for _ in range(n))
            self._ask(addrs[-1], Q())

        async def stop_all() -> None:
            exit_request = ActorExitRequest()
            for addr in addrs:
                asys.tell(addr, exit_request)  # processed synchronously on this base

        return await time_spawn_and_stop(spawn_all, stop_all, n)


class MultiprocThespianRuntime(_ThespianRuntime):
    name = "thespian_mp"
    base = "multiprocTCPBase"
    caps = {"tell": 1_000, "ask": 300, "spawn": 8}
    no_warmup = frozenset({"spawn"})

    async def wl_spawn(self, n: int) -> Metrics:
        asys = self.system
        before = len(self._own_processes())
        collect()
        pss0 = self._pss_tree()
        t0 = perf_counter()
        addrs = [asys.createActor(TCounter) for _ in range(n)]
        for addr in addrs:
            self._ask(addr, Q())
        t1 = perf_counter()
        pss1 = self._pss_tree()
        t2 = perf_counter()
        for addr in addrs:
            asys.tell(addr, ActorExitRequest())
        deadline = time.monotonic() + _TIMEOUT
        while len(self._own_processes()) > before:
            if time.monotonic() > deadline:
                raise TimeoutError("actor processes did not exit")
            await asyncio.sleep(0.001)
        t3 = perf_counter()
        return {
            "spawn_us": (t1 - t0) / n * 1e6,
            "idle_kib": (pss1 - pss0) / n / 1024,
            "stop_us": (t3 - t2) / n * 1e6,
        }
