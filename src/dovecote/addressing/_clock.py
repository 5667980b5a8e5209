"""The one place the post office reads time.

Every lease deadline, backoff wait, watchdog and activity timestamp goes through a
:class:`Clock`, so a test (or a future test kit) can drive time by hand with
:class:`ManualClock` instead of sleeping.
"""

from __future__ import annotations

import asyncio
import datetime
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "SystemClock", "iso_timestamp"]


@runtime_checkable
class Clock(Protocol):
    """What the post office needs from time: two readings and a way to wait."""

    def now(self) -> float:
        """Monotonic seconds; only differences are meaningful (leases, backoff)."""
        ...

    def wall(self) -> float:
        """Seconds since the Unix epoch; used for ISO 8601 activity timestamps."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of this clock's time (cancellable)."""
        ...


class SystemClock:
    """The real clock: :func:`time.monotonic`, :func:`time.time`, :func:`asyncio.sleep`."""

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


class ManualClock:
    """A clock that moves only when :meth:`advance` is called.

    ``sleep`` parks the caller until the clock has been advanced past its deadline,
    so tests decide exactly when a lease expires or a backoff ends.
    """

    __slots__ = ("_changed", "_now", "_sleepers", "_wall_offset")

    def __init__(self, start: float = 0.0, *, wall_start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._wall_offset = wall_start - start
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []
        self._changed: asyncio.Event | None = None

    def now(self) -> float:
        """The manual monotonic reading."""
        return self._now

    def wall(self) -> float:
        """The manual wall reading (moves together with :meth:`now`)."""
        return self._now + self._wall_offset

    @property
    def sleeper_count(self) -> int:
        """How many ``sleep`` calls are waiting for the clock to move."""
        return len(self._sleepers)

    async def sleep(self, seconds: float) -> None:
        """Wait until the clock has been advanced by at least ``seconds``."""
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (self._now + seconds, future)
        self._sleepers.append(entry)
        self._notify()
        try:
            await future
        finally:
            if entry in self._sleepers:
                self._sleepers.remove(entry)
                self._notify()

    def advance(self, seconds: float) -> None:
        """Move time forward and wake every sleeper whose deadline has passed."""
        if seconds < 0:
            raise ValueError("a clock cannot go backwards")
        self._now += seconds
        due = [entry for entry in self._sleepers if entry[0] <= self._now]
        for entry in due:
            self._sleepers.remove(entry)
            if not entry[1].done():
                entry[1].set_result(None)
        self._notify()

    async def wait_for_sleepers(self, count: int = 1) -> None:
        """Return once at least ``count`` sleepers are parked (wrap in a timeout)."""
        while len(self._sleepers) < count:
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None


def iso_timestamp(wall: float) -> str:
    """Format epoch seconds as an ISO 8601 UTC timestamp (millisecond precision)."""
    moment = datetime.datetime.fromtimestamp(wall, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
