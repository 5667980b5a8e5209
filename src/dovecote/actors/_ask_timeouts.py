"""Ask timeouts without a timer handle per ask.

``loop.call_later`` plus ``cancel`` costs a few microseconds, a large share of an
``ask`` round trip. Asks with the same timeout expire in the order they were made,
so each distinct timeout value gets a FIFO of ``(deadline, future, ...)`` and at
most one armed timer, for its oldest entry. Finished asks are pruned from the
front as new ones arrive (asks mostly finish in order), so a queue stays short.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from typing import TYPE_CHECKING, Any

from dovecote._errors import ActorStoppedError, AskTimeoutError

if TYPE_CHECKING:
    from dovecote.actors._ref import ActorRef

__all__ = ["AskTimeouts"]

_Entry = tuple[float, "asyncio.Future[Any]", "ActorRef", type, float]


class _Lane:
    """All pending asks that share one timeout value."""

    __slots__ = ("entries", "timer")

    def __init__(self) -> None:
        self.entries: deque[_Entry] = deque()
        self.timer: asyncio.TimerHandle | None = None


class AskTimeouts:
    """Expires pending asks of one actor system."""

    __slots__ = ("_lanes", "_last", "_last_timeout", "_loop", "_now")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._now = loop.time
        self._lanes: dict[float, _Lane] = {}
        self._last_timeout = math.nan  # the lane used last (most programs use one timeout)
        self._last = _Lane()

    def track(
        self, future: asyncio.Future[Any], ref: ActorRef, message: Any, timeout: float
    ) -> None:
        """Fail ``future`` with AskTimeoutError if it is still pending after ``timeout``."""
        lane = self._last if timeout == self._last_timeout else self._lane(timeout)
        entries = lane.entries
        while entries and entries[0][1].done():
            entries.popleft()
        entries.append((self._now() + timeout, future, ref, type(message), timeout))
        if lane.timer is None:
            lane.timer = self._loop.call_at(entries[0][0], self._expire, lane)

    def _lane(self, timeout: float) -> _Lane:
        lane = self._lanes.get(timeout)
        if lane is None:
            lane = self._lanes[timeout] = _Lane()
        self._last_timeout = timeout
        self._last = lane
        return lane

    def _expire(self, lane: _Lane) -> None:
        lane.timer = None
        entries = lane.entries
        now = self._loop.time()
        while entries:
            deadline, future, ref, message_type, timeout = entries[0]
            if future.done():
                entries.popleft()
                continue
            if deadline > now:
                lane.timer = self._loop.call_at(deadline, self._expire, lane)
                return
            entries.popleft()
            future.set_exception(
                AskTimeoutError(
                    f"ask to {ref.path} timed out after {timeout:g}s waiting for a reply to "
                    f"a {message_type.__name__} message"
                )
            )

    def close(self, system_name: str) -> None:
        """The system shut down: cancel the timers and fail every ask still pending.

        Most pending asks were already failed by their actor stopping; what is left had
        its message dropped by an overflow policy, and would otherwise wait forever now
        that no timer will expire it.
        """
        for lane in self._lanes.values():
            if lane.timer is not None:
                lane.timer.cancel()
                lane.timer = None
            for _, future, ref, message_type, _ in lane.entries:
                if not future.done():
                    future.set_exception(
                        ActorStoppedError(
                            f"actor system {system_name!r} shut down before {ref.path} "
                            f"answered a {message_type.__name__} message"
                        )
                    )
        self._lanes.clear()
        self._last_timeout = math.nan
