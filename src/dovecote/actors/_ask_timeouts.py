"""Ask timeouts without a timer handle per ask.

A timer plus ``cancel`` costs a few microseconds, a large share of an
``ask`` round trip. Asks with the same timeout expire in the order they were made,
so a timeout value in use gets a lane: a FIFO of ``(deadline, future, ...)`` and at
most one armed timer, for its oldest entry. Finished asks are pruned from the front
as new ones arrive (asks mostly finish in order).

Nothing grows with churn:

* at most :data:`MAX_LANES` lanes exist; asks with any other timeout value share one
  heap ordered by deadline (one timer too). A lane that its timer finds empty is
  removed, so a program that uses many timeout values keeps only a few lanes;
* an ask still pending at the front (a stuck, long ask) does not pin the finished ones
  behind it: once a lane or the heap has doubled since it was last compacted, the
  finished entries are swept out, so each holds at most about twice its pending asks
  (plus :data:`COMPACT_MIN`), and a reply is not kept alive by its timeout bookkeeping.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from collections import deque
from typing import TYPE_CHECKING, Any

from dovecote._clock import Clock, TimerHandle
from dovecote._errors import ActorStoppedError, AskTimeoutError

if TYPE_CHECKING:
    from dovecote.actors._ref import ActorRef

__all__ = ["COMPACT_MIN", "MAX_LANES", "AskTimeouts"]

#: Most timeout values that get a lane of their own at one time.
MAX_LANES = 8
#: A lane or the heap is never compacted below this many entries.
COMPACT_MIN = 64

_Entry = tuple[float, "asyncio.Future[Any]", "ActorRef", type, float]
_HeapEntry = tuple[float, int, "asyncio.Future[Any]", "ActorRef", type, float]


class _Lane:
    """All pending asks that share one timeout value."""

    __slots__ = ("compact_at", "entries", "timeout", "timer")

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.entries: deque[_Entry] = deque()
        self.timer: TimerHandle | None = None
        self.compact_at = COMPACT_MIN


class AskTimeouts:
    """Expires pending asks of one actor system."""

    __slots__ = (
        "_clock",
        "_heap",
        "_heap_compact_at",
        "_heap_timer",
        "_heap_timer_at",
        "_lanes",
        "_last",
        "_last_timeout",
        "_now",
        "_seq",
    )

    def __init__(self, clock: Clock) -> None:
        # Deadlines are on the system's clock, so a ManualClock drives ask timeouts too.
        self._clock = clock
        self._now = clock.now
        self._lanes: dict[float, _Lane] = {}
        self._last_timeout = math.nan  # the lane used last (most programs use one timeout)
        self._last = _Lane(math.nan)
        self._heap: list[_HeapEntry] = []
        self._heap_timer: TimerHandle | None = None
        self._heap_timer_at = math.inf
        self._heap_compact_at = COMPACT_MIN
        self._seq = itertools.count()

    def track(
        self, future: asyncio.Future[Any], ref: ActorRef, message: Any, timeout: float
    ) -> None:
        """Fail ``future`` with AskTimeoutError if it is still pending after ``timeout``."""
        lane = self._last if timeout == self._last_timeout else self._lane(timeout)
        if lane is None:
            self._track_in_heap(future, ref, message, timeout)
            return
        entries = lane.entries
        while entries and entries[0][1].done():
            entries.popleft()
        entries.append((self._now() + timeout, future, ref, type(message), timeout))
        if len(entries) > lane.compact_at:
            _compact(lane)
        if lane.timer is None:
            lane.timer = self._clock.call_later(entries[0][0] - self._now(), self._expire, lane)

    def _lane(self, timeout: float) -> _Lane | None:
        lane = self._lanes.get(timeout)
        if lane is None:
            if len(self._lanes) >= MAX_LANES:
                return None
            lane = self._lanes[timeout] = _Lane(timeout)
        self._last_timeout = timeout
        self._last = lane
        return lane

    def _expire(self, lane: _Lane) -> None:
        lane.timer = None
        entries = lane.entries
        now = self._now()
        while entries:
            deadline, future, ref, message_type, timeout = entries[0]
            if future.done():
                entries.popleft()
                continue
            if deadline > now:
                lane.timer = self._clock.call_later(deadline - now, self._expire, lane)
                return
            entries.popleft()
            future.set_exception(_timed_out(ref, message_type, timeout))
        # nothing pending: the lane goes, so timeout values used once leave nothing behind
        if self._lanes.get(lane.timeout) is lane:
            del self._lanes[lane.timeout]
        if self._last is lane:
            self._last_timeout = math.nan

    # -- the heap, for timeout values beyond the lanes ----------------------------------------
    def _track_in_heap(
        self, future: asyncio.Future[Any], ref: ActorRef, message: Any, timeout: float
    ) -> None:
        heap = self._heap
        deadline = self._now() + timeout
        heapq.heappush(heap, (deadline, next(self._seq), future, ref, type(message), timeout))
        if len(heap) > self._heap_compact_at:
            self._compact_heap()
        if deadline < self._heap_timer_at:
            self._arm_heap(deadline)

    def _arm_heap(self, deadline: float) -> None:
        if self._heap_timer is not None:
            self._heap_timer.cancel()
        self._heap_timer = self._clock.call_later(deadline - self._now(), self._expire_heap)
        self._heap_timer_at = deadline

    def _expire_heap(self) -> None:
        self._heap_timer = None
        self._heap_timer_at = math.inf
        heap = self._heap
        now = self._now()
        while heap:
            deadline, _, future, ref, message_type, timeout = heap[0]
            if not future.done():
                if deadline > now:
                    self._arm_heap(deadline)
                    return
                future.set_exception(_timed_out(ref, message_type, timeout))
            heapq.heappop(heap)

    def close(self, system_name: str) -> None:
        """The system shut down: cancel the timers and fail every ask still pending.

        Most pending asks were already failed by their actor stopping; what is left had
        its message dropped by an overflow policy, and would otherwise wait forever now
        that no timer will expire it.
        """
        pending: list[tuple[asyncio.Future[Any], ActorRef, type]] = []
        for lane in self._lanes.values():
            if lane.timer is not None:
                lane.timer.cancel()
                lane.timer = None
            pending.extend((future, ref, kind) for _, future, ref, kind, _ in lane.entries)
        if self._heap_timer is not None:
            self._heap_timer.cancel()
            self._heap_timer = None
        pending.extend((future, ref, kind) for _, _, future, ref, kind, _ in self._heap)
        for future, ref, message_type in pending:
            if not future.done():
                future.set_exception(
                    ActorStoppedError(
                        f"actor system {system_name!r} shut down before {ref.path} "
                        f"answered a {message_type.__name__} message"
                    )
                )
        self._lanes.clear()
        self._heap.clear()
        self._heap_timer_at = math.inf
        self._last_timeout = math.nan

    def sweep(self) -> None:
        """Drop every finished ask now (the lanes and the heap otherwise do it as they grow)."""
        for lane in self._lanes.values():
            _compact(lane)
        self._compact_heap()

    def _compact_heap(self) -> None:
        heap = self._heap
        heap[:] = [entry for entry in heap if not entry[2].done()]
        heapq.heapify(heap)
        self._heap_compact_at = max(COMPACT_MIN, 2 * len(heap))

    def entry_count(self) -> int:
        """How many asks the bookkeeping holds (pending ones, and finished ones not yet swept)."""
        return sum(len(lane.entries) for lane in self._lanes.values()) + len(self._heap)


def _compact(lane: _Lane) -> None:
    """Sweep the finished asks out of ``lane`` (its front may be a stuck, pending one)."""
    lane.entries = deque(entry for entry in lane.entries if not entry[1].done())
    lane.compact_at = max(COMPACT_MIN, 2 * len(lane.entries))


def _timed_out(ref: ActorRef, message_type: type, timeout: float) -> AskTimeoutError:
    return AskTimeoutError(
        f"ask to {ref.path} timed out after {timeout:g}s waiting for a reply to "
        f"a {message_type.__name__} message"
    )
