"""The one place the actor runtime reads the time, so tests can drive it by hand."""

from __future__ import annotations

import time

__all__ = ["Clock", "SystemClock"]


class Clock:
    """Time source for supervision windows; subclass it to control time in tests."""

    __slots__ = ()

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards."""
        return time.monotonic()


SystemClock = Clock
