"""What the inbox needs from a database, and how it picks the backend for a ``db`` object.

A backend turns the inbox's five statements into its dialect and owns the transaction
shape. Two rules hold for both:

- A single shared connection (an ``asyncpg.Connection`` or an ``aiosqlite.Connection``)
  runs one inbox operation at a time: two tasks interleaving statements on one
  connection would share a transaction. The lock is per connection (two ``Inbox`` objects
  on one connection share it) and re-entrant for the task holding it, so a handler may
  call the inbox again on its own connection.
- Database errors from the inbox's own statements become ``StorageError``; a handler's
  exception passes through untouched.
"""

from __future__ import annotations

import asyncio
import hashlib
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from datetime import datetime
from typing import Any, Protocol

from dovecote.durable._errors import InvalidRequestError, StorageError
from dovecote.observability import get_logger

__all__ = [
    "ConnectionLock",
    "InboxBackend",
    "connection_lock",
    "index_name",
    "open_backend",
    "receive_in_transaction",
    "rollback_quietly",
    "storage_error",
    "storage_errors",
]

_log = get_logger("dovecote.durable.inbox")


class InboxBackend(Protocol):
    """One database dialect under the inbox (PostgreSQL or SQLite)."""

    #: "postgresql" or "sqlite"
    kind: str

    def connection(self) -> AbstractAsyncContextManager[Any]:
        """An async context manager: the native connection, held for one operation."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Any]:
        """An async context manager: the native connection inside a transaction.

        It commits when the block ends and rolls back when it raises (re-raising unchanged);
        inside a transaction the caller already opened it is a savepoint instead.
        """
        ...

    def receive(
        self,
        source: str,
        message_id: str,
        received_at: datetime,
        metadata: str | None,
        now: Callable[[], datetime],
    ) -> AbstractAsyncContextManager[tuple[Any, bool]]:
        """What ``handle`` runs in: a transaction with the receive recorded first.

        Yields ``(tx, fresh)``. A clean exit marks the row processed (when fresh, at
        ``now()``) and commits; a raise rolls everything back and re-raises unchanged.
        """
        ...

    async def declare(self) -> None:
        """Create the table and its index if they do not exist (idempotent, race-safe)."""

    async def insert(
        self, tx: Any, source: str, message_id: str, received_at: datetime, metadata: str | None
    ) -> bool:
        """Record a receive in one statement; True when the pair was not there (fresh)."""
        ...

    async def mark(self, tx: Any, source: str, message_id: str, processed_at: datetime) -> bool:
        """Set processed_at (first time only); False when no such row exists."""
        ...

    async def exists(self, conn: Any, source: str, message_id: str) -> bool:
        """Whether the pair has been recorded."""
        ...

    async def sweep(
        self, tx: Any, processed_before: datetime, unprocessed_before: datetime
    ) -> tuple[int, int]:
        """Delete aged rows; (processed rows deleted, unprocessed rows deleted)."""
        ...

    async def count(self, conn: Any, source: str | None) -> tuple[int, int]:
        """(total rows, processed rows), for one source or all."""
        ...


@asynccontextmanager
async def receive_in_transaction(
    backend: InboxBackend,
    source: str,
    message_id: str,
    received_at: datetime,
    metadata: str | None,
    now: Callable[[], datetime],
) -> AsyncIterator[tuple[Any, bool]]:
    """``InboxBackend.receive`` from the backend's own transaction, insert and mark."""
    async with backend.transaction() as tx:
        fresh = await backend.insert(tx, source, message_id, received_at, metadata)
        yield tx, fresh
        if fresh:
            await backend.mark(tx, source, message_id, now())


class ConnectionLock:
    """Serialises inbox operations on one shared connection; re-entrant per task."""

    __slots__ = ("__weakref__", "_depth", "_lock", "_owner")

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._owner: asyncio.Task[Any] | None = None
        self._depth = 0

    def hold(self) -> ConnectionLock:
        """``async with lock.hold():`` runs the block while holding the connection."""
        return self

    async def __aenter__(self) -> None:
        task = asyncio.current_task()
        if task is not None and self._owner is task:
            self._depth += 1
            return
        await self._lock.acquire()
        self._owner = task

    async def __aexit__(self, *exc: object) -> None:
        if self._depth:
            self._depth -= 1
            return
        self._owner = None
        self._lock.release()


_LOCKS: weakref.WeakKeyDictionary[Any, ConnectionLock] = weakref.WeakKeyDictionary()


def connection_lock(conn: Any) -> ConnectionLock:
    """The one lock for *conn*, shared by every inbox over it."""
    lock = _LOCKS.get(conn)
    if lock is None:
        lock = _LOCKS[conn] = ConnectionLock()
    return lock


def index_name(table: str) -> str:
    """The received_at index's name: unique per table and within PostgreSQL's 63 bytes."""
    digest = hashlib.sha1(table.encode(), usedforsecurity=False).hexdigest()[:8]
    return f"ix_{table[:40]}_{digest}_received"


@contextmanager
def storage_errors(action: str, errors: tuple[type[BaseException], ...]) -> Iterator[None]:
    """Turn a database failure of the inbox's own statement into ``StorageError``."""
    try:
        yield
    except errors as exc:
        raise storage_error(action, exc) from exc


def storage_error(action: str, exc: BaseException) -> StorageError:
    """The ``StorageError`` for a failed *action* (raise it ``from exc``)."""
    return StorageError(f"inbox could not {action}: {type(exc).__name__}: {exc}")


async def rollback_quietly(rollback: Any, errors: tuple[type[BaseException], ...]) -> None:
    """Roll back on the way out of a failed block without hiding the block's exception."""
    try:
        await asyncio.shield(rollback())
    except errors as exc:
        _log.warning("inbox.rollback_failed", error=f"{type(exc).__name__}: {exc}")


def open_backend(db: object, table: str) -> InboxBackend:
    """The backend for *db*: an asyncpg pool or connection, or an aiosqlite connection."""
    try:
        import asyncpg
        import asyncpg.pool
    except ImportError:  # pragma: no cover - the postgres extra is not installed
        pass
    else:
        if isinstance(db, asyncpg.Pool | asyncpg.Connection | asyncpg.pool.PoolConnectionProxy):
            from dovecote.durable._inbox_postgres import PostgresBackend

            return PostgresBackend(db, table)
    try:
        import aiosqlite
    except ImportError:  # pragma: no cover - the sqlite extra is not installed
        pass
    else:
        if isinstance(db, aiosqlite.Connection):
            from dovecote.durable._inbox_sqlite import SqliteBackend

            return SqliteBackend(db, table)
    raise InvalidRequestError(
        "Inbox needs an asyncpg pool or connection (extra 'postgres') or an aiosqlite "
        f"connection (extra 'sqlite'), not {type(db).__module__}.{type(db).__qualname__}"
    )
