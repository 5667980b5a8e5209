"""The inbox on SQLite, over one aiosqlite connection (also to a store's own database file).

Fresh-vs-duplicate is one ``INSERT OR IGNORE ... RETURNING 1`` (SQLite 3.35+): the row
comes back only when it was inserted, so it needs no ``changes()`` call that another
statement on the same transaction could have moved. ``handle`` opens its transaction
with ``BEGIN IMMEDIATE``, which takes the write lock up front: a second process handling
the same message waits (the connection's busy timeout, 5 s by default) and then sees the
first one's commit, instead of both reading "fresh". Timestamps are ISO-8601 text in UTC
with microseconds, so text order is time order.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from dovecote.durable._errors import StorageError
from dovecote.durable._inbox_backend import (
    connection_lock,
    index_name,
    rollback_quietly,
    storage_errors,
)

__all__ = ["SqliteBackend"]

# aiosqlite raises ValueError when its connection is closed
_ERRORS: tuple[type[BaseException], ...] = (sqlite3.Error, ValueError)
_MIN_VERSION = (3, 35, 0)


def _text(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


class SqliteBackend:
    """Inbox statements in SQLite's dialect (``TEXT`` timestamps and JSON)."""

    kind = "sqlite"

    def __init__(self, db: Any, table: str) -> None:
        if sqlite3.sqlite_version_info < _MIN_VERSION:
            raise StorageError(
                f"the inbox needs SQLite 3.35 or newer (INSERT ... RETURNING); this Python "
                f"links SQLite {sqlite3.sqlite_version}"
            )
        self._conn = db
        self._lock = connection_lock(db)
        self._savepoints = itertools.count()
        t = f'"{table}"'
        self._schema = (
            f"CREATE TABLE IF NOT EXISTS {t} ("
            " message_id TEXT NOT NULL,"
            " source TEXT NOT NULL,"
            " received_at TEXT NOT NULL,"
            " processed_at TEXT NULL,"
            " metadata_json TEXT NULL,"
            " PRIMARY KEY (source, message_id)) WITHOUT ROWID",
            f'CREATE INDEX IF NOT EXISTS "{index_name(table)}" ON {t} (received_at)',
        )
        self._insert = (
            f"INSERT OR IGNORE INTO {t} (source, message_id, received_at, metadata_json) "
            "VALUES (?, ?, ?, ?) RETURNING 1"
        )
        self._mark = (
            f"UPDATE {t} SET processed_at = COALESCE(processed_at, ?) "
            "WHERE source = ? AND message_id = ? RETURNING 1"
        )
        self._exists = f"SELECT 1 FROM {t} WHERE source = ? AND message_id = ?"
        self._sweep = (
            f"DELETE FROM {t} WHERE received_at < ? AND "
            "(processed_at IS NOT NULL OR received_at < ?) "
            "RETURNING processed_at IS NOT NULL"
        )
        self._count_all = f"SELECT count(*), count(processed_at) FROM {t}"
        self._count_source = f"{self._count_all} WHERE source = ?"

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        async with self._lock.hold():
            yield self._conn

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Any]:
        async with self._lock.hold():
            conn = self._conn
            if conn.in_transaction:  # the caller's own transaction: nest in a savepoint
                name = f"dovecote_inbox_{next(self._savepoints)}"
                with storage_errors("open a savepoint", _ERRORS):
                    await conn.execute(f"SAVEPOINT {name}")
                try:
                    yield conn
                except BaseException:
                    await rollback_quietly(lambda: self._undo(name), _ERRORS)
                    raise
                with storage_errors("release a savepoint", _ERRORS):
                    await conn.execute(f"RELEASE {name}")
                return
            with storage_errors("begin a transaction", _ERRORS):
                await conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                await rollback_quietly(conn.rollback, _ERRORS)
                raise
            try:
                with storage_errors("commit", _ERRORS):
                    await conn.commit()
            except BaseException:
                await rollback_quietly(conn.rollback, _ERRORS)
                raise

    async def _undo(self, savepoint: str) -> None:
        await self._conn.execute(f"ROLLBACK TO {savepoint}")
        await self._conn.execute(f"RELEASE {savepoint}")

    async def declare(self) -> None:
        async with self.transaction() as tx:
            with storage_errors("declare its schema", _ERRORS):
                for statement in self._schema:
                    await tx.execute(statement)

    async def insert(
        self, tx: Any, source: str, message_id: str, received_at: datetime, metadata: str | None
    ) -> bool:
        with storage_errors("record a receive", _ERRORS):
            rows = await tx.execute_fetchall(
                self._insert, (source, message_id, _text(received_at), metadata)
            )
        return bool(rows)

    async def mark(self, tx: Any, source: str, message_id: str, processed_at: datetime) -> bool:
        with storage_errors("mark a message processed", _ERRORS):
            rows = await tx.execute_fetchall(self._mark, (_text(processed_at), source, message_id))
        return bool(rows)

    async def exists(self, conn: Any, source: str, message_id: str) -> bool:
        with storage_errors("look a message up", _ERRORS):
            rows = await conn.execute_fetchall(self._exists, (source, message_id))
        return bool(rows)

    async def sweep(
        self, tx: Any, processed_before: datetime, unprocessed_before: datetime
    ) -> tuple[int, int]:
        with storage_errors("sweep", _ERRORS):
            rows = await tx.execute_fetchall(
                self._sweep, (_text(processed_before), _text(unprocessed_before))
            )
        processed = sum(1 for (was_processed,) in rows if was_processed)
        return processed, len(rows) - processed

    async def count(self, conn: Any, source: str | None) -> tuple[int, int]:
        with storage_errors("count rows", _ERRORS):
            if source is None:
                rows = await conn.execute_fetchall(self._count_all)
            else:
                rows = await conn.execute_fetchall(self._count_source, (source,))
        total, processed = next(iter(rows))
        return int(total), int(processed)
