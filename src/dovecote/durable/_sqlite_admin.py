"""The SQLite store's inspection, dead-letter and sweep operations (writer thread)."""

from __future__ import annotations

from typing import Any

from dovecote.durable._errors import (
    MailboxNotFoundError,
    MessageNotFoundError,
)
from dovecote.durable._model import FailureRecord, MailboxConfig, MailboxStats
from dovecote.durable._sqlite_ops import (
    candidates_sql,
    insert_message,
    recover_lease,
    to_dead_letters,
)
from dovecote.durable._sqlite_schema import (
    DLQ_COLUMNS,
    MAILBOX_COLUMNS,
    decode_headers,
    encode_headers,
    row_to_mailbox,
)
from dovecote.durable._sqlite_txn import Txn

__all__ = [
    "SweepOutcome",
    "op_dead_letters",
    "op_get",
    "op_is_committed",
    "op_list",
    "op_next_change",
    "op_peek",
    "op_purge",
    "op_replay",
    "op_stats",
    "op_sweep",
]

#: (mailboxes whose leases were recovered, {mailbox: expired count}, retention purged)
SweepOutcome = tuple[list[str], dict[str, int], int]
_PEEK_SQL = {mode: candidates_sql(mode, peek=True) for mode in ("fifo", "unordered", "priority")}
_TTL_NOTE = "message TTL expired before being claimed"


def _config(txn: Txn, agent_id: str) -> MailboxConfig:
    config = txn.mailbox(agent_id)
    if config is None:
        raise MailboxNotFoundError(f"mailbox not found: {agent_id}")
    return config


def op_get(txn: Txn, agent_id: str) -> MailboxConfig:
    """The mailbox's configuration."""
    return _config(txn, agent_id)


def op_list(txn: Txn, limit: int, after: str | None) -> list[MailboxConfig]:
    """A page of mailboxes in ascending agent id, strictly after ``after``."""
    rows = txn.conn.execute(
        f"SELECT {MAILBOX_COLUMNS} FROM mailboxes WHERE agent_id > ? ORDER BY agent_id LIMIT ?",
        ("" if after is None else after, limit),
    ).fetchall()
    return [row_to_mailbox(row) for row in rows]


def op_stats(txn: Txn, agent_id: str) -> MailboxStats:
    """Counters of one mailbox."""
    _config(txn, agent_id)
    conn = txn.conn
    counts = dict(conn.execute(
        "SELECT status, count(*) FROM messages WHERE mailbox_id = ? GROUP BY status", (agent_id,)
    ).fetchall())
    oldest = conn.execute(
        "SELECT min(created_at_ms) FROM messages WHERE mailbox_id = ? AND status = 'pending'",
        (agent_id,),
    ).fetchone()[0]
    dead = conn.execute(
        "SELECT count(*) FROM dead_letters WHERE mailbox_id = ?", (agent_id,)
    ).fetchone()[0]
    return MailboxStats(
        agent_id=agent_id,
        pending_count=counts.get("pending", 0),
        claimed_count=counts.get("claimed", 0),
        committed_count=counts.get("committed", 0),
        dead_lettered_count=dead,
        oldest_pending_at_ms=oldest,
    )


def op_peek(txn: Txn, agent_id: str, limit: int, now: int) -> list[tuple[Any, ...]]:
    """The rows the next claims would return, in that order."""
    config = _config(txn, agent_id)
    sql = _PEEK_SQL[config.ordering_mode]
    return txn.conn.execute(sql, (agent_id, now, config.max_attempts, limit)).fetchall()


def op_next_change(txn: Txn, agent_id: str, now: int) -> int | None:
    """The earliest future time a message of the mailbox becomes claimable unprompted."""
    row = txn.conn.execute(
        "SELECT min(t) FROM ("
        " SELECT min(visible_at_ms) AS t FROM messages"
        "  WHERE mailbox_id = ?1 AND status = 'pending' AND visible_at_ms > ?2"
        " UNION ALL SELECT min(lease_expires_at_ms) FROM messages"
        "  WHERE mailbox_id = ?1 AND status = 'claimed' AND lease_expires_at_ms > ?2)",
        (agent_id, now),
    ).fetchone()
    return None if row is None else row[0]


def op_is_committed(txn: Txn, agent_id: str, message_id: str) -> bool:
    """Whether that message was committed in that mailbox."""
    row = txn.conn.execute(
        "SELECT 1 FROM messages WHERE message_id = ? AND mailbox_id = ? AND status = 'committed'",
        (message_id, agent_id),
    ).fetchone()
    return row is not None


def op_dead_letters(txn: Txn, agent_id: str, reason: str | None,
                    limit: int) -> list[tuple[Any, ...]]:
    """Dead-letter rows, oldest first, optionally of one reason."""
    if reason is None:
        sql = (f"SELECT {DLQ_COLUMNS} FROM dead_letters WHERE mailbox_id = ? "
               "ORDER BY dead_lettered_at_ms, message_id LIMIT ?")
        return txn.conn.execute(sql, (agent_id, limit)).fetchall()
    sql = (f"SELECT {DLQ_COLUMNS} FROM dead_letters WHERE mailbox_id = ? AND poison_reason = ? "
           "ORDER BY dead_lettered_at_ms, message_id LIMIT ?")
    return txn.conn.execute(sql, (agent_id, reason, limit)).fetchall()


def op_replay(txn: Txn, message_id: str, target: str | None, new_id: str, replayed_by: str,
              now: int) -> tuple[Any, ...]:
    """Send a dead letter again under ``new_id``; returns the new message's insert row."""
    conn = txn.conn
    found = conn.execute(
        "SELECT mailbox_id, sender_id, payload, headers, priority FROM dead_letters "
        "WHERE message_id = ?",
        (message_id,),
    ).fetchone()
    if found is None:
        raise MessageNotFoundError(f"dead letter not found: {message_id}")
    origin, sender, payload, headers_text, priority = found
    to = origin if target is None else target
    config = _config(txn, to)
    headers = decode_headers(headers_text)
    headers.update(replayed_from=message_id, replayed_by=replayed_by, replayed_at=str(now))
    row = (new_id, to, sender, payload, encode_headers(headers), priority, now, now, None)
    insert_message(txn, config, row)
    return (*row, headers)


def op_purge(txn: Txn, agent_id: str, before_ms: int) -> int:
    """Delete the mailbox's dead letters from strictly before ``before_ms``."""
    cursor = txn.conn.execute(
        "DELETE FROM dead_letters WHERE mailbox_id = ? AND dead_lettered_at_ms < ?",
        (agent_id, before_ms),
    )
    return cursor.rowcount


def op_sweep(txn: Txn, now: int) -> SweepOutcome:
    """One sweeper tick over the whole database."""
    conn = txn.conn
    leases = conn.execute(
        "SELECT message_id, mailbox_id, attempt_count, claimed_by, failures FROM messages "
        "WHERE status = 'claimed' AND lease_expires_at_ms <= ?",
        (now,),
    ).fetchall()
    for message_id, _mailbox, attempt, holder, failures in leases:
        recover_lease(txn, message_id, attempt, holder, failures, now)
    stale = conn.execute(
        "SELECT message_id, mailbox_id, attempt_count, failures FROM messages "
        "WHERE status = 'pending' AND expires_at_ms IS NOT NULL AND expires_at_ms <= ?",
        (now,),
    ).fetchall()
    expired: dict[str, int] = {}
    for message_id, mailbox_id, attempt, failures in stale:
        record = FailureRecord(attempt, None, "permanent", _TTL_NOTE, now)
        to_dead_letters(txn, message_id, mailbox_id, "expired", now, record, failures)
        expired[mailbox_id] = expired.get(mailbox_id, 0) + 1
    purged = conn.execute(
        "DELETE FROM dead_letters WHERE rowid IN (SELECT d.rowid FROM dead_letters AS d "
        "JOIN mailboxes AS b ON b.agent_id = d.mailbox_id "
        "WHERE b.dlq_retention_ms IS NOT NULL AND d.dead_lettered_at_ms <= ? - b.dlq_retention_ms)",
        (now,),
    ).rowcount
    return [row[1] for row in leases], expired, purged
