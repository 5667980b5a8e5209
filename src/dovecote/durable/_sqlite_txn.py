"""What a SQLite store operation sees: :class:`Txn`, the connection of the open
transaction with the mailbox configurations it has read (cached once committed)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

from dovecote.durable._errors import StoreError
from dovecote.durable._model import MailboxConfig
from dovecote.durable._sqlite_schema import MAILBOX_COLUMNS, row_to_mailbox

__all__ = ["Txn"]


class Txn:
    """What an operation sees: the connection and the committed mailbox cache."""

    __slots__ = ("_cache", "_fresh", "conn", "mailbox_of")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        #: the mailbox of messages this engine claimed (a message never changes mailbox,
        #: so an entry stays true; a settle with it needs no RETURNING), bounded
        self.mailbox_of: dict[str, str] = {}
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

    @contextlib.contextmanager
    def atomic(self) -> Iterator[None]:
        """A savepoint: a ``StoreError`` inside undoes every write made inside."""
        mark = len(self._fresh)
        self.conn.execute("SAVEPOINT op")
        try:
            yield
        except StoreError:
            self.conn.execute("ROLLBACK TO op")
            self.conn.execute("RELEASE op")
            del self._fresh[mark:]
            raise
        self.conn.execute("RELEASE op")

    def _rolled_back(self) -> None:
        self._fresh.clear()

    def _committed(self) -> None:
        for config in self._fresh:
            self._cache[config.agent_id] = config
        self._fresh.clear()
