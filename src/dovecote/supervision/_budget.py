"""The restart allowance of one child: restarts counted in a sliding time window."""

from __future__ import annotations

import math

__all__ = ["RestartStats"]


class RestartStats:
    """Times of one child's recent restarts; owned by the parent, one per child.

    This is the only restart-budget implementation: every strategy asks it through
    :meth:`request_restart`. Times are the caller's clock readings (seconds, e.g.
    ``loop.time()``) and are expected not to go backwards; a reading older than the last
    recorded restart is treated as equal to it, which only makes the budget stricter.
    """

    # A list, not a deque: it never holds more than max_restarts entries and an empty list is
    # far smaller than an empty deque, which matters with one instance per child.
    __slots__ = ("timestamps",)

    timestamps: list[float]
    """Restart times, oldest first; entries outside the window go at the next check."""

    def __init__(self) -> None:
        self.timestamps = []

    def __repr__(self) -> str:
        return f"RestartStats(timestamps={self.timestamps!r})"

    def restarts_within(self, now: float, within: float) -> int:
        """Forget restarts at or before ``now - within`` and count the ones left."""
        if math.isnan(now):
            raise ValueError("now must be a number, got nan")
        horizon = now - within
        timestamps = self.timestamps
        expired = 0
        for stamp in timestamps:
            if stamp > horizon:
                break
            expired += 1
        if expired:
            del timestamps[:expired]
        return len(timestamps)

    def request_restart(self, now: float, max_restarts: int, within: float) -> int | None:
        """Record a restart at ``now`` if the window has room for it.

        Returns ``n``, the number of restarts already in the window (0 for the first one),
        or ``None`` when ``max_restarts`` restarts already happened in the last ``within``
        seconds; a refused restart is not recorded.
        """
        n = self.restarts_within(now, within)
        if n >= max_restarts:
            return None
        if n and now < self.timestamps[-1]:
            now = self.timestamps[-1]
        self.timestamps.append(now)
        return n

    def reset(self) -> None:
        """Forget every recorded restart."""
        self.timestamps.clear()
