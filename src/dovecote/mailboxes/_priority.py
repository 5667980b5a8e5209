"""A mailbox that hands out user messages by priority (lower number first)."""

from __future__ import annotations

import math
import sys
from collections import deque
from collections.abc import Callable, Iterable
from heapq import heapify, heappop, heappush
from numbers import Real
from typing import Any

from dovecote._errors import OptionsError

from ._drops import DROP_HEAD, DROP_NEW, MailboxDropReason, OverflowMailbox, OverflowPolicy
from ._drops import validate_capacity as _validate_capacity
from ._drops import validate_overflow as _validate_overflow
from ._envelope import EMPTY, Envelope, as_envelope, is_exempt, message_of
from ._mailbox import log

__all__ = ["PriorityMailbox"]

class PriorityMailbox(OverflowMailbox):
    """User messages come out lowest ``priority_for(message)`` first, FIFO within a priority.

    ``priority_for`` runs once per enqueue (and again when a message is put back by
    :meth:`prepend_user`). If it raises, or returns something that is not a real number
    (``bool`` is fine, NaN is not), the message goes to the lowest priority (``math.inf``)
    and the problem is logged once per mailbox. Exempt envelopes skip ``priority_for`` and
    go to ``math.inf`` too, behind everything else (unless their class sets
    ``keeps_priority``, as the runtime's post-office letters do).

    With a ``capacity``, a full mailbox applies ``overflow`` to non-exempt messages:

    - ``"reject"`` (the default) raises :class:`~dovecote.MailboxFullError`; nothing changes.
    - ``"drop-new"`` discards the incoming message.
    - ``"drop-head"`` discards the oldest non-exempt message of the lowest-priority tier
      (largest number), never a more urgent one. The incoming message takes part: when its
      priority is lower than every queued non-exempt message (or all queued messages are
      exempt) it is the one discarded; at an equal priority the queued one goes.

    Discards are counted in :attr:`dropped_count` and reported to drop observers, exactly as
    for :class:`BoundedMailbox`; exempt envelopes and :meth:`prepend_user` are never limited.

    Each distinct priority value is a FIFO tier (a deque) and a small heap orders the
    values: enqueue and dequeue are O(1) plus O(log k) when a tier appears or empties, for
    k distinct priorities queued. Suited to a modest number of distinct priorities (kinds,
    levels); many distinct values (e.g. deadlines) work but cost a deque per value queued.
    """

    __slots__ = ("_bad_priority_logged", "_head", "_order", "_priority_for", "_size", "_tiers")

    _tiers: dict[float, deque[Any]]
    _order: list[float]  # heap of the priorities that currently have a tier
    _head: deque[Any] | None  # the tier of order[0], once take() has looked it up
    _size: int
    _priority_for: Callable[[Any], float]
    _bad_priority_logged: bool

    def __init__(
        self,
        priority_for: Callable[[Any], float],
        capacity: int | None = None,
        overflow: OverflowPolicy = "reject",
    ) -> None:
        if not callable(priority_for):
            raise OptionsError(f"priority_for must be callable, got {priority_for!r}")
        limit = sys.maxsize if capacity is None else _validate_capacity(capacity)
        overflow = _validate_overflow(overflow)
        # The tiers replace the base class's user deque, so Mailbox.__init__ is skipped on
        # purpose (an empty deque costs ~760 bytes); every user-queue method is overridden.
        self._init_common()
        self._init_overflow(limit, overflow)
        self._priority_for = priority_for
        self._tiers = {}
        self._order = []
        self._head = None
        self._size = 0
        self._bad_priority_logged = False

    @property
    def capacity(self) -> int | None:
        """The most user messages admitted without applying the policy; ``None``: unbounded."""
        return None if self._capacity == sys.maxsize else self._capacity

    def _push(self, priority: float, item: Any) -> None:
        tier = self._tiers.get(priority)
        if tier is None:
            tier = self._new_tier(priority)
        tier.append(item)
        self._size = size = self._size + 1
        if size >= self._next_warn:
            self._grew(size)

    def post(self, message: Any) -> None:
        """Queue a bare message (see :meth:`Mailbox.post`) in its priority tier."""
        size = self._size
        if size >= self._capacity:
            self._enqueue_full(message)
            return
        try:
            priority = self._priority_for(message)
        except Exception as error:
            self._bad_priority(message, error, "priority_for raised")
            priority = math.inf
        else:
            kind = type(priority)
            if kind is not int and not (kind is float and priority == priority):
                priority = self._checked(message, priority)
        # _push, inlined: post is the hot path of every tell to a priority mailbox
        try:
            self._tiers[priority].append(message)
        except KeyError:
            self._new_tier(priority).append(message)
        self._size = size = size + 1
        if size >= self._next_warn:
            self._grew(size)

    def _new_tier(self, priority: float) -> deque[Any]:
        tier = self._tiers[priority] = deque()
        heappush(self._order, priority)
        self._head = None  # the new tier may be more urgent than the cached head
        return tier

    def enqueue(self, envelope: Envelope) -> None:
        """Queue ``envelope`` in its priority tier, applying the overflow policy if full."""
        if self._size >= self._capacity and not envelope.exempt:
            self._enqueue_full(envelope)
            return
        self._push(self._priority_of(envelope), envelope)

    def _enqueue_full(self, envelope: Any) -> None:
        """Apply the overflow policy. The size never grows here, so no growth check."""
        overflow = self._overflow
        if overflow == DROP_NEW:
            self._count_drop(MailboxDropReason.DROP_NEW)
            return
        if overflow != DROP_HEAD:
            self._reject()
        priority = self._priority_of(envelope)
        tiers = self._tiers
        for worst in sorted(tiers, reverse=True):
            tier = tiers[worst]
            victim = next((i for i, queued in enumerate(tier) if not is_exempt(queued)), None)
            if victim is None:
                continue
            if not priority > worst:
                del tier[victim]
                self._size -= 1
                if not tier:
                    del tiers[worst]
                    self._order.remove(worst)
                    heapify(self._order)
                    self._head = None
                self._push(priority, envelope)
            break
        self._count_drop(MailboxDropReason.DROP_HEAD)

    def _priority_of(self, envelope: Any) -> float:
        """The tier of an item: ``priority_for(message)``, or inf if exempt or bad."""
        if isinstance(envelope, Envelope):
            if envelope.exempt and not envelope.keeps_priority:
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
        return self._checked(envelope, priority)

    def _checked(self, envelope: Any, priority: Any) -> float:
        """A priority that is not a plain int or float: a Real number (not NaN) is fine."""
        if isinstance(priority, Real) and priority == priority:
            return priority  # type: ignore[return-value]
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
        """Remove and return the most urgent user item, or the private empty marker
        (see :meth:`Mailbox.take`)."""
        head = self._head
        if head:  # the common case: the most urgent tier is cached and not empty
            self._size -= 1
            return head.popleft()
        return self._take_from_next_tier()

    def _take_from_next_tier(self) -> Any:
        order = self._order
        tiers = self._tiers
        while order and not tiers[order[0]]:  # drop tiers emptied since they were cached
            del tiers[heappop(order)]
        if not order:
            self._head = None
            self._next_warn = self.warn_threshold
            return EMPTY
        head = self._head = tiers[order[0]]
        self._size -= 1
        return head.popleft()

    def dequeue_user(self) -> Envelope | None:
        """Remove and return the most urgent user message, or ``None`` if there is none."""
        if not self._size:
            self.take()  # re-arms the growth warning
            return None
        return as_envelope(self.take())

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
        tiers = self._tiers
        for item in reversed(batch):
            priority = self._priority_of(item)
            tier = tiers.get(priority)
            if tier is None:
                tier = self._new_tier(priority)
            tier.appendleft(item)
        self._size = size = self._size + len(batch)
        if size >= self._next_warn:
            self._grew(size)

    def drain_user(self) -> list[Envelope]:
        """Remove and return every user message, in the order they would be dequeued."""
        tiers = self._tiers
        drained = [as_envelope(item) for priority in sorted(tiers) for item in tiers[priority]]
        tiers.clear()
        self._order.clear()
        self._head = None
        self._size = 0
        self._next_warn = self.warn_threshold
        return drained

    @property
    def user_count(self) -> int:
        """Number of queued user messages."""
        return self._size

    @property
    def has_messages(self) -> bool:
        """Whether :meth:`dequeue` would return a message."""
        return self._size > 0 or self._system is not None
