"""The ``MailboxStore`` protocol: what every durable backend offers (seed 004's operations)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Protocol, runtime_checkable

from prometheus_client import CollectorRegistry

from dovecote.durable._model import (
    Claim,
    DeadLetterReason,
    DeadLetterRecord,
    MailboxConfig,
    MailboxStats,
    OrderingMode,
    ReleaseKind,
    StoredMessage,
    SweepResult,
)

__all__ = ["MailboxStore"]


@runtime_checkable
class MailboxStore(Protocol):
    """A durable, lease-based mailbox store (``SqliteStore``, ``PostgresStore``).

    Every operation validates its input and raises a typed ``StoreError`` before anything
    changes. See API.md "Durable store" for the rules each method follows.
    """

    @property
    def metrics(self) -> CollectorRegistry:
        """The store's registry with the seven ``postbox_*`` counters."""
        ...

    async def ensure_mailbox(
        self,
        agent_id: str,
        *,
        capacity: int = 10_000,
        ordering_mode: OrderingMode = "fifo",
        max_attempts: int = 5,
        lease_duration_ms: int = 60_000,
        max_payload_bytes: int = 1_048_576,
        dlq_retention_ms: int | None = None,
    ) -> MailboxConfig:
        """Create the mailbox if it does not exist; an existing one is returned unchanged."""
        ...

    async def get_mailbox(self, agent_id: str) -> MailboxConfig:
        """The mailbox's configuration (``MailboxNotFoundError`` when unknown)."""
        ...

    async def list_mailboxes(
        self, *, limit: int = 100, after: str | None = None
    ) -> list[MailboxConfig]:
        """Mailboxes in ascending ``agent_id`` order, strictly after the cursor ``after``."""
        ...

    async def stats(self, agent_id: str) -> MailboxStats:
        """Counters of one mailbox."""
        ...

    async def send(
        self,
        to: str,
        payload: bytes,
        *,
        sender: str,
        headers: Mapping[str, str] | None = None,
        priority: int = 0,
        delay_ms: int = 0,
        ttl_ms: int | None = None,
    ) -> StoredMessage:
        """Queue one message (an unknown mailbox is created with the defaults)."""
        ...

    async def fanout(
        self,
        targets: Iterable[str],
        payload: bytes,
        *,
        sender: str,
        headers: Mapping[str, str] | None = None,
        priority: int = 0,
        delay_ms: int = 0,
        ttl_ms: int | None = None,
    ) -> list[StoredMessage]:
        """Send one message to every target in one transaction: all or nothing."""
        ...

    async def peek(self, agent_id: str, *, max: int = 100) -> list[StoredMessage]:
        """What claims would return next, in that order, without claiming."""
        ...

    async def claim(
        self, agent_id: str, *, claimer: str, lease_duration_ms: int | None = None
    ) -> Claim | None:
        """Claim the next visible message under a lease, or ``None`` when there is none."""
        ...

    def claim_stream(
        self,
        agent_id: str,
        *,
        claimer: str,
        lease_duration_ms: int | None = None,
        max_messages: int | None = None,
    ) -> AsyncIterator[Claim]:
        """Yield each message as it becomes claimable (an async generator; no polling)."""
        ...

    async def commit(
        self,
        message_id: str,
        *,
        claimer: str,
        checkpoint_token: str,
        lease_token: str | None = None,
    ) -> None:
        """Settle a claimed message for good."""
        ...

    async def release(
        self,
        message_id: str,
        *,
        claimer: str,
        kind: ReleaseKind = "transient",
        note: str | None = None,
        lease_token: str | None = None,
    ) -> None:
        """Give a claimed message back (transient) or dead-letter it (permanent)."""
        ...

    async def unclaim(self, message_id: str, *, claimer: str, lease_token: str) -> None:
        """Give back a claimed message no handler saw: pending again, attempt uncounted."""
        ...

    async def reject_validation(self, message_id: str, *, note: str) -> None:
        """Dead-letter a pending message as ``validation_failed``."""
        ...

    async def is_committed(self, agent_id: str, message_id: str) -> bool:
        """Whether that message was committed in that mailbox."""
        ...

    async def dead_letters(
        self, agent_id: str, *, reason: DeadLetterReason | None = None, limit: int = 100
    ) -> list[DeadLetterRecord]:
        """Dead-letter records, oldest first, optionally of one reason."""
        ...

    async def replay(
        self, message_id: str, *, replayed_by: str, target_mailbox: str | None = None
    ) -> StoredMessage:
        """Send a dead letter again as a new message; the record is kept."""
        ...

    async def purge_dead_letters(self, agent_id: str, *, before_ms: int) -> int:
        """Delete records dead-lettered strictly before ``before_ms``; returns how many."""
        ...

    async def sweep(self) -> SweepResult:
        """One sweeper tick by hand: expired leases, TTL expiry, DLQ retention."""
        ...

    async def close(self) -> None:
        """Stop the sweeper and close the connections (idempotent)."""
        ...
