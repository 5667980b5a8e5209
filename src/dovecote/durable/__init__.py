"""The durable layer: the seed-004 lease-based store (SQLite, PostgreSQL), durable actor
mailboxes and the seed-001 inbox.

Nothing in the core imports this package; it plugs into the seams the core offers.
"""

from dovecote.durable._errors import (
    AlreadyCommittedError,
    CapacityError,
    InvalidRequestError,
    InvalidStateError,
    MailboxNotFoundError,
    MessageNotFoundError,
    NotFoundError,
    StorageError,
    StoreError,
)

__all__ = [
    "AlreadyCommittedError",
    "CapacityError",
    "InvalidRequestError",
    "InvalidStateError",
    "MailboxNotFoundError",
    "MessageNotFoundError",
    "NotFoundError",
    "StorageError",
    "StoreError",
]
