"""What every store backend shares before it touches its database.

The clock and its millisecond reading, the seven counters, the owned sweeper, the
streams' wake-up signals, the async context manager, and the request checks every
operation runs first (each raises :class:`InvalidRequestError` before anything changes).
``PostgresStore`` builds on it; ``SqliteStore`` can (its checks are the same).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

from prometheus_client import CollectorRegistry

from dovecote._clock import Clock
from dovecote.durable._errors import InvalidRequestError
from dovecote.durable._metrics import StoreMetrics
from dovecote.durable._model import Claim, StoredMessage, SweepResult
from dovecote.durable._sqlite_schema import encode_headers
from dovecote.durable._sweeper import Sweeper
from dovecote.durable._ulid import new_ulid
from dovecote.durable._validation import (
    check_agent_id,
    check_headers,
    check_ms,
    check_optional_ms,
    check_payload,
    check_priority,
)
from dovecote.durable._wakeup import MailboxSignals, now_ms

__all__ = ["SendRow", "StoreBase", "payload_too_large"]

#: (message_id, mailbox_id, sender_id, payload, headers JSON, priority, created, visible,
#: expires): one message to insert
SendRow = tuple[str, str, str, bytes, str, int, int, int, int | None]


def payload_too_large(size: int, limit: int, mailbox_id: str) -> InvalidRequestError:
    """The error for a payload over a mailbox's ``max_payload_bytes``."""
    return InvalidRequestError(f"payload too large: {size} bytes (max {limit}) for {mailbox_id}")


class StoreBase:
    """The backend-neutral half of a store; subclasses add ``sweep`` and ``close``."""

    sweep: Callable[[], Awaitable[SweepResult]]

    def __init__(self, *, clock: Clock, sweep_interval: float | None) -> None:
        self._clock = clock
        self._signals = MailboxSignals()
        self._counters = StoreMetrics()
        self._sweeper = (
            None if sweep_interval is None else Sweeper(self.sweep, sweep_interval, clock)
        )

    @property
    def metrics(self) -> CollectorRegistry:
        """The store's registry with the seven ``postbox_*`` counters."""
        return self._counters.registry

    @property
    def counters(self) -> StoreMetrics:
        """The counters themselves (``counters.value(name, **labels)`` reads one)."""
        return self._counters

    @property
    def sweeper(self) -> Sweeper | None:
        """The owned background sweeper (``None`` when ``sweep_interval=None``)."""
        return self._sweeper

    async def close(self) -> None:
        """Stop the sweeper and release the database (each backend adds its part)."""
        raise NotImplementedError

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()

    def _now(self) -> int:
        return now_ms(self._clock)

    def _send_rows(self, targets: list[str], payload: object, sender: str, headers: object,
                   priority: int, delay_ms: int, ttl_ms: int | None,
                   payload_limit: Callable[[str], int | None],
                   ) -> tuple[list[SendRow], list[StoredMessage]]:
        """Check a send or fanout and build its rows (``payload_limit(to)``: the cap of a
        mailbox this process knows, or ``None`` to leave the check to the database)."""
        checked = [check_agent_id(t, "mailbox id") for t in targets]
        sender = check_agent_id(sender, "sender")
        data = check_payload(payload)
        fields = check_headers(headers)
        priority = check_priority(priority)
        delay = check_ms(delay_ms, "delay_ms")
        ttl = check_optional_ms(ttl_ms, "ttl_ms")
        for to in checked:
            limit = payload_limit(to)
            if limit is not None and len(data) > limit:
                raise payload_too_large(len(data), limit, to)
        now = self._now()
        visible = now + delay
        expires = None if ttl is None else now + ttl
        text = encode_headers(fields)
        rows: list[SendRow] = []
        sent = []
        for to in checked:
            message_id = new_ulid(now)
            rows.append((message_id, to, sender, data, text, priority, now, visible, expires))
            sent.append(StoredMessage(
                message_id, to, sender, data, dict(fields), priority, now, visible, "pending", 0,
                expires_at_ms=expires,
            ))
        return rows, sent

    async def claim(self, agent_id: str, *, claimer: str,
                    lease_duration_ms: int | None = None) -> Claim | None:
        """Claim the next visible message under a lease (``None`` lease: the mailbox's)."""
        return await self._claim(*self._check_claim(agent_id, claimer, lease_duration_ms))

    async def _claim(self, agent_id: str, claimer: str, lease: int | None) -> Claim | None:
        """The backend's claim, after the arguments were checked."""
        raise NotImplementedError

    def _check_claim(self, agent_id: str, claimer: str,
                     lease_duration_ms: int | None) -> tuple[str, str, int | None]:
        return (check_agent_id(agent_id, "mailbox id"), check_agent_id(claimer, "claimer"),
                check_optional_ms(lease_duration_ms, "lease_duration_ms"))
