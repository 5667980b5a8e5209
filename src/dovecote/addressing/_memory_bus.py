"""``MemoryBus``: the in-process "server" behind ``MemoryProvider``.

A bus holds, per topic (a normalised address string): the queue, the in-flight leases,
the copies being delivered to subscribers, the parked copies and the subscription table.
Every copy is keyed on its ``mbx-send-id``, never on the sender's ``id``. By default all
providers share one process-wide bus; ``scoped_bus(name)`` and a fresh ``MemoryBus()`` give
narrower boundaries.
"""

from __future__ import annotations

from collections import deque

from ._message import MailMessage
from ._status import CopyState, LocatedCopy
from ._subscription import Subscription

__all__ = ["LeaseRecord", "MemoryBus", "TopicState", "default_bus", "scoped_bus"]


class LeaseRecord:
    """One copy handed out under ``manual_ack``; ``deadline`` None never expires."""

    __slots__ = ("ack_timeout", "deadline", "lease_id", "message")

    def __init__(
        self, message: MailMessage, lease_id: str, ack_timeout: float, deadline: float | None
    ) -> None:
        self.message = message
        self.lease_id = lease_id
        self.ack_timeout = ack_timeout
        self.deadline = deadline

    def expired(self, now: float) -> bool:
        """Whether the lease, as fixed at hand-out, has run out at ``now``."""
        return self.deadline is not None and self.deadline <= now


class TopicState:
    """Everything the bus knows about one topic."""

    __slots__ = (
        "delivering",
        "last_activity",
        "leases",
        "parked",
        "queue",
        "queued_keys",
        "subscriptions",
    )

    def __init__(self) -> None:
        self.queue: deque[MailMessage] = deque()
        self.queued_keys: set[str] = set()
        self.leases: dict[str, LeaseRecord] = {}
        self.delivering: dict[str, MailMessage] = {}
        self.parked: list[MailMessage] = []
        self.subscriptions: dict[str, Subscription] = {}
        self.last_activity: float | None = None

    def holds(self, key: str) -> bool:
        """True when the copy is already queued or in flight here."""
        return key in self.queued_keys or key in self.leases or key in self.delivering

    def enqueue(self, message: MailMessage, *, front: bool = False) -> bool:
        """Queue a copy unless it is already queued or in flight (never queue twice)."""
        key = message.key or ""
        if key in self.queued_keys or key in self.leases:
            return False
        self.queued_keys.add(key)
        if front:
            self.queue.appendleft(message)
        else:
            self.queue.append(message)
        return True

    def pop(self) -> MailMessage | None:
        """Take the head of the queue."""
        if not self.queue:
            return None
        message = self.queue.popleft()
        self.queued_keys.discard(message.key or "")
        return message

    @property
    def idle(self) -> bool:
        """True when the topic holds nothing: no copy queued, in flight or parked, and no
        subscription (forgetting it then loses nothing)."""
        return not (
            self.queue or self.leases or self.delivering or self.parked or self.subscriptions
        )

    def active_subscriptions(self) -> list[Subscription]:
        """Subscriptions that are still attached."""
        return [s for s in self.subscriptions.values() if s.active]


class MemoryBus:
    """In-memory topics shared by every ``MemoryProvider`` built on this bus."""

    __slots__ = ("_topics",)

    def __init__(self) -> None:
        self._topics: dict[str, TopicState] = {}

    def topic(self, name: str) -> TopicState:
        """The state of ``name``, created (and thereby made known) on first use."""
        state = self._topics.get(name)
        if state is None:
            state = self._topics[name] = TopicState()
        return state

    def find(self, name: str) -> TopicState | None:
        """The state of ``name`` if the bus has ever seen it (read paths use this)."""
        return self._topics.get(name)

    def forget_if_idle(self, name: str) -> bool:
        """Drop topic ``name`` if it holds nothing (see :attr:`TopicState.idle`).

        Returns True if it was dropped. A topic is made again by its next use, so an
        address whose subscriber has gone does not keep a topic for ever.
        """
        state = self._topics.get(name)
        if state is None or not state.idle:
            return False
        del self._topics[name]
        return True

    def topics(self) -> list[str]:
        """Every known topic, sorted."""
        return sorted(self._topics)

    def clear(self, topic: str | None = None) -> int:
        """Drop queued and in-flight copies (all topics, or one); keep subscriptions.

        Returns how many copies were dropped. Parked copies are untouched: only
        ``purge_parked`` removes them.
        """
        names = [topic] if topic is not None else list(self._topics)
        dropped = 0
        for name in names:
            state = self._topics.get(name)
            if state is None:
                continue
            dropped += len(state.queue) + len(state.leases)
            state.queue.clear()
            state.queued_keys.clear()
            state.leases.clear()
        return dropped

    def locate(self, message_id: str) -> list[LocatedCopy]:
        """Every copy whose sender-chosen id is ``message_id``, with its key and state."""
        found: list[LocatedCopy] = []
        for name in sorted(self._topics):
            state = self._topics[name]
            for message in state.queue:
                if message.id == message_id:
                    found.append(LocatedCopy(message.key or "", name, CopyState.QUEUED, message))
            for key, record in state.leases.items():
                if record.message.id == message_id:
                    found.append(
                        LocatedCopy(
                            key, name, CopyState.IN_FLIGHT, record.message, record.lease_id
                        )
                    )
            for key, message in state.delivering.items():
                if message.id == message_id:
                    found.append(LocatedCopy(key, name, CopyState.DELIVERING, message))
            for message in state.parked:
                if message.id == message_id:
                    found.append(LocatedCopy(message.key or "", name, CopyState.PARKED, message))
        return found


_DEFAULT_BUS = MemoryBus()
_SCOPES: dict[str, MemoryBus] = {}


def default_bus() -> MemoryBus:
    """The process-wide bus every ``MemoryProvider()`` shares by default."""
    return _DEFAULT_BUS


def scoped_bus(name: str) -> MemoryBus:
    """The bus of scope ``name`` (created on first use, never garbage-collected)."""
    bus = _SCOPES.get(name)
    if bus is None:
        bus = _SCOPES[name] = MemoryBus()
    return bus
