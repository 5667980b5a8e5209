"""The SQLite engine: one connection, group commit, the fsync off the event loop.

Every operation is a plain function ``op(txn, *args)``. When the engine is idle, the first
operation of a loop turn starts at once in its own transaction (a lone caller waits for
no turn of the loop; without an fsync to wait for, its future is done on return); the
operations queued after it in that turn run together in ONE transaction. All of it runs
on the loop thread (stdlib ``sqlite3``, no executor hop per call: statements against the
page cache take microseconds). The ``COMMIT`` of a ``durability="full"`` transaction,
whose fsync can take milliseconds, runs on a helper thread while the loop goes on and the
next batch queues up; a ``"normal"`` or in-memory commit (no fsync) runs inline, and so
does the fsync of a lone operation while recent fsyncs took under ``INLINE_SYNC_S`` (a
fast disk: the loop waits less than a thread hop would cost). Either way results are
handed out only after the commit, so an acknowledged send is on disk.

Contract for operations: an op that raises a ``StoreError`` has written nothing (it
checks before it writes, or wraps its writes in :meth:`Txn.atomic`); any other
exception rolls the whole batch back and fails every op in it with ``StorageError``.
An op may carry ``op.many(txn, [args, ...]) -> [(ok, value), ...]``: a run of calls of
that op in one batch is then handed over at once, to share statements.

Several processes can share the file: ``BEGIN IMMEDIATE`` takes the write lock, so a
claim is atomic. When another process holds the lock, the batch moves to the helper
thread, which waits up to ``busy_timeout`` without blocking the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from dovecote.durable._errors import StorageError, StoreError
from dovecote.durable._sqlite_schema import SCHEMA
from dovecote.durable._sqlite_txn import Txn

__all__ = ["Durability", "SqliteEngine"]

T = TypeVar("T")
Durability = Literal["full", "normal"]
#: the most operations one transaction takes (bounds the latency of a batch)
MAX_BATCH = 1024
#: a lone operation's fsync runs inline (on the loop thread, no thread hops) while recent
#: commits took less than this many seconds; slower ones run on the helper thread
INLINE_SYNC_S = 0.0003
_Item = tuple[Callable[..., Any], tuple[Any, ...], "asyncio.Future[Any]", bool]
_Result = tuple["asyncio.Future[Any]", bool, Any]


class SqliteEngine:
    """Owns the connection; :meth:`run` queues an operation for the next batch."""

    def __init__(self, path: str, *, durability: Durability = "full",
                 busy_timeout: float = 30.0) -> None:
        self.path = path
        self.durability = durability
        self._busy_timeout = busy_timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._txn: Txn | None = None
        self._pending: list[_Item] = []
        self._scheduled = False
        self._in_flight = False  # a batch is committing (or waiting) on the helper thread
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._idle: asyncio.Event | None = None
        self._closed = False
        #: the commit runs on the helper thread (it fsyncs); otherwise inline
        self._offload_commit = durability == "full" and path != ":memory:"
        self._sync_s = 1.0  # smoothed seconds a "full" COMMIT took (offloaded at first)
        self.batches = 0  # transactions run (a batch is one transaction)
        self.operations = 0
        self.lock_waits = 0  # batches that found another process's write lock

    async def start(self) -> None:
        """Open the database (on the helper thread) and create the schema."""
        self._loop = asyncio.get_running_loop()
        self._idle = asyncio.Event()
        self._thread = threading.Thread(target=self._worker, name=f"dovecote-sqlite:{self.path}",
                                        daemon=True)
        self._thread.start()
        future: asyncio.Future[sqlite3.Connection] = self._loop.create_future()
        self._submit(self._connect, future)
        try:
            conn = await future
        except Exception as error:
            self._jobs.put(None)
            raise StorageError(f"cannot open SQLite database {self.path!r}: {error}") from error
        self._txn = Txn(conn)

    def run(self, op: Callable[..., T], *args: Any, write: bool = True) -> asyncio.Future[T]:
        """Queue ``op(txn, *args)``; the future resolves after its transaction committed.

        When the engine is idle, the first operation of a loop turn starts at once (its
        own transaction; a lone caller pays no wait for the next turn, and where the
        commit has no fsync to wait for, its future is done on return); the operations
        that follow in the same turn queue behind it and share the next transaction.
        """
        if self._closed:
            raise StorageError("the store is closed")
        loop = self._loop
        assert loop is not None
        future: asyncio.Future[T] = loop.create_future()
        item = (op, args, future, write)
        if self._scheduled or self._in_flight:
            self._pending.append(item)
            return future
        self._scheduled = True  # what comes later in this turn waits for the next flush
        loop.call_soon(self._flush)
        if self._offloads(write):
            self._start([item])
        else:
            self._run_one(op, args, future, write)
        return future

    def _offloads(self, write: bool) -> bool:
        """Whether a lone operation's commit goes to the helper thread (a ``"full"`` write
        while recent fsyncs were slow); otherwise it runs inline via :meth:`_run_one`."""
        return write and self._offload_commit and self._sync_s >= INLINE_SYNC_S

    def _run_one(self, op: Callable[..., T], args: tuple[Any, ...],
                 future: asyncio.Future[T], write: bool) -> None:
        """One operation in its own transaction with an inline commit, settled now (what
        :meth:`_start` does for a batch of one, without its bookkeeping)."""
        txn = self._txn
        assert txn is not None
        conn = txn.conn
        self.batches += 1
        self.operations += 1
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.Error:
            self.batches -= 1
            self.operations -= 1
            self._start([(op, args, future, write)])  # the general path handles it
            return
        refused: StoreError | None = None
        try:
            value = op(txn, *args)
        except StoreError as error:  # the op wrote nothing (its contract)
            refused = error
        except Exception as error:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            txn._rolled_back()
            future.set_exception(_storage_error(error))
            return
        try:
            self._timed_commit(conn) if write else conn.execute("COMMIT")
        except sqlite3.Error as error:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            txn._rolled_back()
            future.set_exception(_storage_error(error))
            return
        if txn._fresh:
            txn._committed()
        if refused is None:
            future.set_result(value)
        else:
            future.set_exception(refused)

    async def close(self) -> None:
        """Finish what is queued, close the connection, stop the thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        assert self._idle is not None
        while self._pending or self._in_flight or self._scheduled:
            self._idle.clear()
            await self._idle.wait()
        if self._txn is not None:
            self._txn.conn.close()
        self._jobs.put(None)
        if self._thread is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._thread.join)

    # -- the helper thread ----------------------------------------------------------------

    def _worker(self) -> None:
        while (job := self._jobs.get()) is not None:
            job()

    def _submit(self, fn: Callable[[], T], future: asyncio.Future[T]) -> None:
        """Run ``fn`` on the helper thread and settle ``future`` on the loop with it."""
        loop = self._loop
        assert loop is not None

        def job() -> None:
            try:
                value = fn()
            except BaseException as error:  # handed to the loop, which raises it
                with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                    loop.call_soon_threadsafe(_settle, future, False, error)
            else:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(_settle, future, True, value)

        self._jobs.put(job)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None,
                               check_same_thread=False, cached_statements=256)
        try:
            if self.path != ":memory:":
                conn.execute("PRAGMA journal_mode=WAL")
            level = "FULL" if self.durability == "full" else "NORMAL"
            conn.execute(f"PRAGMA synchronous={level}")
            conn.executescript(f"BEGIN IMMEDIATE;\n{SCHEMA}\nCOMMIT;")
            conn.execute("PRAGMA busy_timeout=0")  # inline BEGINs never wait; see _flush
        except BaseException:
            conn.close()
            raise
        return conn

    # -- batches ----------------------------------------------------------------------------

    def _flush(self) -> None:
        self._scheduled = False
        if self._in_flight:
            return
        if not self._pending:
            self._notify_idle()
            return
        pending = self._pending
        if len(pending) == 1 and not self._offloads(pending[0][3]):
            op, args, future, write = pending.pop()
            if not future.cancelled():  # a caller cancelled before its batch ran
                self._run_one(op, args, future, write)
            if not self._in_flight:
                self._notify_idle()
            return
        batch = pending[:MAX_BATCH]
        del pending[:MAX_BATCH]
        self._start(batch)

    def _start(self, batch: list[_Item]) -> None:
        """Run ``batch`` as one transaction: settled now, or once its commit is done."""
        txn = self._txn
        assert txn is not None
        self.batches += 1
        self.operations += len(batch)
        writes = any(item[3] for item in batch)
        try:
            txn.conn.execute("BEGIN IMMEDIATE" if writes else "BEGIN")
        except sqlite3.OperationalError:
            # another process holds the write lock: wait for it off the loop
            self.lock_waits += 1
            self._offload(lambda: self._run_waiting(batch), batch)
            return
        except sqlite3.Error as error:
            self._finish([(item[2], False, _storage_error(error)) for item in batch], None)
            return
        results = self._execute(batch)
        if isinstance(results, StorageError) or not writes or not self._offload_commit:
            self._finish(self._commit(batch, results), None)
            return
        self._offload(lambda: self._commit(batch, results), batch)

    def _offload(self, fn: Callable[[], list[_Result]], batch: list[_Item]) -> None:
        """Run ``fn`` on the helper thread; its results are handed out in one loop call."""
        loop = self._loop
        assert loop is not None
        self._in_flight = True

        def job() -> None:
            results = _never_raise(fn, batch)
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                loop.call_soon_threadsafe(self._finish, results, None)

        self._jobs.put(job)

    def _run_waiting(self, batch: list[_Item]) -> list[_Result]:
        """On the helper thread: wait for the write lock, then run the batch there."""
        txn = self._txn
        assert txn is not None
        conn = txn.conn
        conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout * 1000)}")
        try:
            conn.execute("BEGIN IMMEDIATE")
        finally:
            conn.execute("PRAGMA busy_timeout=0")
        return self._commit(batch, self._execute(batch))

    def _execute(self, batch: list[_Item]) -> list[_Result] | StorageError:
        """Run each op of an open transaction; an error when the batch must roll back."""
        txn = self._txn
        assert txn is not None
        results: list[_Result] = []
        # a caller cancelled before its batch ran: its op never happens
        batch = [item for item in batch if not item[2].cancelled()]
        i, end = 0, len(batch)
        try:
            while i < end:
                op, args, future, _write = batch[i]
                many = getattr(op, "many", None)
                if many is not None:
                    # a run of the same op may share statements (op.many(txn, [args...]))
                    j = i + 1
                    while j < end and batch[j][0] is op:
                        j += 1
                    if j - i > 1:
                        run = batch[i:j]
                        outcomes = many(txn, [item[1] for item in run])
                        results.extend(
                            (item[2], ok, value) for item, (ok, value) in zip(run, outcomes,
                                                                              strict=True)
                        )
                        i = j
                        continue
                try:
                    results.append((future, True, op(txn, *args)))
                except StoreError as error:  # the op wrote nothing (its contract)
                    results.append((future, False, error))
                i += 1
        except Exception as error:
            return _storage_error(error)
        return results

    def _commit(self, batch: list[_Item],
                results: list[_Result] | StorageError) -> list[_Result]:
        """COMMIT (or roll back a failed batch); the results to hand out."""
        txn = self._txn
        assert txn is not None
        if not isinstance(results, StorageError):
            try:
                self._timed_commit(txn.conn)
            except sqlite3.Error as error:
                results = _storage_error(error)
            else:
                txn._committed()
                return results
        with contextlib.suppress(sqlite3.Error):  # nothing left to roll back
            txn.conn.execute("ROLLBACK")
        txn._rolled_back()
        return [(item[2], False, results) for item in batch]

    def _timed_commit(self, conn: sqlite3.Connection) -> None:
        """COMMIT; at ``"full"`` its duration (the fsync) feeds the inline-fsync choice."""
        if not self._offload_commit:
            conn.execute("COMMIT")
            return
        started = time.perf_counter()
        conn.execute("COMMIT")
        self._sync_s = 0.8 * self._sync_s + 0.2 * (time.perf_counter() - started)

    def _finish(self, results: list[_Result], _done: Any) -> None:
        self._in_flight = False
        for future, ok, value in results:
            _settle(future, ok, value)
        if self._pending:
            if not self._scheduled:
                self._scheduled = True
                assert self._loop is not None
                self._loop.call_soon(self._flush)  # after the woken callers queued more
        else:
            self._notify_idle()

    def _notify_idle(self) -> None:
        if self._idle is not None:
            self._idle.set()


def _never_raise(fn: Callable[[], list[_Result]], batch: list[_Item]) -> list[_Result]:
    try:
        return fn()
    except Exception as error:
        failure = _storage_error(error)
        return [(item[2], False, failure) for item in batch]


def _storage_error(error: BaseException) -> StorageError:
    wrapped = StorageError(f"SQLite error: {error}")
    wrapped.__cause__ = error
    return wrapped


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
