"""SQLite schema of the store and the conversions between rows and value types.

``messages`` holds the live set (pending, claimed) and committed messages (kept for
``is_committed`` and ``committed_count``); ``dead_letters`` holds what left it. Partial
indexes keep each claim query a short index walk: pending messages in created order per
mailbox (fifo, unordered), by priority band (priority), claimed messages by sender (the
FIFO hold) and by lease expiry (recovery). ``mailboxes.live_count`` (pending + claimed)
makes the capacity check one conditional update instead of a count (a trigger doing the
same measured slower than the two statements).
"""

from __future__ import annotations

from typing import Any

import msgspec

from dovecote.durable._model import (
    DeadLetterRecord,
    FailureRecord,
    MailboxConfig,
    StoredMessage,
)

__all__ = [
    "DLQ_COLUMNS",
    "MAILBOX_COLUMNS",
    "MESSAGE_COLUMNS",
    "SCHEMA",
    "decode_failures",
    "decode_headers",
    "encode_failures",
    "encode_headers",
    "row_to_dead_letter",
    "row_to_mailbox",
    "row_to_message",
]

SCHEMA = """
CREATE TABLE IF NOT EXISTS mailboxes (
    agent_id          TEXT PRIMARY KEY,
    capacity          INTEGER NOT NULL,
    ordering_mode     TEXT NOT NULL,
    max_attempts      INTEGER NOT NULL,
    lease_duration_ms INTEGER NOT NULL,
    max_payload_bytes INTEGER NOT NULL,
    dlq_retention_ms  INTEGER,
    created_at_ms     INTEGER NOT NULL,
    live_count        INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS messages (
    message_id          TEXT PRIMARY KEY,
    mailbox_id          TEXT NOT NULL,
    sender_id           TEXT NOT NULL,
    payload             BLOB NOT NULL,
    headers             TEXT NOT NULL,
    priority            INTEGER NOT NULL,
    created_at_ms       INTEGER NOT NULL,
    visible_at_ms       INTEGER NOT NULL,
    status              TEXT NOT NULL,
    attempt_count       INTEGER NOT NULL,
    lease_expires_at_ms INTEGER,
    claimed_by          TEXT,
    committed_at_ms     INTEGER,
    checkpoint_token    TEXT,
    expires_at_ms       INTEGER,
    lease_token         TEXT,
    failures            TEXT
);
CREATE INDEX IF NOT EXISTS messages_pending_order
    ON messages (mailbox_id, created_at_ms, message_id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS messages_pending_priority
    ON messages (mailbox_id, priority DESC, created_at_ms, message_id)
    WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS messages_pending_ttl
    ON messages (expires_at_ms) WHERE status = 'pending' AND expires_at_ms IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_claimed_sender
    ON messages (mailbox_id, sender_id) WHERE status = 'claimed';
CREATE INDEX IF NOT EXISTS messages_claimed_lease
    ON messages (mailbox_id, lease_expires_at_ms) WHERE status = 'claimed';
CREATE INDEX IF NOT EXISTS messages_claimed_lease_all
    ON messages (lease_expires_at_ms) WHERE status = 'claimed';
CREATE INDEX IF NOT EXISTS messages_committed
    ON messages (mailbox_id) WHERE status = 'committed';

CREATE TABLE IF NOT EXISTS dead_letters (
    message_id          TEXT PRIMARY KEY,
    mailbox_id          TEXT NOT NULL,
    sender_id           TEXT NOT NULL,
    payload             BLOB NOT NULL,
    headers             TEXT NOT NULL,
    priority            INTEGER NOT NULL,
    created_at_ms       INTEGER NOT NULL,
    attempt_count       INTEGER NOT NULL,
    poison_reason       TEXT NOT NULL,
    dead_lettered_at_ms INTEGER NOT NULL,
    failure_history     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS dead_letters_by_time
    ON dead_letters (mailbox_id, dead_lettered_at_ms, message_id);
"""

MAILBOX_COLUMNS = (
    "agent_id, capacity, ordering_mode, max_attempts, lease_duration_ms, "
    "max_payload_bytes, dlq_retention_ms"
)
MESSAGE_COLUMNS = (
    "message_id, mailbox_id, sender_id, payload, headers, priority, created_at_ms, "
    "visible_at_ms, status, attempt_count, lease_expires_at_ms, claimed_by, "
    "committed_at_ms, checkpoint_token, expires_at_ms"
)
DLQ_COLUMNS = (
    "message_id, mailbox_id, sender_id, payload, headers, priority, created_at_ms, "
    "attempt_count, poison_reason, dead_lettered_at_ms, failure_history"
)

_EMPTY = "{}"
_json_encode = msgspec.json.Encoder().encode
_headers_decoder = msgspec.json.Decoder(dict[str, str])
_failures_decoder = msgspec.json.Decoder(list[tuple[int, str | None, str, str | None, int]])


def encode_headers(headers: dict[str, str]) -> str:
    """Headers as JSON text (``{}`` when empty, without encoding)."""
    return _json_encode(headers).decode() if headers else _EMPTY


def decode_headers(text: str) -> dict[str, str]:
    return {} if text == _EMPTY else _headers_decoder.decode(text)


def encode_failures(failures: list[FailureRecord]) -> str:
    """A failure history as compact JSON rows."""
    return _json_encode(
        [(f.attempt, f.claimed_by, f.failure_kind, f.note, f.at_ms) for f in failures]
    ).decode()


def decode_failures(text: str | None) -> list[FailureRecord]:
    """The failure history stored by :func:`encode_failures` (``None``: empty)."""
    if not text:
        return []
    return [
        FailureRecord(attempt=a, claimed_by=c, failure_kind=k, note=n, at_ms=t)  # type: ignore[arg-type]
        for a, c, k, n, t in _failures_decoder.decode(text)
    ]


def row_to_mailbox(row: Any) -> MailboxConfig:
    """A ``MAILBOX_COLUMNS`` row as a :class:`MailboxConfig`."""
    return MailboxConfig(*row)


def row_to_message(row: Any) -> StoredMessage:
    """A ``MESSAGE_COLUMNS`` row as a :class:`StoredMessage`."""
    return StoredMessage(
        row[0], row[1], row[2], row[3], decode_headers(row[4]), *row[5:]
    )


def row_to_dead_letter(row: Any) -> DeadLetterRecord:
    """A ``DLQ_COLUMNS`` row as a :class:`DeadLetterRecord`."""
    return DeadLetterRecord(
        row[0], row[1], row[2], row[3], decode_headers(row[4]), row[5], row[6], row[7],
        row[8], row[9], tuple(decode_failures(row[10])),
    )
