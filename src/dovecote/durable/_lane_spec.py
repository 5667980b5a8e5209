"""What a durable lane is made from (:class:`LaneSpec`) and how a tell is stored: the
store header that carries its sender, and the ``sender_id`` it is stored under."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import attrs

from dovecote.codec import Codec
from dovecote.durable._retriable import RetriablePredicate

if TYPE_CHECKING:
    from dovecote.actors import ActorRef
    from dovecote.durable._protocol import MailboxStore

__all__ = ["ANONYMOUS", "SENDER_HEADER", "STORE_FAILED", "LaneSpec", "sender_header",
           "sender_id"]

SENDER_HEADER = "dovecote-sender"
"""Store header holding the address of a tell's sender (it comes back as ``sender``)."""
STORE_FAILED = "store-failed"
"""DeadLetter reason of a tell whose write to the store failed."""
ANONYMOUS = "anonymous"
"""Store ``sender_id`` of a tell without a sender."""


@attrs.frozen(slots=True)
class LaneSpec:
    """What ``with_durable_mailbox`` was given (shared by every actor spawned with it)."""

    store: MailboxStore
    mailbox: str | None
    codec: Codec
    lease_duration_ms: int | None
    retriable: RetriablePredicate
    claim_ahead: int = 16


def sender_id(sender: ActorRef | None) -> str:
    """The store ``sender_id`` of a tell: the sender's path (hashed past 256 bytes)."""
    if sender is None:
        return ANONYMOUS
    path = sender.path
    if len(path.encode()) <= 256:
        return path
    return "sender-" + hashlib.sha256(path.encode()).hexdigest()


def sender_header(sender: ActorRef | None) -> dict[str, str] | None:
    """The store headers of a tell from ``sender`` (its address, to reply to)."""
    return None if sender is None else {SENDER_HEADER: sender.address}
