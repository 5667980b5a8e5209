"""PostgreSQL rows as the store's value types, and the refusal a row's state explains."""

from __future__ import annotations

from typing import Any

import msgspec

from dovecote.durable._errors import (
    AlreadyCommittedError,
    InvalidStateError,
    MessageNotFoundError,
    StoreError,
)
from dovecote.durable._model import DeadLetterRecord, FailureRecord, StoredMessage
from dovecote.durable._sqlite_schema import decode_headers

__all__ = ["row_to_claimed", "row_to_dead_letter", "row_to_message", "settle_refusal"]

_history = msgspec.json.Decoder(list[dict[str, Any]])


def row_to_message(row: Any, offset: int = 0) -> StoredMessage:
    """A ``MESSAGE_COLUMNS`` row (from column ``offset`` on) as a :class:`StoredMessage`."""
    r = tuple(row)[offset:]
    return StoredMessage(r[0], r[1], r[2], r[3], decode_headers(r[4]), *r[5:15])


def row_to_claimed(row: Any, mailbox_id: str, claimer: str, lease_expires_at_ms: int
                   ) -> StoredMessage:
    """A fast claim's row (its kind, then ``FAST_COLUMNS``) as the claimed message."""
    return StoredMessage(row[1], mailbox_id, row[2], row[3], decode_headers(row[4]), row[5],
                         row[6], row[7], "claimed", row[8], lease_expires_at_ms, claimer,
                         None, None, row[9])


def row_to_dead_letter(row: Any) -> DeadLetterRecord:
    """A ``DEAD_LETTER_COLUMNS`` row as a :class:`DeadLetterRecord`."""
    history = tuple(
        FailureRecord(f["attempt"], f["claimed_by"], f["failure_kind"], f["note"], f["at_ms"])
        for f in _history.decode(row[10])
    )
    return DeadLetterRecord(row[0], row[1], row[2], row[3], decode_headers(row[4]), row[5],
                            row[6], row[7], row[8], row[9], history)


def settle_refusal(message_id: str, claimer: str, state: Any, *,
                   lease_token: str | None) -> StoreError:
    """Why a commit or release of ``message_id`` matched nothing (from the row before)."""
    status, holder, token = state["status"], state["claimed_by"], state["lease_token"]
    if status is None:
        return MessageNotFoundError(f"message not found: {message_id}")
    if status == "committed":
        return AlreadyCommittedError(f"message {message_id} is already committed")
    if status != "claimed":
        return InvalidStateError(f"message {message_id} is not claimed (lease lost or released)")
    if holder != claimer:
        return InvalidStateError(f"message {message_id} is claimed by {holder}, not {claimer}")
    if lease_token is not None and lease_token != token:
        return InvalidStateError(
            f"message {message_id}: lease lost (it was claimed again after this lease)"
        )
    # the row changed between the statement's snapshot and its update: a concurrent claim
    return InvalidStateError(f"message {message_id}: lease lost to a concurrent claim")
