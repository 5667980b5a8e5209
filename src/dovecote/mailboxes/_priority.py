"""A mailbox that hands out user messages by priority (lower number first)."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from heapq import heapify, heappop, heappush
from numbers import Real
from typing import Any

from dovecote._errors import OptionsError

from ._drops import DROP_HEAD, DROP_NEW, MailboxDropReason, OverflowMailbox
from ._drops import validate_capacity as _validate_capacity
from ._drops import validate_overflow as _validate_overflow
from ._envelope import EMPTY, Envelope, as_envelope, is_exempt, message_of
from ._mailbox import log

__all__ = ["PriorityMailbox"]

_Entry = tuple[float, int, Any]  # (priority, sequence number, item)


def _order(entry: _Entry) -> tuple[float, int]:
    return entry[0], entry[1]


class PriorityMailbox(OverflowMailbox):
    """User messages come out lowest ``priority_for(message)`` first, FIFO within a priority.

    ``priority_for`` runs once per enqueue (and again when a message is put back by
    :meth:`prepend_user`). If it raises, or returns something that is not a real number
    (``bool`` is fine, NaN is not), the message goes to the lowest priority (``math.inf``)
    and the problem is logged once per mailbox. Exempt envelopes skip ``priority_for`` and
    go to ``math.inf`` too, behind everything else.

    With a ``capacity``, a full mailbox applies ``overflow`` to non-exempt messages:

    - ``"reject"`` (the default) raises :class:`~dovecote.MailboxFullError`; nothing changes.
    - ``"drop-new"`` discards the incoming message.
    - ``"drop-head"`` discards the oldest non-exempt message of the lowest-priority tier
      (largest number), never a more urgent one. The incoming message takes part: when its
      priority is lower than every queued non-exempt message (or all queued messages are
      exempt) it is the one discarded; at an equal priority the queued one goes.

    Discards are counted in :attr:`dropped_count` and reported to drop observers, exactly as
    for :class:`BoundedMailbox`; exempt envelopes and :meth:`prepend_user` are never limited.
    Backed by a binary heap: O(log n) enqueue and dequeue, O(n) for a drop-head discard.
    """

    __slots__ = ("_bad_priority_logged", "_front", "_heap", "_priority_for", "_seq")

    _heap: list[_Entry]
    _seq: int  # last number handed to enqueue; counts up from 0
    _front: int  # last number handed to prepend_user; counts down from 0
    _priority_for: Callable[[Any], float]
    _bad_priority_logged: bool

    def __init__(
        self,
        priority_for: Callable[[Any], float],
        capacity: int | None = None,
        overflow: str = "reject",
    ) -> None:
        if not callable(priority_for):
            raise OptionsError(f"priority_for must be callable, got {priority_for!r}")
        limit = sys.maxsize if capacity is None else _validate_capacity(capacity)
        overflow = _validate_overflow(overflow)
        # The heap replaces the base class's user deque, so Mailbox.__init__ is skipped on
        # purpose (an empty deque costs ~760 bytes); every user-queue method is overridden.
        self._init_common()
        self._init_overflow(limit, overflow)
        self._priority_for = priority_for
        self._heap = []
        self._seq = 0
        self._front = 0
        self._bad_priority_logged = False

    @property
    def capacity(self) -> int | None:
        """The most user messages admitted without applying the policy; ``None``: unbounded."""
        return None if self._capacity == sys.maxsize else self._capacity

    def enqueue(self, envelope: Envelope) -> None:
        """Queue ``envelope`` in its priority tier, applying the overflow policy if full."""
        heap = self._heap
        if len(heap) >= self._capacity and not envelope.exempt:
            self._enqueue_full(envelope)
            return
        self._seq = seq = self._seq + 1
        heappush(heap, (self._priority_of(envelope), seq, envelope))
        if len(heap) >= self._next_warn:
            self._grew(len(heap))

    def post(self, message: Any) -> None:
        """Queue a bare message (see :meth:`Mailbox.post`) in its priority tier."""
        heap = self._heap
        if len(heap) >= self._capacity:
            self._enqueue_full(message)
            return
        self._seq = seq = self._seq + 1
        heappush(heap, (self._priority_of(message), seq, message))
        if len(heap) >= self._next_warn:
            self._grew(len(heap))

    def _enqueue_full(self, envelope: Any) -> None:
        """Apply the overflow policy. The size never grows here, so no growth check."""
        overflow = self._overflow
        if overflow == DROP_NEW:
            self._count_drop(MailboxDropReason.DROP_NEW)
            return
        if overflow != DROP_HEAD:
            self._reject()
        priority = self._priority_of(envelope)
        heap = self._heap
        victim = -1
        worst: float = -math.inf
        worst_seq = 0
        for index, (queued_priority, seq, queued) in enumerate(heap):
            if is_exempt(queued):
                continue
            if (
                victim < 0
                or queued_priority > worst
                or (queued_priority == worst and seq < worst_seq)
            ):
                victim, worst, worst_seq = index, queued_priority, seq
        if victim >= 0 and not priority > worst:
            last = heap.pop()
            if victim < len(heap):
                heap[victim] = last
                heapify(heap)
            self._seq = seq = self._seq + 1
            heappush(heap, (priority, seq, envelope))
        self._count_drop(MailboxDropReason.DROP_HEAD)

    def _priority_of(self, envelope: Any) -> float:
        """The heap key for an item: ``priority_for(message)``, or inf if exempt or bad."""
        if isinstance(envelope, Envelope):
            if envelope.exempt:
                return math.inf
            message = envelope.message
        else:
            message = envelope
        try:
            priority = self._priority_for(message)
        except Exception as error:
            self._bad_priority(envelope, error, "priority_for raised")
            return math.inf
        kind = type(priority)
        if kind is int or (kind is float and priority == priority):
            return priority
        if kind is not float and isinstance(priority, Real) and priority == priority:
            return priority
        self._bad_priority(envelope, None, f"priority_for returned {priority!r}, not a number")
        return math.inf

    def _bad_priority(self, envelope: Any, error: Exception | None, problem: str) -> None:
        if self._bad_priority_logged:
            return
        self._bad_priority_logged = True
        log.error(
            f"{problem}; message queued at the lowest priority (further failures not logged)",
            owner=self.owner,
            message_type=type(message_of(envelope)).__qualname__,
            exc_info=error,
        )

    def take(self) -> Any:
        """Remove and return the most urgent user item, or :data:`EMPTY`."""
        heap = self._heap
        if heap:
            return heappop(heap)[2]
        self._next_warn = self.warn_threshold
        return EMPTY

    def dequeue_user(self) -> Envelope | None:
        """Remove and return the most urgent user message, or ``None`` if there is none."""
        item = self.take()
        return None if item is EMPTY else as_envelope(item)

    def dequeue(self) -> Envelope | None:
        """Remove and return the next message: a system message if any, else a user one."""
        if self._system is not None:
            return self.dequeue_system()
        return self.dequeue_user()

    def prepend_user(self, envelopes: Iterable[Envelope]) -> None:
        """Put each envelope back at the front of its own priority tier, keeping their order.

        Priorities are computed afresh. Never drops or rejects: these were admitted once.
        """
        batch = list(envelopes)
        if not batch:
            return
        self._front = front = self._front - len(batch)
        heap = self._heap
        for offset, envelope in enumerate(batch):
            heappush(heap, (self._priority_of(envelope), front + offset, envelope))
        if len(heap) >= self._next_warn:
            self._grew(len(heap))

    def drain_user(self) -> list[Envelope]:
        """Remove and return every user message, in the order they would be dequeued."""
        drained = [as_envelope(entry[2]) for entry in sorted(self._heap, key=_order)]
        self._heap.clear()
        self._next_warn = self.warn_threshold
        return drained

    @property
    def user_count(self) -> int:
        """Number of queued user messages."""
        return len(self._heap)

    @property
    def has_messages(self) -> bool:
        """Whether :meth:`dequeue` would return a message."""
        return bool(self._heap) or self._system is not None
