"""The inbox on PostgreSQL, over an asyncpg pool or one asyncpg connection.

Fresh-vs-duplicate is one ``INSERT ... ON CONFLICT DO NOTHING RETURNING 1``: the primary
key decides, so a second connection inserting the same pair waits on the first one's
row lock and then sees either its commit (duplicate) or its rollback (fresh). That holds
at the default READ COMMITTED isolation; under REPEATABLE READ or SERIALIZABLE the
waiting transaction gets a serialization failure instead (a StorageError to retry).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from typing import Any

import asyncpg

from dovecote.durable._inbox_backend import (
    connection_lock,
    index_name,
    receive_in_transaction,
    rollback_quietly,
    storage_errors,
)

__all__ = ["PostgresBackend"]

_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    OSError,
)


class PostgresBackend:
    """Inbox statements in PostgreSQL's dialect (``TIMESTAMPTZ``, ``JSONB``)."""

    kind = "postgresql"

    def __init__(self, db: Any, table: str) -> None:
        self._pool: Any = db if isinstance(db, asyncpg.Pool) else None
        self._conn: Any = None if self._pool is not None else db
        self._lock = None if self._pool is not None else connection_lock(db)
        t = f'"{table}"'
        self._table = table
        self._schema = (
            f"CREATE TABLE IF NOT EXISTS {t} ("
            " message_id TEXT NOT NULL,"
            " source TEXT NOT NULL,"
            " received_at TIMESTAMPTZ NOT NULL,"
            " processed_at TIMESTAMPTZ NULL,"
            " metadata_json JSONB NULL,"
            " PRIMARY KEY (source, message_id))",
            f'CREATE INDEX IF NOT EXISTS "{index_name(table)}" ON {t} (received_at)',
        )
        self._insert = (
            f"INSERT INTO {t} (source, message_id, received_at, metadata_json) "
            "VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT DO NOTHING RETURNING 1"
        )
        self._mark = (
            f"UPDATE {t} SET processed_at = COALESCE(processed_at, $3) "
            "WHERE source = $1 AND message_id = $2 RETURNING 1"
        )
        self._exists = f"SELECT 1 FROM {t} WHERE source = $1 AND message_id = $2"
        self._sweep = (
            f"WITH gone AS (DELETE FROM {t} WHERE received_at < $1 AND "
            "(processed_at IS NOT NULL OR received_at < $2) "
            "RETURNING processed_at IS NOT NULL AS processed) "
            "SELECT count(*) FILTER (WHERE processed), count(*) FILTER (WHERE NOT processed) "
            "FROM gone"
        )
        self._count_all = f"SELECT count(*), count(processed_at) FROM {t}"
        self._count_source = f"{self._count_all} WHERE source = $1"

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        if self._pool is not None:
            with storage_errors("acquire a connection", _ERRORS):
                conn = await self._pool.acquire()
            try:
                yield conn
            finally:
                with storage_errors("release a connection", _ERRORS):
                    await self._pool.release(conn)
        else:
            assert self._lock is not None
            async with self._lock.hold():
                yield self._conn

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Any]:
        async with self.connection() as conn:
            tr = conn.transaction()  # a savepoint when the caller's transaction is open
            with storage_errors("begin a transaction", _ERRORS):
                await tr.start()
            try:
                yield conn
            except BaseException:
                await rollback_quietly(tr.rollback, _ERRORS)
                raise
            with storage_errors("commit", _ERRORS):
                await tr.commit()

    def receive(
        self,
        source: str,
        message_id: str,
        received_at: datetime,
        metadata: str | None,
        now: Callable[[], datetime],
    ) -> AbstractAsyncContextManager[tuple[Any, bool]]:
        return receive_in_transaction(self, source, message_id, received_at, metadata, now)

    async def declare(self) -> None:
        async with self.transaction() as tx:
            with storage_errors("declare its schema", _ERRORS):
                # two processes declaring at once would race inside CREATE ... IF NOT EXISTS
                await tx.execute(
                    "SELECT pg_advisory_xact_lock(hashtext($1))", f"dovecote.inbox:{self._table}"
                )
                for statement in self._schema:
                    await tx.execute(statement)

    async def insert(
        self, tx: Any, source: str, message_id: str, received_at: datetime, metadata: str | None
    ) -> bool:
        with storage_errors("record a receive", _ERRORS):
            row = await tx.fetchval(self._insert, source, message_id, received_at, metadata)
        return row is not None

    async def mark(self, tx: Any, source: str, message_id: str, processed_at: datetime) -> bool:
        with storage_errors("mark a message processed", _ERRORS):
            row = await tx.fetchval(self._mark, source, message_id, processed_at)
        return row is not None

    async def exists(self, conn: Any, source: str, message_id: str) -> bool:
        with storage_errors("look a message up", _ERRORS):
            row = await conn.fetchval(self._exists, source, message_id)
        return row is not None

    async def sweep(
        self, tx: Any, processed_before: datetime, unprocessed_before: datetime
    ) -> tuple[int, int]:
        with storage_errors("sweep", _ERRORS):
            row = await tx.fetchrow(self._sweep, processed_before, unprocessed_before)
        return int(row[0]), int(row[1])

    async def count(self, conn: Any, source: str | None) -> tuple[int, int]:
        with storage_errors("count rows", _ERRORS):
            if source is None:
                row = await conn.fetchrow(self._count_all)
            else:
                row = await conn.fetchrow(self._count_source, source)
        return int(row[0]), int(row[1])
