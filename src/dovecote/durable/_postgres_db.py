"""The PostgreSQL side of ``PostgresStore``: the pool, the schema, the listener, the errors.

- A small pool (``_postgres_pool``, ``min_size`` / ``max_size``) runs every statement; each is
  its own transaction unless a caller opens one (the admission slow path).
- :func:`storage_errors` is the ONE place asyncpg and socket errors become
  :class:`StorageError`; a deadlock or serialization failure is retried once first.
- The schema is created under a transaction-scoped advisory lock, so several processes
  opening the same database at once do not race on ``CREATE ... IF NOT EXISTS``.
- :class:`Listener` holds one dedicated connection that ``LISTEN``\\ s on the schema's
  channel and wakes this process's streams when any process notifies a mailbox.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import asyncpg

from dovecote.durable._errors import StorageError, StoreError
from dovecote.durable._postgres_pool import ConnectionPool
from dovecote.durable._postgres_sql import Statements
from dovecote.durable._wakeup import MailboxSignals
from dovecote.observability import get_logger

__all__ = ["Listener", "PgDatabase", "storage_errors"]

_log = get_logger("dovecote.durable.postgres")
_T = TypeVar("_T")
#: SQLSTATEs worth one retry: serialization_failure, deadlock_detected
_RETRY = frozenset({"40001", "40P01"})
#: every statement is prepared once per connection; a generic plan skips re-planning the
#: store's multi-CTE statements on each call (they are index walks whatever the values)
_SESSION = {"plan_cache_mode": "force_generic_plan", "application_name": "dovecote-store"}


def _describe(error: BaseException) -> str:
    state = getattr(error, "sqlstate", None)
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}{f' [{state}]' if state else ''}: {text}"


#: what a database failure raises (each becomes a :class:`StorageError`)
_FAILURES = (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError,
             OSError)


def _storage_error(doing: str, error: BaseException) -> StorageError:
    return StorageError(f"PostgreSQL failed while {doing}: {_describe(error)}")


@contextlib.contextmanager
def storage_errors(doing: str) -> Any:
    """Translate a database failure while ``doing`` into :class:`StorageError`."""
    try:
        yield
    except StoreError:
        raise
    except _FAILURES as error:
        raise _storage_error(doing, error) from error


class PgDatabase:
    """A pool over one database and schema, with the statements formatted for it."""

    __slots__ = ("dsn", "pool", "sql")

    def __init__(self, dsn: str, pool: ConnectionPool, sql: Statements) -> None:
        self.dsn = dsn
        self.pool = pool
        self.sql = sql

    @classmethod
    async def connect(cls, dsn: str, *, schema: str, min_size: int, max_size: int) -> PgDatabase:
        """Open the pool and create the schema if it is missing (safe under concurrency)."""
        sql = Statements.for_schema(schema)
        pool = ConnectionPool(dsn, min_size=min_size, max_size=max_size, settings=_SESSION)
        db = cls(dsn, pool, sql)
        try:
            with storage_errors("connecting"):
                await pool.start()
            with storage_errors("creating the schema"):
                async with pool.connection() as conn, conn.transaction():
                    await conn.execute(sql.lock_schema, schema)
                    for statement in sql.ddl:
                        await conn.execute(statement)
        except BaseException:
            await pool.close()
            raise
        return db

    async def run(self, doing: str, call: Callable[[Any], Awaitable[_T]]) -> _T:
        """``call(connection)`` on a pooled connection; one retry on deadlock/serialization."""
        # storage_errors written out: this runs for every statement
        for attempt in (1, 2):
            try:
                conn = await self.pool.acquire()
                try:
                    return await call(conn)
                except BaseException as error:
                    if not isinstance(error, asyncpg.PostgresError):
                        conn.terminate()  # a client-side failure: the connection is suspect
                    raise
                finally:
                    self.pool.release(conn)
            except StoreError:
                raise
            except _FAILURES as error:
                if attempt == 2 or getattr(error, "sqlstate", None) not in _RETRY:
                    raise _storage_error(doing, error) from error
                _log.info("retrying after a transient conflict", doing=doing, error=str(error))
        raise AssertionError("unreachable")  # pragma: no cover

    async def fetch(self, doing: str, query: str, *args: object) -> list[asyncpg.Record]:
        """All rows of one statement."""
        rows: list[asyncpg.Record] = await self.run(doing, lambda c: c.fetch(query, *args))
        return rows

    async def fetchrow(self, doing: str, query: str, *args: object) -> asyncpg.Record | None:
        """The first row of one statement (or ``None``)."""
        row: asyncpg.Record | None = await self.run(doing, lambda c: c.fetchrow(query, *args))
        return row

    async def fetchval(self, doing: str, query: str, *args: object) -> Any:
        """The first column of the first row of one statement."""
        return await self.run(doing, lambda c: c.fetchval(query, *args))

    async def drop_schema(self) -> None:
        """Drop the whole schema on a connection of its own (works after :meth:`close`)."""
        with storage_errors("dropping the schema"):
            conn = await asyncpg.connect(self.dsn)
            try:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{self.sql.schema}" CASCADE')
            finally:
                await conn.close()

    async def close(self) -> None:
        """Close the pool (connections in use close when they come back)."""
        with storage_errors("closing the pool"):
            await self.pool.close()


class Listener:
    """One connection that LISTENs on the schema's channel and wakes local streams.

    Started lazily by the first ``claim_stream``. If the connection drops, every waiter
    is woken (it claims again, so nothing a lost notification announced stays unseen)
    and the next stream iteration reconnects.
    """

    __slots__ = ("_conn", "_dsn", "_lock", "_signals", "channel", "notifications")

    def __init__(self, dsn: str, channel: str, signals: MailboxSignals) -> None:
        self._dsn = dsn
        self.channel = channel
        self._signals = signals
        self._conn: asyncpg.Connection | None = None
        self._lock = asyncio.Lock()
        #: notifications received (for tests and diagnostics)
        self.notifications = 0

    @property
    def connected(self) -> bool:
        """Whether the listening connection is up."""
        return self._conn is not None and not self._conn.is_closed()

    async def ensure(self) -> None:
        """Connect and LISTEN unless already listening."""
        if self.connected:
            return
        async with self._lock:
            if self.connected:
                return
            with storage_errors("listening for notifications"):
                conn = await asyncpg.connect(self._dsn)
                try:
                    await conn.add_listener(self.channel, self._on_notify)
                except BaseException:
                    await conn.close()
                    raise
            conn.add_termination_listener(self._on_lost)
            self._conn = conn
            # anything notified while nobody listened is found by the claim that follows
            self._signals.notify_all()

    def _on_notify(self, conn: Any, pid: int, channel: str, payload: object) -> None:
        self.notifications += 1
        self._signals.notify(str(payload))

    def _on_lost(self, conn: object) -> None:
        if conn is self._conn:
            self._conn = None
            _log.warning("the notification connection was lost; streams will reconnect")
            self._signals.notify_all()

    async def close(self) -> None:
        """Stop listening and close the connection (idempotent)."""
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            with contextlib.suppress(Exception):
                await conn.remove_listener(self.channel, self._on_notify)
            with contextlib.suppress(Exception):
                await conn.close(timeout=5)
