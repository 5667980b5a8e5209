"""The JSON shapes of seed 004's HTTP API (also MCP's results), as msgspec Structs.

Request bodies are decoded straight into these Structs at the edge (a missing field or a
wrong type is a 422 before the store is called); responses are built from the store's value
types by the ``*_json`` functions and encoded by one reused encoder. Field names and order
are upstream Postbox's, so a Postbox client reads them unchanged. The same Structs generate
the OpenAPI schemas.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Literal, TypeVar

import msgspec

from dovecote.durable import (
    Claim,
    DeadLetterRecord,
    InvalidRequestError,
    MailboxConfig,
    MailboxStats,
    StoredMessage,
)

__all__ = [
    "ClaimBody",
    "ClaimJson",
    "CommitBody",
    "CommittedJson",
    "DeadLetterJson",
    "DeletedJson",
    "EnsureBody",
    "ErrorJson",
    "FailureJson",
    "FanoutBody",
    "FanoutJson",
    "MailboxJson",
    "MessageJson",
    "PurgeBody",
    "RejectBody",
    "ReleaseBody",
    "ReplayBody",
    "SendBody",
    "StatsJson",
    "choice",
    "claim_json",
    "dead_letter_json",
    "decode_payload",
    "mailbox_json",
    "message_json",
    "stats_json",
]

_T = TypeVar("_T", bound=str)

# Integer ranges of the wire (upstream's u32 / u64 / i32 / i64). u64 fields stop at 2**62 so
# "now + delay" and the like still fit the databases' signed 64-bit integers.
U32 = Annotated[int, msgspec.Meta(ge=0, le=2**32 - 1)]
U64 = Annotated[int, msgspec.Meta(ge=0, le=2**62)]
I32 = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]
I64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]

Status = Literal["pending", "claimed", "committed", "dead_lettered"]
Reason = Literal["max_attempts_exceeded", "permanent_failure", "validation_failed", "expired"]
Ordering = Literal["fifo", "unordered", "priority"]
Kind = Literal["transient", "permanent"]


# --- request bodies -------------------------------------------------------------------


class EnsureBody(msgspec.Struct, omit_defaults=True):
    """POST /v1/mailboxes/{agent_id}; an omitted field takes the store's default."""

    capacity: U64 | None = None
    ordering_mode: str | None = None
    max_attempts: U32 | None = None
    lease_duration_ms: U64 | None = None
    max_payload_bytes: U64 | None = None
    dlq_retention_ms: U64 | None = None


class SendBody(msgspec.Struct, kw_only=True):
    """POST /v1/mailboxes/{agent_id}/send."""

    from_: str = msgspec.field(name="from")
    payload_base64: str
    headers: dict[str, str] | None = None
    priority: I32 = 0
    delay_ms: U64 = 0
    ttl_ms: U64 | None = None


class FanoutBody(SendBody, kw_only=True):
    """POST /v1/fanout: one message to every target, all or nothing."""

    targets: list[str]


class ClaimBody(msgspec.Struct):
    """POST /v1/mailboxes/{agent_id}/claim; no lease = the mailbox's lease_duration_ms."""

    claimer_id: str
    lease_duration_ms: U64 | None = None


class CommitBody(msgspec.Struct):
    """POST /v1/messages/{message_id}/commit; ``lease_token`` fences by claim."""

    claimer_id: str
    checkpoint_token: str
    lease_token: str | None = None


class ReleaseBody(msgspec.Struct):
    """POST /v1/messages/{message_id}/release."""

    claimer_id: str
    kind: str
    note: str | None = None
    lease_token: str | None = None


class RejectBody(msgspec.Struct):
    """POST /v1/messages/{message_id}/reject-validation."""

    note: str


class PurgeBody(msgspec.Struct):
    """DELETE /v1/mailboxes/{agent_id}/dead-letters."""

    before_ms: I64


class ReplayBody(msgspec.Struct):
    """POST /v1/dead-letters/{message_id}/replay; no target = the original mailbox."""

    replayed_by: str
    target_mailbox: str | None = None


# --- response bodies ------------------------------------------------------------------


class MailboxJson(msgspec.Struct):
    """A mailbox and its rules."""

    agent_id: str
    capacity: int
    ordering_mode: Ordering
    max_attempts: int
    lease_duration_ms: int
    max_payload_bytes: int
    dlq_retention_ms: int | None


class MessageJson(msgspec.Struct):
    """A message, payload in base64 (standard alphabet, padded)."""

    message_id: str
    mailbox_id: str
    sender_id: str
    payload_base64: str
    headers: dict[str, str]
    priority: int
    created_at_ms: int
    visible_at_ms: int
    status: Status
    attempt_count: int
    lease_expires_at_ms: int | None
    claimed_by: str | None
    committed_at_ms: int | None
    checkpoint_token: str | None
    expires_at_ms: int | None


class ClaimJson(msgspec.Struct):
    """A claimed message; ``lease_token`` is a dovecote extension for fenced settlement."""

    message: MessageJson
    lease_expires_at_ms: int
    lease_token: str


class FailureJson(msgspec.Struct):
    """One failed delivery in a dead letter's history."""

    attempt: int
    claimed_by: str | None
    failure_kind: Kind
    note: str | None
    at_ms: int


class DeadLetterJson(msgspec.Struct):
    """A dead-letter record."""

    message_id: str
    mailbox_id: str
    sender_id: str
    payload_base64: str
    headers: dict[str, str]
    priority: int
    created_at_ms: int
    attempt_count: int
    poison_reason: Reason
    dead_lettered_at_ms: int
    failure_history: list[FailureJson]


class StatsJson(msgspec.Struct):
    """A mailbox's counters."""

    agent_id: str
    pending_count: int
    claimed_count: int
    committed_count: int
    dead_lettered_count: int
    oldest_pending_at_ms: int | None


class FanoutJson(msgspec.Struct):
    """The messages a fanout created, one per target in target order."""

    messages: list[MessageJson]


class CommittedJson(msgspec.Struct):
    """Whether a message was committed in a mailbox."""

    committed: bool


class DeletedJson(msgspec.Struct):
    """How many dead-letter records a purge deleted."""

    deleted_count: int


class ErrorJson(msgspec.Struct):
    """Every error: a stable ``error`` code and a human ``message``."""

    error: str
    message: str


# --- conversions ----------------------------------------------------------------------


def choice(value: str, allowed: tuple[_T, ...], what: str) -> _T:
    """``value`` if it is one of ``allowed``, else a 400 ``bad_request`` naming them."""
    for option in allowed:
        if value == option:
            return option
    raise InvalidRequestError(
        f"bad request: unknown {what}: {value!r} (expected one of {', '.join(allowed)})"
    )


def decode_payload(text: str) -> bytes:
    """Standard padded base64 to bytes; anything else is a 400 ``bad_request``."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidRequestError(f"bad request: invalid base64 payload: {exc}") from None


def _b64(payload: bytes) -> str:
    return base64.b64encode(payload).decode("ascii")


def mailbox_json(m: MailboxConfig) -> MailboxJson:
    """The wire shape of a mailbox."""
    return MailboxJson(
        m.agent_id,
        m.capacity,
        m.ordering_mode,
        m.max_attempts,
        m.lease_duration_ms,
        m.max_payload_bytes,
        m.dlq_retention_ms,
    )


def message_json(m: StoredMessage) -> MessageJson:
    """The wire shape of a message."""
    return MessageJson(
        m.message_id,
        m.mailbox_id,
        m.sender_id,
        _b64(m.payload),
        dict(m.headers),
        m.priority,
        m.created_at_ms,
        m.visible_at_ms,
        m.status,
        m.attempt_count,
        m.lease_expires_at_ms,
        m.claimed_by,
        m.committed_at_ms,
        m.checkpoint_token,
        m.expires_at_ms,
    )


def claim_json(c: Claim) -> ClaimJson:
    """The wire shape of a claim."""
    return ClaimJson(message_json(c.message), c.lease_expires_at_ms, c.lease_token)


def dead_letter_json(d: DeadLetterRecord) -> DeadLetterJson:
    """The wire shape of a dead-letter record, with its failure history."""
    return DeadLetterJson(
        d.message_id,
        d.mailbox_id,
        d.sender_id,
        _b64(d.payload),
        dict(d.headers),
        d.priority,
        d.created_at_ms,
        d.attempt_count,
        d.poison_reason,
        d.dead_lettered_at_ms,
        [
            FailureJson(f.attempt, f.claimed_by, f.failure_kind, f.note, f.at_ms)
            for f in d.failure_history
        ],
    )


def stats_json(s: MailboxStats) -> StatsJson:
    """The wire shape of a mailbox's counters."""
    return StatsJson(
        s.agent_id,
        s.pending_count,
        s.claimed_count,
        s.committed_count,
        s.dead_lettered_count,
        s.oldest_pending_at_ms,
    )
