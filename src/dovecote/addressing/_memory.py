"""``MemoryProvider``: the ``mem`` scheme, a broker simulated on an in-memory bus."""

from __future__ import annotations

import asyncio
import contextlib
import math
import uuid
from collections.abc import Sequence

from dovecote._logs import get_logger

from ._address import MailAddress
from ._clock import Clock, iso_timestamp
from ._dead_letter import DeadLetterPolicy
from ._memory_bus import LeaseRecord, MemoryBus, TopicState, default_bus, scoped_bus
from ._message import (
    HEADER_ATTEMPT,
    HEADER_DEAD_LETTER_ATTEMPTS,
    HEADER_DEAD_LETTER_DEPTH,
    HEADER_DEAD_LETTER_ERROR,
    HEADER_DEAD_LETTER_REASON,
    HEADER_DEAD_LETTER_ROUND,
    HEADER_DEAD_LETTER_TERMINAL,
    HEADER_DEAD_LETTER_TOPIC,
    HEADER_MAX_ATTEMPTS,
    HEADER_ROUND,
    HEADER_SEND_ID,
    SYSTEM_HEADERS,
    MailMessage,
)
from ._provider import DEFAULT_DELIVERY_SETTLE_TIMEOUT, Provider
from ._retry import DeliveryResult, RetryPolicy
from ._status import AddressState, AddressStatus, LocatedCopy
from ._subscription import CORE_DISPOSITIONS, Lease, Subscription

__all__ = ["MemoryProvider"]

_log = get_logger("dovecote.addressing")

_BASE_CAPABILITIES = frozenset(
    {"subscribe", "fetch", "manual-ack", "peek", "status", "enumerate", "recover", "clear",
     "locate", "retry", "park"}
)


class MemoryProvider(Provider):
    """The in-process provider for ``mem:`` addresses.

    All instances share one process-wide :class:`MemoryBus` unless built with
    :meth:`create_isolated` (a private bus), :meth:`for_scope` (a named bus) or an explicit
    ``bus``. Options: ``retry`` (a :class:`RetryPolicy`), ``clock``,
    ``delivery_settle_timeout`` (seconds, 0 disables the watchdog) and
    ``lease_sweep_interval`` (seconds; an opt-in task that reclaims expired leases, started
    by ``start()`` and cancelled by ``close()``; it never keeps the process alive).
    """

    scheme = "mem"
    broadcast_deliveries = True

    def __init__(
        self,
        bus: MemoryBus | None = None,
        *,
        retry: RetryPolicy | None = None,
        clock: Clock | None = None,
        delivery_settle_timeout: float = DEFAULT_DELIVERY_SETTLE_TIMEOUT,
        lease_sweep_interval: float | None = None,
    ) -> None:
        super().__init__(
            retry=retry, clock=clock, delivery_settle_timeout=delivery_settle_timeout
        )
        self.bus = bus if bus is not None else default_bus()
        self.lease_sweep_interval = lease_sweep_interval
        self._dead_letters: DeadLetterPolicy | None = None
        self._delivering_topics: dict[str, str] = {}
        self._sweeper: asyncio.Task[None] | None = None

    @classmethod
    def create_isolated(cls, **options: object) -> MemoryProvider:
        """A provider on a private bus nobody else in the process can see."""
        return cls(MemoryBus(), **options)  # type: ignore[arg-type]

    @classmethod
    def for_scope(cls, name: str, **options: object) -> MemoryProvider:
        """A provider on the bus of scope ``name``: shared within it, invisible outside."""
        return cls(scoped_bus(name), **options)  # type: ignore[arg-type]

    # -- capabilities -----------------------------------------------------------------
    @property
    def supports(self) -> frozenset[str]:
        """Everything above, plus ``"dead-letter"`` once a dead-letter queue is enabled."""
        if self._dead_letters is not None:
            return _BASE_CAPABILITIES | {"dead-letter"}
        return _BASE_CAPABILITIES

    # -- dead-letter queue ------------------------------------------------------------
    def enable_dead_letter_queue(self, suffix: str = "_dlq", max_nesting: float = 1) -> None:
        """Archive given-up copies to ``<topic><suffix>``; park them at ``max_nesting``."""
        self._dead_letters = DeadLetterPolicy(suffix, max_nesting)

    def disable_dead_letter_queue(self) -> None:
        """Go back to dropping given-up copies."""
        self._dead_letters = None

    def dead_letter_topic(self, address: MailAddress | str) -> str | None:
        """Where a give-up from ``address`` lands (itself at the cap), None when disabled."""
        if self._dead_letters is None:
            return None
        return str(self._dead_letters.target(MailAddress.coerce(address)))

    def peek_parked(self, address: MailAddress | str) -> list[MailMessage]:
        """Copies of the parked records of ``address`` (read-only)."""
        state = self.bus.find(str(MailAddress.coerce(address)))
        return [m.snapshot() for m in state.parked] if state else []

    def purge_parked(self, address: MailAddress | str) -> int:
        """Drop the parked records of ``address``; returns how many were dropped."""
        state = self.bus.find(str(MailAddress.coerce(address)))
        if state is None:
            return 0
        count = len(state.parked)
        state.parked.clear()
        return count

    # -- lifecycle ----------------------------------------------------------------------
    async def _open(self) -> None:
        interval = self.lease_sweep_interval
        if interval is not None and interval > 0 and self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep(interval))

    async def _close(self) -> None:
        sweeper, self._sweeper = self._sweeper, None
        if sweeper is not None:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper

    async def _sweep(self, interval: float) -> None:
        while True:
            await self.clock.sleep(interval)
            await self.recover()

    # -- send and subscriptions ----------------------------------------------------------
    def _touch(self, state: TopicState) -> None:
        state.last_activity = self.clock.wall()

    async def _send(self, message: MailMessage) -> None:
        self._publish(str(message.to), message)

    def _publish(self, topic: str, message: MailMessage) -> None:
        state = self.bus.topic(topic)
        self._touch(state)
        subscriptions = state.active_subscriptions()
        if not subscriptions:
            state.enqueue(message)
            return
        key = message.key or ""
        state.delivering[key] = message
        self._delivering_topics[key] = topic
        self._broadcast(message, subscriptions)

    async def _subscribe(self, subscription: Subscription) -> None:
        self.bus.topic(str(subscription.address)).subscriptions[subscription.id] = subscription

    async def _unsubscribe(self, subscription: Subscription) -> None:
        state = self.bus.find(str(subscription.address))
        if state is not None:
            state.subscriptions.pop(subscription.id, None)

    async def _ack(self, message: MailMessage) -> None:
        self._finish_delivery(message)

    async def _nack(self, message: MailMessage, requeue: bool) -> None:
        state = self._finish_delivery(message)
        if requeue and state is not None:
            state.enqueue(message.with_headers({}, drop=(HEADER_ATTEMPT,)), front=True)

    def _finish_delivery(self, message: MailMessage) -> TopicState | None:
        key = message.key or ""
        topic = self._delivering_topics.get(key)
        if topic is None:
            return None
        state = self.bus.topic(topic)
        state.delivering.pop(key, None)
        self._touch(state)
        return state

    async def _on_delivery_dead_lettered(
        self, message: MailMessage, failed: Sequence[DeliveryResult]
    ) -> None:
        worst = failed[0]
        self._give_up(
            self._topic_of_delivery(message),
            message,
            reason=worst.outcome.value,
            attempts=max(result.attempts for result in failed),
            error=worst.error,
        )

    def _topic_of_delivery(self, message: MailMessage) -> str:
        return self._delivering_topics.get(message.key or "") or str(message.to)

    def _delivery_settled(self, message: MailMessage) -> None:
        self._delivering_topics.pop(message.key or "", None)

    # -- the give-up path -----------------------------------------------------------------
    def _give_up(
        self, topic: str, message: MailMessage, *, reason: str, attempts: int, error: str | None
    ) -> None:
        """Archive a copy that will not be handed out again (or drop it: no DLQ)."""
        policy = self._dead_letters
        if policy is None:
            return
        source = MailAddress.parse(topic)
        depth = policy.depth(source)
        record_headers = {
            HEADER_DEAD_LETTER_REASON: reason,
            HEADER_DEAD_LETTER_ATTEMPTS: str(attempts),
            HEADER_DEAD_LETTER_ROUND: str(message.round),
            HEADER_DEAD_LETTER_ERROR: error or "",
            HEADER_DEAD_LETTER_TOPIC: topic,
        }
        if depth >= policy.max_nesting:
            record_headers[HEADER_DEAD_LETTER_DEPTH] = str(depth)
            record_headers[HEADER_DEAD_LETTER_TERMINAL] = "true"
            parked = message.with_headers(record_headers, drop=(HEADER_ATTEMPT,))
            state = self.bus.topic(topic)
            state.parked.append(parked)
            self._touch(state)
            _log.critical(
                "dead-letter chain reached its nesting cap; record parked",
                topic=topic,
                key=parked.key,
                id=message.id,
                reason=reason,
            )
            return
        record_headers[HEADER_DEAD_LETTER_DEPTH] = str(depth + 1)
        record_headers[HEADER_SEND_ID] = uuid.uuid4().hex
        drop = (*SYSTEM_HEADERS - {HEADER_SEND_ID}, HEADER_MAX_ATTEMPTS)
        record = message.with_headers(record_headers, drop=drop)
        self._publish(str(policy.target(source)), record)

    # -- pull side ------------------------------------------------------------------------
    def _hand_out(self, message: MailMessage) -> MailMessage:
        return message.with_headers(
            {HEADER_ROUND: str(message.round + 1), HEADER_ATTEMPT: "1"}
        )

    async def fetch_message(self, address: MailAddress) -> MailMessage | None:
        """Take the head of the queue; it counts as handled once returned."""
        state = self.bus.find(str(address))
        message = state.pop() if state is not None else None
        if state is None or message is None:
            return None
        self._touch(state)
        return self._hand_out(message)

    async def fetch_leased(self, address: MailAddress, ack_timeout: float) -> Lease | None:
        """Reclaim this topic's expired leases, then lease out the head of the queue."""
        state = self.bus.find(str(address))
        if state is None:
            return None
        self._reclaim(state)
        message = state.pop()
        if message is None:
            return None
        copy = self._hand_out(message)
        lease_id = uuid.uuid4().hex
        deadline = None if ack_timeout == 0 else self.clock.now() + ack_timeout
        state.leases[copy.key or ""] = LeaseRecord(copy, lease_id, ack_timeout, deadline)
        self._touch(state)
        return Lease(self, address, copy, lease_id, ack_timeout, deadline)

    async def peek(self, address: MailAddress, limit: int) -> list[MailMessage]:
        """Copies of up to ``limit`` queued messages; counters and activity unchanged."""
        state = self.bus.find(str(address))
        if state is None:
            return []
        return [message.snapshot() for _, message in zip(range(limit), state.queue, strict=False)]

    async def settle(self, address: MailAddress, key: str, lease_id: str, disposition: str) -> bool:
        """Apply one disposition to the lease ``lease_id`` on copy ``key``."""
        if disposition not in CORE_DISPOSITIONS:
            self.require(f"disposition:{disposition}", address)
        topic = str(address)
        state = self.bus.find(topic)
        record = state.leases.get(key) if state is not None else None
        if state is None or record is None or record.lease_id != lease_id:
            return False
        del state.leases[key]
        self._touch(state)
        if disposition == "unhandled":
            state.enqueue(record.message.with_headers({}, drop=(HEADER_ATTEMPT,)), front=True)
        elif disposition == "discard":
            self._give_up(
                topic,
                record.message,
                reason="consumer-nack",
                attempts=record.message.attempt or 1,
                error=None,
            )
        return True

    def _reclaim(self, state: TopicState) -> int:
        now = self.clock.now()
        expired = [key for key, record in state.leases.items() if record.expired(now)]
        for key in reversed(expired):
            record = state.leases.pop(key)
            state.enqueue(record.message.with_headers({}, drop=(HEADER_ATTEMPT,)), front=True)
        return len(expired)

    async def recover(self, address: MailAddress | None = None) -> dict[str, int]:
        """Put expired leases back in the queue; leases still valid or ``0`` stay put."""
        topics = [str(address)] if address is not None else self.bus.topics()
        reclaimed: dict[str, int] = {}
        for topic in topics:
            state = self.bus.find(topic)
            count = self._reclaim(state) if state is not None else 0
            if count:
                reclaimed[topic] = count
        return reclaimed

    async def clear(self) -> int:
        """Drop every queued and in-flight copy on this bus (parked copies stay)."""
        return self.bus.clear()

    async def locate(self, message_id: str) -> list[LocatedCopy]:
        """Every copy named ``message_id`` on this bus, with its key, topic and state."""
        return self.bus.locate(message_id)

    # -- status ----------------------------------------------------------------------------
    async def status(self, address: MailAddress) -> AddressStatus:
        """Core fields plus ``mem.*`` extension keys for one address."""
        return self._status_of(str(address))

    async def list_statuses(self) -> list[AddressStatus]:
        """Status of every topic on the bus, sorted by address."""
        return [self._status_of(topic) for topic in self.bus.topics()]

    def _status_of(self, topic: str) -> AddressStatus:
        state = self.bus.find(topic)
        if state is None:
            return AddressStatus(
                topic,
                AddressState.UNKNOWN,
                False,
                extensions={
                    "mem.parked_count": 0,
                    "mem.overdue_in_flight_count": 0,
                    "mem.oldest_overdue_ms": 0,
                    "mem.subscriber_count": 0,
                },
            )
        now = self.clock.now()
        overdue = [
            now - record.deadline
            for record in state.leases.values()
            if record.deadline is not None and record.deadline <= now
        ]
        return AddressStatus(
            topic,
            AddressState.ONLINE,
            True,
            unread_count=len(state.queue),
            in_flight_count=len(state.leases) + len(state.delivering),
            last_activity_time=(
                iso_timestamp(state.last_activity) if state.last_activity is not None else None
            ),
            extensions={
                "mem.parked_count": len(state.parked),
                "mem.overdue_in_flight_count": len(overdue),
                "mem.oldest_overdue_ms": math.floor(max(overdue, default=0.0) * 1000),
                "mem.subscriber_count": len(state.active_subscriptions()),
                "mem.delivering_count": len(state.delivering),
            },
        )

