"""The durable layer: the seed-004 lease-based store (SQLite, PostgreSQL), durable actor
mailboxes and the seed-001 inbox.

Nothing in the core imports this package; it plugs into the seams the core offers.
"""

from dovecote.durable._actor_options import DurableMailboxFactory
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
from dovecote.durable._inbox import Inbox
from dovecote.durable._inbox_actor import durable_message
from dovecote.durable._inbox_model import InboxOutcome, InboxStats
from dovecote.durable._lane_spec import SENDER_HEADER, STORE_FAILED
from dovecote.durable._metrics import StoreMetrics
from dovecote.durable._model import (
    Claim,
    DeadLetterRecord,
    FailureRecord,
    MailboxConfig,
    MailboxStats,
    StoredMessage,
    SweepResult,
)
from dovecote.durable._open import StoreOpener, open_store
from dovecote.durable._protocol import MailboxStore
from dovecote.durable._retriable import NonRetriableError, is_retriable
from dovecote.durable._sqlite import SqliteStore
from dovecote.durable._store_provider import StoreProvider, store_mailbox_of
from dovecote.durable._sweeper import Sweeper

__all__ = [
    "SENDER_HEADER",
    "STORE_FAILED",
    "AlreadyCommittedError",
    "CapacityError",
    "Claim",
    "DeadLetterRecord",
    "DurableMailboxFactory",
    "FailureRecord",
    "Inbox",
    "InboxOutcome",
    "InboxStats",
    "InvalidRequestError",
    "InvalidStateError",
    "MailboxConfig",
    "MailboxNotFoundError",
    "MailboxStats",
    "MailboxStore",
    "MessageNotFoundError",
    "NonRetriableError",
    "NotFoundError",
    "SqliteStore",
    "StorageError",
    "StoreError",
    "StoreMetrics",
    "StoreOpener",
    "StoreProvider",
    "StoredMessage",
    "SweepResult",
    "Sweeper",
    "durable_message",
    "is_retriable",
    "open_store",
    "store_mailbox_of",
]
