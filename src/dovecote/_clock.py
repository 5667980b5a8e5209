"""The one clock: every timer, window, lease and timeout in dovecote reads time here.

``SystemClock`` is real time on the running event loop. ``ManualClock`` moves only when a
test calls :meth:`ManualClock.advance`, which runs every timer that falls due, in due-time
order, with no real sleeping. ``ActorSystem(clock=...)`` hands one clock to timers,
supervision windows, backoff, ask timeouts and the post office; ``open_store(clock=...)``
to leases, delays, TTL and retention. Like ``dovecote._errors``, this module is shared by
every layer and imports nothing else of dovecote.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "SystemClock", "TimerHandle"]


@runtime_checkable
class TimerHandle(Protocol):
    """What ``call_later`` returns: something that can be cancelled."""

    def cancel(self) -> None:
        """Do not run the callback (a no-op once it ran)."""
        ...


@runtime_checkable
class Clock(Protocol):
    """Time as dovecote sees it: two readings, a wait and a timer."""

    def now(self) -> float:
        """Monotonic seconds; only differences are meaningful."""
        ...

    def wall(self) -> float:
        """Seconds since the Unix epoch (timestamps, TTLs stored in a database)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of this clock's time (cancellable)."""
        ...

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        """Run ``callback(*args)`` once ``delay`` seconds of this clock's time have passed."""
        ...


class SystemClock:
    """Real time: :func:`time.monotonic`, :func:`time.time` and the running event loop."""

    __slots__ = ()

    def now(self) -> float:
        """Monotonic seconds."""
        return time.monotonic()

    def wall(self) -> float:
        """Seconds since the epoch."""
        return time.time()

    async def sleep(self, seconds: float) -> None:
        """Sleep on the running event loop."""
        await asyncio.sleep(max(0.0, seconds))

    def call_later(
        self, delay: float, callback: Callable[..., object], *args: Any
    ) -> asyncio.TimerHandle:
        """``loop.call_later`` on the running loop."""
        return asyncio.get_running_loop().call_later(max(0.0, delay), callback, *args)


class _ManualTimer:
    __slots__ = ("args", "callback", "cancelled", "due")

    def __init__(self, due: float, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
        self.due = due
        self.callback = callback
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A clock that moves only when :meth:`advance` is called.

    Timers (``call_later``) and sleepers wait until the clock has been advanced past their
    due time; ``advance(d)`` runs every one that falls due within ``d``, in due-time order,
    including timers that those callbacks schedule. A timer with a delay of 0 runs at the
    next ``advance`` (``advance(0)`` included). ``wall()`` moves together with ``now()``.
    """

    __slots__ = ("_changed", "_now", "_seq", "_timers", "_wall_offset")

    def __init__(self, start: float = 0.0, *, wall_start: float = 1_700_000_000.0) -> None:
        self._now = float(start)
        self._wall_offset = wall_start - start
        self._timers: list[tuple[float, int, _ManualTimer]] = []
        self._seq = itertools.count()
        self._changed: asyncio.Event | None = None

    def now(self) -> float:
        """The manual monotonic reading."""
        return self._now

    def wall(self) -> float:
        """The manual wall reading (moves together with :meth:`now`)."""
        return self._now + self._wall_offset

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        """Run ``callback(*args)`` when the clock has been advanced by ``delay``."""
        return self._add(delay, callback, args)

    def _add(
        self, delay: float, callback: Callable[..., object], args: tuple[Any, ...]
    ) -> _ManualTimer:
        timer = _ManualTimer(self._now + max(0.0, delay), callback, args)
        heapq.heappush(self._timers, (timer.due, next(self._seq), timer))
        self._notify()
        return timer

    @property
    def sleeper_count(self) -> int:
        """How many timers and ``sleep`` calls wait for the clock to move."""
        return sum(1 for _, _, t in self._timers if not t.cancelled)

    @property
    def next_due(self) -> float | None:
        """When the earliest pending timer falls due (``None`` if there is none)."""
        for due, _, timer in sorted(self._timers):
            if not timer.cancelled:
                return due
        return None

    async def sleep(self, seconds: float) -> None:
        """Wait until the clock has been advanced by at least ``seconds``."""
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        timer = self._add(seconds, wake, ())
        try:
            await future
        finally:
            if not timer.cancelled:  # woken by cancellation, not by the clock
                timer.cancel()
                self._notify()

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``, running every timer that falls due, in order."""
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ValueError(f"advance() takes a number of seconds, got {seconds!r}")
        if not seconds >= 0 or math.isinf(seconds):
            raise ValueError(f"a clock cannot go backwards or to infinity, got {seconds!r}")
        target = self._now + seconds
        timers = self._timers
        while timers and timers[0][0] <= target:
            due, _, timer = heapq.heappop(timers)
            if timer.cancelled:
                continue
            self._now = max(self._now, due)
            timer.cancelled = True  # ran: a later cancel() is a no-op
            timer.callback(*timer.args)
        self._now = target
        self._notify()

    async def wait_for_sleepers(self, count: int = 1) -> None:
        """Return once at least ``count`` timers or sleepers wait (wrap it in a timeout)."""
        while self.sleeper_count < count:
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None
