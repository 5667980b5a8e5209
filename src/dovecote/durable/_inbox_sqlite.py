"""The inbox on SQLite, over one aiosqlite connection (also to a store's own database file).

Fresh-vs-duplicate is one ``INSERT OR IGNORE ... RETURNING 1`` (SQLite 3.35+): the row
comes back only when it was inserted, so it needs no ``changes()`` call that another
statement on the same transaction could have moved. (``handle``'s fast path reads the
insert's own row count instead, in the same call on aiosqlite's thread, where nothing
can run in between; RETURNING costs more.) ``handle`` opens its transaction
with ``BEGIN IMMEDIATE``, which takes the write lock up front: a second process handling
the same message waits (the connection's busy timeout, 5 s by default) and then sees the
first one's commit, instead of both reading "fresh". Timestamps are ISO-8601 text in UTC
with microseconds, so text order is time order.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from dovecote.durable._errors import StorageError
from dovecote.durable._inbox_backend import (
    connection_lock,
    index_name,
    receive_in_transaction,
    rollback_quietly,
    storage_error,
    storage_errors,
)

__all__ = ["SqliteBackend"]

# aiosqlite raises ValueError when its connection is closed
_ERRORS: tuple[type[BaseException], ...] = (sqlite3.Error, ValueError)
_MIN_VERSION = (3, 35, 0)


def _text(moment: datetime) -> str:
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    return moment.isoformat(timespec="microseconds")


def _thread_runner(db: Any) -> Callable[..., Awaitable[Any]] | None:
    """aiosqlite's way to run a function in the connection's own thread, if it has one.

    ``Connection._execute(fn, *args)`` is how every aiosqlite method reaches its thread
    (stable since aiosqlite 0.11, still private); ``handle`` uses it to send two
    statements per trip. Without it, ``handle`` falls back to one trip per statement.
    """
    run = getattr(db, "_execute", None)
    if callable(run) and isinstance(getattr(type(db), "_conn", None), property):
        return lambda fn, *args: run(fn, db, *args)
    return None


# These two run in aiosqlite's thread, on the raw sqlite3 connection.


def _begin_and_insert(db: Any, insert: str, row: tuple[Any, ...]) -> bool:
    raw: sqlite3.Connection = db._conn
    raw.execute("BEGIN IMMEDIATE")
    try:
        # rowcount is sqlite3_changes() of this very statement (no other statement runs in
        # between, and rows a trigger changes do not count): 1 when inserted, 0 if ignored
        return raw.execute(insert, row).rowcount == 1
    except BaseException:
        raw.rollback()
        raise


def _mark_and_commit(db: Any, mark: tuple[str, tuple[Any, ...]] | None) -> None:
    raw: sqlite3.Connection = db._conn
    try:
        if mark is not None:
            raw.execute(*mark)
        raw.commit()
    except BaseException:
        raw.rollback()
        raise


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
        self._run_in_thread = _thread_runner(db)
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
        self._mark_only = (
            f"UPDATE {t} SET processed_at = COALESCE(processed_at, ?) "
            "WHERE source = ? AND message_id = ?"
        )
        self._mark = f"{self._mark_only} RETURNING 1"
        # handle's fast path reads the insert's row count in the thread (RETURNING costs more)
        self._insert_counted = self._insert.removesuffix(" RETURNING 1")
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
                async with self._savepoint() as tx:
                    yield tx
                return
            await self._step("begin a transaction", conn.execute, "BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                await rollback_quietly(conn.rollback, _ERRORS)
                raise
            await self._step("commit", conn.commit)

    @asynccontextmanager
    async def receive(
        self,
        source: str,
        message_id: str,
        received_at: datetime,
        metadata: str | None,
        now: Callable[[], datetime],
    ) -> AsyncIterator[tuple[Any, bool]]:
        run = self._run_in_thread
        async with self._lock.hold():
            conn = self._conn
            if run is None or conn.in_transaction:
                async with receive_in_transaction(
                    self, source, message_id, received_at, metadata, now
                ) as received:
                    yield received
                return
            # The fast path: BEGIN IMMEDIATE + the insert in one trip to aiosqlite's thread,
            # the mark + COMMIT in another, so handle costs the caller's transaction plus
            # nothing but statements (each trip to the thread costs more than a statement).
            row = (source, message_id, _text(received_at), metadata)
            fresh = await self._step(
                "record a receive", run, _begin_and_insert, self._insert_counted, row
            )
            try:
                yield conn, fresh
            except BaseException:
                await rollback_quietly(conn.rollback, _ERRORS)
                raise
            mark = (self._mark_only, (_text(now()), source, message_id)) if fresh else None
            await self._step("commit", run, _mark_and_commit, mark)

    async def _step(self, action: str, fn: Any, *args: Any) -> Any:
        """One trip to the connection's thread; on any failure (a cancellation included)
        roll back behind it, so the connection is never left inside a transaction."""
        try:
            return await fn(*args)
        except _ERRORS as exc:
            await rollback_quietly(self._conn.rollback, _ERRORS)
            raise storage_error(action, exc) from exc
        except BaseException:
            await rollback_quietly(self._conn.rollback, _ERRORS)
            raise

    @asynccontextmanager
    async def _savepoint(self) -> AsyncIterator[Any]:
        conn = self._conn
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
