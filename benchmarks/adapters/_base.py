"""The seam every runtime adapter fills: a session plus one coroutine per workload.

An adapter is a class with a ``name``, an ``open()``/``close()`` pair around a session and
one ``async`` method per workload it supports. Runtimes that do not use the event loop
(threads, processes) still expose coroutines; their bodies simply block, which is fine
because nothing else runs on the benchmark's loop.

Each workload method returns a flat ``dict`` of metric name to float. The metric names
are fixed per workload (see ``benchmarks._plan.WORKLOADS``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, runtime_checkable

Metrics = dict[str, float]


class Unavailable(Exception):
    """The runtime cannot be imported or started here (reported in the table, never fatal)."""


@runtime_checkable
class Runtime(Protocol):
    """What the cell runner needs from an adapter."""

    name: str
    #: True when the runtime's actors run on the benchmark's event loop, so uvloop
    #: cells make sense; thread / process based peers run on the default loop only.
    loop_bound: bool

    def supports(self, workload: str) -> bool: ...

    def max_size(self, workload: str) -> int | None:
        """An upper bound for the workload size (slow peers), or None."""
        ...

    def wants_warmup(self, workload: str) -> bool:
        """False where a warm-up round would cost more than it teaches (threads, processes)."""
        ...

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    def workload(self, name: str) -> Callable[[int], Awaitable[Metrics]]: ...


class BaseRuntime:
    """Default plumbing: workloads are the ``wl_<name>`` coroutine methods."""

    name = "?"
    loop_bound = True
    #: per-workload size caps for slow runtimes (at full size; scaled down with it)
    caps: dict[str, int] = {}
    #: workloads run without a warm-up round
    no_warmup: frozenset[str] = frozenset()

    def supports(self, workload: str) -> bool:
        return callable(getattr(self, f"wl_{workload}", None))

    def max_size(self, workload: str) -> int | None:
        return self.caps.get(workload)

    def wants_warmup(self, workload: str) -> bool:
        return workload not in self.no_warmup

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def workload(self, name: str) -> Callable[[int], Awaitable[Metrics]]:
        fn: Callable[[int], Awaitable[Metrics]] = getattr(self, f"wl_{name}")
        return fn
