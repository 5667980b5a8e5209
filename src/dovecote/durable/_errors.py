"""Typed errors of the durable store and the inbox.

Every error carries the wire ``code`` and ``http_status`` that the gateway answers with
(seed 004's error table), so a front end translates an error in one place and never
by matching message text. Each is raised before anything in the store changes.
"""

from __future__ import annotations

from typing import ClassVar

from dovecote._errors import DovecoteError

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


class StoreError(DovecoteError):
    """Base of the durable store's errors; ``code`` and ``http_status`` name it on the wire."""

    code: ClassVar[str] = "storage_error"
    http_status: ClassVar[int] = 500


class InvalidRequestError(StoreError, ValueError):
    """The request is malformed: a bad id, payload, header, checkpoint token or URL."""

    code = "bad_request"
    http_status = 400


class NotFoundError(StoreError, LookupError):
    """The mailbox or message does not exist."""

    code = "not_found"
    http_status = 404


class MailboxNotFoundError(NotFoundError):
    """No mailbox has that agent id."""


class MessageNotFoundError(NotFoundError):
    """No live message has that id (it never existed, or it was dead-lettered)."""


class AlreadyCommittedError(StoreError):
    """The message was committed already; a second commit or a release is refused."""

    code = "already_committed"
    http_status = 409


class InvalidStateError(StoreError):
    """The message is not in a state that allows this: not claimed, not yours, lease lost."""

    code = "invalid_state"
    http_status = 422


class CapacityError(StoreError):
    """The mailbox is at capacity (pending, delayed included, plus claimed)."""

    code = "mailbox_full"
    http_status = 503


class StorageError(StoreError):
    """The database failed underneath the store (I/O, connection, constraint)."""

    code = "storage_error"
    http_status = 500
