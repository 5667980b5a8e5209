"""The SQLite writer thread: one connection, one queue, group commit.

Every operation is a plain function ``op(txn, *args)`` run on the thread that owns the
connection. The thread takes everything queued since its last turn and runs it in ONE
transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``), each operation inside its own
savepoint, so a failing operation (a full mailbox) undoes only itself; then it hands all
the results back to the event loop in one ``call_soon_threadsafe``. Many concurrent
senders therefore share one fsync and one thread hop, and a lone caller pays one hop
each way (stdlib ``sqlite3``, no per-call executor). Results reach the caller only after
the transaction committed, so an acknowledged send is on disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from dovecote.durable._errors import StorageError, StoreError
from dovecote.durable._model import MailboxConfig
from dovecote.durable._sqlite_schema import MAILBOX_COLUMNS, SCHEMA, row_to_mailbox

__all__ = ["Durability", "SqliteEngine", "Txn"]

T = TypeVar("T")
Durability = Literal["full", "normal"]
#: the most operations one transaction takes (bounds the latency of a batch)
MAX_BATCH = 1024
_STOP = object()


class Txn:
    """What an operation sees: the connection and the committed mailbox cache."""

    __slots__ = ("_cache", "_fresh", "conn")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._cache: dict[str, MailboxConfig] = {}
        # configs read or created inside the open transaction; cached once it commits
        self._fresh: list[MailboxConfig] = []

    def mailbox(self, agent_id: str) -> MailboxConfig | None:
        """The mailbox's configuration (configs never change once created, so cached)."""
        config = self._cache.get(agent_id)
        if config is not None:
            return config
        for fresh in self._fresh:
            if fresh.agent_id == agent_id:
                return fresh
        row = self.conn.execute(
            f"SELECT {MAILBOX_COLUMNS} FROM mailboxes WHERE agent_id = ?", (agent_id,)
        ).fetchone()
        if row is None:
            return None
        config = row_to_mailbox(row)
        self._fresh.append(config)
        return config

    def create_mailbox(self, config: MailboxConfig, now: int) -> MailboxConfig:
        """Insert a mailbox (or read the one another process created first)."""
        cursor = self.conn.execute(
            "INSERT INTO mailboxes (agent_id, capacity, ordering_mode, max_attempts, "
            "lease_duration_ms, max_payload_bytes, dlq_retention_ms, created_at_ms) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id) DO NOTHING",
            (config.agent_id, config.capacity, config.ordering_mode, config.max_attempts,
             config.lease_duration_ms, config.max_payload_bytes, config.dlq_retention_ms, now),
        )
        if cursor.rowcount == 0:
            existing = self.mailbox(config.agent_id)
            assert existing is not None
            return existing
        self._fresh.append(config)
        return config

    def _mark(self) -> int:
        return len(self._fresh)

    def _undo(self, mark: int) -> None:
        del self._fresh[mark:]

    def _committed(self) -> None:
        for config in self._fresh:
            self._cache[config.agent_id] = config
        self._fresh.clear()


class SqliteEngine:
    """Owns the connection and its thread; :meth:`run` queues an operation."""

    def __init__(self, path: str, *, durability: Durability = "full",
                 busy_timeout: float = 30.0) -> None:
        self.path = path
        self.durability = durability
        self._busy_timeout = busy_timeout
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._ready: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self.batches = 0  # transactions run (a batch is one transaction)
        self.operations = 0

    async def start(self) -> None:
        """Start the thread, open the database and create the schema."""
        loop = self._loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._thread = threading.Thread(
            target=self._main, name=f"dovecote-sqlite:{self.path}", daemon=True
        )
        self._thread.start()
        await self._ready

    def run(self, op: Callable[..., T], *args: Any, write: bool = True) -> asyncio.Future[T]:
        """Queue ``op(txn, *args)``; the future resolves after its transaction committed."""
        if self._closed:
            raise StorageError("the store is closed")
        assert self._loop is not None
        future: asyncio.Future[T] = self._loop.create_future()
        self._queue.put((op, args, future, write))
        return future

    async def close(self) -> None:
        """Finish what is queued, close the connection and join the thread (idempotent)."""
        if self._closed or self._thread is None:
            self._closed = True
            return
        self._closed = True
        self._queue.put(_STOP)
        thread = self._thread
        await asyncio.get_running_loop().run_in_executor(None, thread.join)

    # -- the thread ---------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None,
                               check_same_thread=False, cached_statements=256)
        if self.path != ":memory:":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={'FULL' if self.durability == 'full' else 'NORMAL'}")
        conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout * 1000)}")
        try:
            conn.executescript(f"BEGIN IMMEDIATE;\n{SCHEMA}\nCOMMIT;")
        except BaseException:
            _rollback(conn)
            conn.close()
            raise
        return conn

    def _main(self) -> None:
        assert self._loop is not None
        assert self._ready is not None
        try:
            conn = self._connect()
        except Exception as error:  # reported to start(); nothing else to clean up
            failure = StorageError(f"cannot open SQLite database {self.path!r}: {error}")
            self._loop.call_soon_threadsafe(_fail, self._ready, failure)
            return
        self._loop.call_soon_threadsafe(_succeed, self._ready, None)
        txn = Txn(conn)
        try:
            while True:
                first = self._queue.get()
                if first is _STOP:
                    return
                batch = [first]
                while len(batch) < MAX_BATCH:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is _STOP:
                        self._queue.put(_STOP)  # finish this batch, then stop
                        break
                    batch.append(item)
                results = self._run_batch(txn, batch)
                self._loop.call_soon_threadsafe(_resolve, results)
        finally:
            conn.close()

    def _run_batch(self, txn: Txn, batch: list[Any]) -> list[tuple[Any, bool, Any]]:
        conn = txn.conn
        self.batches += 1
        self.operations += len(batch)
        writes = any(item[3] for item in batch)
        single = len(batch) == 1
        results: list[tuple[Any, bool, Any]] = []
        try:
            conn.execute("BEGIN IMMEDIATE" if writes else "BEGIN")
        except sqlite3.Error as error:
            begin_failure = StorageError(f"cannot begin a transaction: {error}")
            return [(item[2], False, begin_failure) for item in batch]
        for op, args, future, _write in batch:
            mark = txn._mark()
            try:
                if not single:
                    conn.execute("SAVEPOINT op")
                value = op(txn, *args)
                if not single:
                    conn.execute("RELEASE op")
            except Exception as error:
                txn._undo(mark)
                failure: StoreError = (
                    error if isinstance(error, StoreError) else _storage_error(error)
                )
                if single:
                    _rollback(conn)
                    txn._undo(0)
                    return [(future, False, failure)]
                try:
                    conn.execute("ROLLBACK TO op")
                    conn.execute("RELEASE op")
                except sqlite3.Error:
                    pass  # a failed savepoint rollback leaves only the batch rollback below
                results.append((future, False, failure))
            else:
                results.append((future, True, value))
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as error:
            _rollback(conn)
            txn._undo(0)
            commit_failure = StorageError(f"commit failed: {error}")
            return [(future, False, commit_failure) for future, _ok, _value in results]
        txn._committed()
        return results


def _storage_error(error: BaseException) -> StorageError:
    wrapped = StorageError(f"SQLite error: {error}")
    wrapped.__cause__ = error
    return wrapped


def _rollback(conn: sqlite3.Connection) -> None:
    with contextlib.suppress(sqlite3.Error):  # no transaction left to roll back
        conn.execute("ROLLBACK")


def _succeed(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _fail(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


def _resolve(results: list[tuple[Any, bool, Any]]) -> None:
    for future, ok, value in results:
        if future.done():
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
