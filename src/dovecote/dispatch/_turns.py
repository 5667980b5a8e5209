"""The turn queue: anything with work takes its turn inside one event-loop callback.

It schedules any object with a ``_run()`` turn (the actor cells, in practice) and knows
nothing about actors. Scheduling appends the object here instead of making a loop callback
per turn. One callback (the pump) runs the queued turns in order; an actor whose turn ended
with messages left (its ``throughput`` spent) queues again at the back, so actors take turns
round-robin, and an actor told something during the pump gets its turn in the same pump.
The pump hands the event loop back once the queue is empty or after ``slice`` seconds,
so other tasks and I/O wait at most about one slice (plus the turn in progress).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import deque
from typing import Protocol

__all__ = ["DEFAULT_SLICE", "HasTurn", "TurnQueue"]


class HasTurn(Protocol):
    """What the turn queue runs: one turn of work, on the loop thread."""

    def _run(self) -> None: ...

#: Seconds of back-to-back turns before the pump yields the event loop.
DEFAULT_SLICE = 0.002

_perf = time.perf_counter


class TurnQueue:
    """Turns waiting to run, and the one loop callback that runs them."""

    __slots__ = ("_call_pump", "_cells", "_pending", "_slice")

    def __init__(self, loop: asyncio.AbstractEventLoop, slice_seconds: float) -> None:
        self._cells: deque[HasTurn] = deque()
        self._pending = False  # a pump is scheduled or running
        self._slice = slice_seconds
        self._call_pump = functools.partial(loop.call_soon, self._pump)

    def schedule(self, cell: HasTurn) -> None:
        """Queue ``cell`` for a turn (the caller marks it scheduled, so it is queued once)."""
        self._cells.append(cell)
        if not self._pending:
            self._pending = True
            self._call_pump()

    def _pump(self) -> None:
        cells = self._cells
        popleft = cells.popleft
        try:
            popleft()._run()
            if cells:
                deadline = _perf() + self._slice
                while cells:
                    popleft()._run()
                    if _perf() >= deadline:
                        break
        finally:
            if cells:
                self._call_pump()
            else:
                self._pending = False
