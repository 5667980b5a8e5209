"""The plain-SQL yardstick of the durable store rows: stdlib ``sqlite3``, no layer.

Same tables and indexes as ``SqliteStore`` (its DDL), the same statements a send, claim
and commit need (reserve capacity + insert; select the next + mark claimed; mark
committed + release capacity), WAL, run synchronously on the benchmark's thread: one
statement group per transaction, or 100 sends per transaction for the batched figure.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from dovecote.durable._sqlite_schema import SCHEMA

from .._measure import perf_counter
from ._base import BaseRuntime, Metrics
from ._store_shape import PAYLOAD, claim_size, send_size

_RESERVE = (
    "UPDATE mailboxes SET live_count = live_count + 1 WHERE agent_id = ? "
    "AND live_count < capacity"
)
_INSERT = (
    "INSERT INTO messages (message_id, mailbox_id, sender_id, payload, headers, priority, "
    "created_at_ms, visible_at_ms, status, attempt_count) "
    "VALUES (?, 'q', 's', ?, '{}', 0, ?, ?, 'pending', 0)"
)
_NEXT = (
    "SELECT message_id FROM messages WHERE mailbox_id = 'q' AND status = 'pending' "
    "AND visible_at_ms <= ? ORDER BY created_at_ms, message_id LIMIT 1"
)
_CLAIM = (
    "UPDATE messages SET status = 'claimed', attempt_count = attempt_count + 1, "
    "lease_expires_at_ms = ?, claimed_by = 'w' WHERE message_id = ?"
)
_COMMIT = (
    "UPDATE messages SET status = 'committed', committed_at_ms = ?, checkpoint_token = 't' "
    "WHERE message_id = ? AND status = 'claimed' AND claimed_by = 'w'"
)
_UNRESERVE = "UPDATE mailboxes SET live_count = live_count - 1 WHERE agent_id = 'q'"


class _Db:
    def __init__(self, folder: Path, name: str, synchronous: str) -> None:
        self.conn = sqlite3.connect(folder / name, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(f"PRAGMA synchronous={synchronous}")
        self.conn.executescript(SCHEMA)
        self.conn.execute(
            "INSERT INTO mailboxes (agent_id, capacity, ordering_mode, max_attempts, "
            "lease_duration_ms, max_payload_bytes, created_at_ms) "
            "VALUES ('q', 1000000000, 'unordered', 5, 60000, 1048576, 0)"
        )
        self.seq = 0

    def send(self, n: int, per_txn: int) -> float:
        conn = self.conn
        t0 = perf_counter()
        for _ in range(0, n, per_txn):
            conn.execute("BEGIN IMMEDIATE")
            for _ in range(per_txn):
                self.seq += 1
                conn.execute(_RESERVE, ("q",))
                conn.execute(_INSERT, (f"{self.seq:026d}", PAYLOAD, self.seq, self.seq))
            conn.execute("COMMIT")
        return n / (perf_counter() - t0)

    def claim_commit(self, n: int) -> float:
        conn = self.conn
        t0 = perf_counter()
        for i in range(n):
            conn.execute("BEGIN IMMEDIATE")
            (message_id,) = conn.execute(_NEXT, (1 << 50,)).fetchone()
            conn.execute(_CLAIM, (i + 60_000, message_id))
            conn.execute("COMMIT")
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(_COMMIT, (i, message_id))
            conn.execute(_UNRESERVE)
            conn.execute("COMMIT")
        return n / (perf_counter() - t0)


class PlainSqliteRuntime(BaseRuntime):
    """stdlib sqlite3 doing the store's work by hand (the store rows' yardstick)."""

    name = "sqlite3"
    loop_bound = False

    async def open(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="bench-sqlite-")
        self._runs = 0

    def _db(self, name: str, synchronous: str) -> _Db:
        self._runs += 1  # the warm-up round and the measured round use their own files
        return _Db(Path(self._dir.name), f"{self._runs}-{name}", synchronous)

    async def close(self) -> None:
        self._dir.cleanup()

    async def wl_store_send(self, n: int) -> Metrics:
        out: Metrics = {}
        for sync in ("FULL", "NORMAL"):
            db = self._db(f"send-{sync}.db", sync)
            db.send(max(1, send_size(n, sync)) // 10, 1)  # warm the WAL file
            out[f"{sync.lower()}_per_s"] = db.send(send_size(n, sync), 1)
            out[f"group_{sync.lower()}_per_s"] = db.send(n - n % 100 or 100, 100)
            db.conn.close()
        return out

    async def wl_store_claim(self, n: int) -> Metrics:
        out: Metrics = {}
        for sync in ("FULL", "NORMAL"):
            db = self._db(f"claim-{sync}.db", sync)
            size = claim_size(n, sync)
            db.send(size + size // 10, 100)
            db.claim_commit(size // 10)  # warm up
            out[f"{sync.lower()}_per_s"] = db.claim_commit(size)
            db.conn.close()
        return out
