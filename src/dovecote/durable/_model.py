"""The durable store's value types: what a mailbox, a message, a claim and a dead letter are.

Field names are seed 004's (and upstream Postbox's wire names), so the gateway translates
them to JSON, protobuf and MCP without renaming. Times are integer milliseconds since the
Unix epoch, as on the wire.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import attrs

__all__ = [
    "DEAD_LETTER_REASONS",
    "MESSAGE_STATUSES",
    "ORDERING_MODES",
    "RELEASE_KINDS",
    "Claim",
    "DeadLetterReason",
    "DeadLetterRecord",
    "FailureRecord",
    "MailboxConfig",
    "MailboxStats",
    "MessageStatus",
    "OrderingMode",
    "ReleaseKind",
    "StoredMessage",
    "SweepResult",
]

OrderingMode = Literal["fifo", "unordered", "priority"]
MessageStatus = Literal["pending", "claimed", "committed", "dead_lettered"]
ReleaseKind = Literal["transient", "permanent"]
DeadLetterReason = Literal[
    "max_attempts_exceeded", "permanent_failure", "validation_failed", "expired"
]

ORDERING_MODES: tuple[OrderingMode, ...] = ("fifo", "unordered", "priority")
MESSAGE_STATUSES: tuple[MessageStatus, ...] = ("pending", "claimed", "committed", "dead_lettered")
RELEASE_KINDS: tuple[ReleaseKind, ...] = ("transient", "permanent")
DEAD_LETTER_REASONS: tuple[DeadLetterReason, ...] = (
    "max_attempts_exceeded",
    "permanent_failure",
    "validation_failed",
    "expired",
)


@attrs.frozen(slots=True)
class MailboxConfig:
    """A named mailbox and its rules (created once by ``ensure_mailbox``)."""

    agent_id: str
    capacity: int = 10_000
    ordering_mode: OrderingMode = "fifo"
    max_attempts: int = 5
    lease_duration_ms: int = 60_000
    max_payload_bytes: int = 1_048_576
    dlq_retention_ms: int | None = None


@attrs.frozen(slots=True)
class StoredMessage:
    """One message as the store holds it; ``message_id`` is a ULID string."""

    message_id: str
    mailbox_id: str
    sender_id: str
    payload: bytes
    headers: Mapping[str, str]
    priority: int
    created_at_ms: int
    visible_at_ms: int
    status: MessageStatus
    attempt_count: int
    lease_expires_at_ms: int | None = None
    claimed_by: str | None = None
    committed_at_ms: int | None = None
    checkpoint_token: str | None = None
    expires_at_ms: int | None = None


@attrs.frozen(slots=True)
class Claim:
    """A message held under a lease; settle it with ``commit`` or ``release``.

    ``lease_token`` tells this claim apart from any later claim of the same message, even
    by a claimer with the same id: pass it to ``commit`` / ``release`` to be fenced by claim.
    """

    message: StoredMessage
    lease_expires_at_ms: int
    lease_token: str


@attrs.frozen(slots=True)
class FailureRecord:
    """One failed delivery in a dead letter's history."""

    attempt: int
    claimed_by: str | None
    failure_kind: ReleaseKind
    note: str | None
    at_ms: int


@attrs.frozen(slots=True)
class DeadLetterRecord:
    """A message moved out of the live set, with why and what happened to it before."""

    message_id: str
    mailbox_id: str
    sender_id: str
    payload: bytes
    headers: Mapping[str, str]
    priority: int
    created_at_ms: int
    attempt_count: int
    poison_reason: DeadLetterReason
    dead_lettered_at_ms: int
    failure_history: tuple[FailureRecord, ...] = ()


@attrs.frozen(slots=True)
class MailboxStats:
    """Counters of one mailbox; ``oldest_pending_at_ms`` includes delayed messages."""

    agent_id: str
    pending_count: int
    claimed_count: int
    committed_count: int
    dead_lettered_count: int
    oldest_pending_at_ms: int | None


@attrs.frozen(slots=True)
class SweepResult:
    """What one sweeper tick did."""

    leases_recovered: int = 0
    expired: int = 0
    retention_purged: int = 0
