"""The SQLite store's write operations; each runs on the writer thread inside a savepoint.

Every function takes the :class:`Txn` first and either finishes its whole change or raises
a ``StoreError`` (its savepoint is then rolled back, so nothing it did remains). Times are
computed by the caller on the event loop (the store's clock), never read here.
"""

from __future__ import annotations

from typing import Any

from dovecote.durable._errors import (
    AlreadyCommittedError,
    CapacityError,
    InvalidStateError,
    MailboxNotFoundError,
    MessageNotFoundError,
    StoreError,
)
from dovecote.durable._model import FailureRecord, MailboxConfig
from dovecote.durable._sqlite_schema import MESSAGE_COLUMNS, decode_failures, encode_failures
from dovecote.durable._sqlite_txn import Txn
from dovecote.durable._store_base import payload_too_large

__all__ = [
    "ClaimOutcome",
    "candidates_sql",
    "insert_message",
    "op_claim",
    "op_commit",
    "op_ensure",
    "op_reject",
    "op_release",
    "op_send",
    "op_unclaim",
    "recover_lease",
    "to_dead_letters",
]

#: (claimed row as MESSAGE_COLUMNS with the new status, dead-lettered for max attempts)
ClaimOutcome = tuple[tuple[Any, ...] | None, int]

_INSERT = (
    "INSERT INTO messages (message_id, mailbox_id, sender_id, payload, headers, priority, "
    "created_at_ms, visible_at_ms, status, attempt_count, expires_at_ms) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?)"
)
_CANDIDATE_WHERE = (
    "m.mailbox_id = ?1 AND m.status = 'pending' AND m.visible_at_ms <= ?2 "
    "AND (m.expires_at_ms IS NULL OR m.expires_at_ms > ?2)"
)
_FIFO_HOLD = (
    " AND NOT EXISTS (SELECT 1 FROM messages AS c WHERE c.mailbox_id = ?1 "
    "AND c.status = 'claimed' AND c.sender_id = m.sender_id)"
)
_ORDER = {
    "fifo": " ORDER BY m.created_at_ms, m.message_id",
    "unordered": " ORDER BY m.created_at_ms, m.message_id",
    "priority": " ORDER BY m.priority DESC, m.created_at_ms, m.message_id",
}
_RESERVE = (
    "UPDATE mailboxes SET live_count = live_count + 1 "
    "WHERE agent_id = ? AND live_count < capacity"
)
_UNRESERVE = "UPDATE mailboxes SET live_count = live_count - 1 WHERE agent_id = ?"
_M_COLUMNS = ", ".join(f"m.{c.strip()}" for c in MESSAGE_COLUMNS.split(","))


def candidates_sql(mode: str, *, peek: bool) -> str:
    """The next claimable messages of a mailbox, in claim order.

    Parameters: ``?1`` mailbox, ``?2`` now; a peek also takes ``?3`` max_attempts (it
    leaves out what the next claim would dead-letter) and ``?4`` the limit.
    """
    where = _CANDIDATE_WHERE + (" AND m.attempt_count < ?3" if peek else "")
    hold = _FIFO_HOLD if mode == "fifo" else ""
    limit = " LIMIT ?4" if peek else " LIMIT 1"
    return f"SELECT {_M_COLUMNS} FROM messages AS m WHERE {where}{hold}{_ORDER[mode]}{limit}"


_CLAIM_SQL = {mode: candidates_sql(mode, peek=False) for mode in _ORDER}


def op_ensure(txn: Txn, config: MailboxConfig, now: int) -> MailboxConfig:
    """Create the mailbox unless it exists; the stored configuration either way."""
    existing = txn.mailbox(config.agent_id)
    return existing if existing is not None else txn.create_mailbox(config, now)


def insert_message(txn: Txn, config: MailboxConfig, row: tuple[Any, ...]) -> None:
    """Check the payload cap and capacity of ``config``'s mailbox, then insert ``row``."""
    to, size = config.agent_id, len(row[3])
    if size > config.max_payload_bytes:
        raise payload_too_large(size, config.max_payload_bytes, to)
    if txn.conn.execute(_RESERVE, (to,)).rowcount == 0:
        raise CapacityError(f"mailbox full: {to} (capacity {config.capacity})")
    txn.conn.execute(_INSERT, row)


def op_send(txn: Txn, rows: list[tuple[Any, ...]], now: int) -> None:
    """Insert ``rows`` (``_INSERT`` parameters), creating unknown mailboxes; all or nothing."""
    if len(rows) == 1:
        row = rows[0]
        config = txn.mailbox(row[1])
        if config is not None:  # checks come before writes: no savepoint needed
            insert_message(txn, config, row)
            return
    with txn.atomic():
        for row in rows:
            to = row[1]
            config = txn.mailbox(to) or txn.create_mailbox(MailboxConfig(to), now)
            insert_message(txn, config, row)


def _send_many(txn: Txn, calls: list[tuple[Any, ...]]) -> list[tuple[bool, Any]]:
    """Many ``op_send`` calls of one batch: single sends to a known mailbox that all fit
    share one capacity update and one ``executemany``; the rest run one by one."""
    outcomes: list[tuple[bool, Any] | None] = [None] * len(calls)
    groups: dict[str, list[int]] = {}
    for k, (rows, _now) in enumerate(calls):
        if len(rows) == 1:
            config = txn.mailbox(rows[0][1])
            if config is not None and len(rows[0][3]) <= config.max_payload_bytes:
                groups.setdefault(config.agent_id, []).append(k)
    conn = txn.conn
    for to, members in groups.items():
        n = len(members)
        if n > 1 and conn.execute(_RESERVE_MANY, (n, to, n)).rowcount:
            conn.executemany(_INSERT, [calls[k][0][0] for k in members])
            for k in members:
                outcomes[k] = (True, None)
    done: list[tuple[bool, Any]] = []
    for k, outcome in enumerate(outcomes):
        if outcome is None:
            try:
                op_send(txn, *calls[k])
                outcome = (True, None)
            except StoreError as error:
                outcome = (False, error)
        done.append(outcome)
    return done


_RESERVE_MANY = (
    "UPDATE mailboxes SET live_count = live_count + ? "
    "WHERE agent_id = ? AND live_count + ? <= capacity"
)
op_send.many = _send_many  # type: ignore[attr-defined]


def _history(failures: str | None, record: FailureRecord) -> str:
    history = decode_failures(failures)
    history.append(record)
    return encode_failures(history)


def recover_lease(txn: Txn, message_id: str, attempt: int, claimed_by: str | None,
                  failures: str | None, now: int) -> None:
    """Return an expired claim to pending (its place kept), noting the lost lease."""
    record = FailureRecord(attempt, claimed_by, "transient", "lease expired", now)
    txn.conn.execute(
        "UPDATE messages SET status = 'pending', claimed_by = NULL, lease_expires_at_ms = NULL, "
        "lease_token = NULL, failures = ? WHERE message_id = ?",
        (_history(failures, record), message_id),
    )


def to_dead_letters(txn: Txn, message_id: str, mailbox_id: str, reason: str, now: int,
                    record: FailureRecord, failures: str | None) -> None:
    """Move a live message to the dead letters with ``record`` appended to its history."""
    conn = txn.conn
    conn.execute(
        "INSERT INTO dead_letters (message_id, mailbox_id, sender_id, payload, headers, "
        "priority, created_at_ms, attempt_count, poison_reason, dead_lettered_at_ms, "
        "failure_history) SELECT message_id, mailbox_id, sender_id, payload, headers, priority, "
        "created_at_ms, attempt_count, ?, ?, ? FROM messages WHERE message_id = ?",
        (reason, now, _history(failures, record), message_id),
    )
    conn.execute("DELETE FROM messages WHERE message_id = ?", (message_id,))
    conn.execute(_UNRESERVE, (mailbox_id,))


def op_claim(txn: Txn, agent_id: str, claimer: str, lease_ms: int | None, now: int,
             lease_token: str) -> ClaimOutcome:
    """Claim the next message (recovering this mailbox's expired leases first)."""
    config = txn.mailbox(agent_id)
    if config is None:
        raise MailboxNotFoundError(f"mailbox not found: {agent_id}")
    conn = txn.conn
    expired = conn.execute(
        "SELECT message_id, attempt_count, claimed_by, failures FROM messages "
        "WHERE mailbox_id = ? AND status = 'claimed' AND lease_expires_at_ms <= ?",
        (agent_id, now),
    ).fetchall()
    for message_id, attempt, holder, failures in expired:
        recover_lease(txn, message_id, attempt, holder, failures, now)
    lease = config.lease_duration_ms if lease_ms is None else lease_ms
    sql = _CLAIM_SQL[config.ordering_mode]
    dead = 0
    while True:
        row = conn.execute(sql, (agent_id, now)).fetchone()
        if row is None:
            return None, dead
        message_id, attempts = row[0], row[9]
        if attempts >= config.max_attempts:
            failures = conn.execute(
                "SELECT failures FROM messages WHERE message_id = ?", (message_id,)
            ).fetchone()[0]
            note = f"attempt_count {attempts} reached max_attempts {config.max_attempts}"
            record = FailureRecord(attempts, claimer, "permanent", note, now)
            to_dead_letters(txn, message_id, agent_id, "max_attempts_exceeded", now, record,
                            failures)
            dead += 1
            continue
        expires = now + lease
        conn.execute(
            "UPDATE messages SET status = 'claimed', attempt_count = ?, lease_expires_at_ms = ?, "
            "claimed_by = ?, lease_token = ? WHERE message_id = ?",
            (attempts + 1, expires, claimer, lease_token, message_id),
        )
        claimed = (*row[:8], "claimed", attempts + 1, expires, claimer, *row[12:])
        known = txn.mailbox_of
        if len(known) >= _KNOWN_MAX:
            known.clear()
        known[message_id] = agent_id
        return claimed, dead


def _held(txn: Txn, message_id: str, claimer: str, lease_token: str | None) -> tuple[Any, ...]:
    """The row of a message ``claimer`` holds, or the error that says why not."""
    row = txn.conn.execute(
        "SELECT mailbox_id, status, claimed_by, lease_token, attempt_count, failures "
        "FROM messages WHERE message_id = ?",
        (message_id,),
    ).fetchone()
    if row is None:
        raise MessageNotFoundError(f"message not found: {message_id}")
    status, holder = row[1], row[2]
    if status == "committed":
        raise AlreadyCommittedError(f"message {message_id} is already committed")
    if status != "claimed":
        raise InvalidStateError(f"message {message_id} is not claimed (lease lost or released)")
    if holder != claimer:
        raise InvalidStateError(f"message {message_id} is claimed by {holder}, not {claimer}")
    if lease_token is not None and lease_token != row[3]:
        raise InvalidStateError(
            f"message {message_id}: lease lost (it was claimed again after this lease)"
        )
    return tuple(row)


_HELD = (
    "message_id = ?1 AND status = 'claimed' AND claimed_by = ?2 "
    "AND (?3 IS NULL OR lease_token = ?3)"
)
_COMMIT_KNOWN = (
    "UPDATE messages SET status = 'committed', committed_at_ms = ?4, checkpoint_token = ?5, "
    f"lease_expires_at_ms = NULL WHERE {_HELD}"
)
_COMMIT = f"{_COMMIT_KNOWN} RETURNING mailbox_id"  # RETURNING costs: only when unknown
_KNOWN_MAX = 65_536  # entries of Txn.mailbox_of before it starts again
_RELEASE = (
    "UPDATE messages SET status = 'pending', claimed_by = NULL, lease_expires_at_ms = NULL, "
    "lease_token = NULL, failures = json_insert(coalesce(failures, '[]'), '$[#]', "
    "json_array(attempt_count, claimed_by, 'transient', ?5, ?4)) "
    f"WHERE {_HELD} RETURNING mailbox_id"
)


_UNCLAIM = (
    "UPDATE messages SET status = 'pending', attempt_count = attempt_count - 1, "
    "claimed_by = NULL, lease_expires_at_ms = NULL, lease_token = NULL "
    f"WHERE {_HELD} RETURNING mailbox_id"
)


def op_unclaim(txn: Txn, message_id: str, claimer: str, lease_token: str) -> str:
    """Undo a claim no handler saw (its attempt uncounted); returns the mailbox id."""
    row = txn.conn.execute(_UNCLAIM, (message_id, claimer, lease_token)).fetchone()
    if row is None:
        _held(txn, message_id, claimer, lease_token)  # raises the reason
        raise AssertionError("unreachable: the message is held but was not updated")
    return str(row[0])


def op_commit(txn: Txn, message_id: str, claimer: str, token: str, lease_token: str | None,
              now: int) -> str:
    """Commit a held message; returns its mailbox id."""
    conn = txn.conn
    params = (message_id, claimer, lease_token, now, token)
    mailbox_id = txn.mailbox_of.pop(message_id, None)
    if mailbox_id is not None:
        updated = conn.execute(_COMMIT_KNOWN, params).rowcount == 1
    else:
        row = conn.execute(_COMMIT, params).fetchone()
        updated, mailbox_id = row is not None, row and row[0]
    if not updated:
        _held(txn, message_id, claimer, lease_token)  # raises the reason
        raise AssertionError("unreachable: the message is held but was not updated")
    assert mailbox_id is not None
    conn.execute(_UNRESERVE, (mailbox_id,))
    return mailbox_id


def op_release(txn: Txn, message_id: str, claimer: str, kind: str, note: str | None,
               lease_token: str | None, now: int) -> str:
    """Release a held message (transient: back in its place; permanent: dead letter)."""
    if kind == "transient":
        row = txn.conn.execute(_RELEASE, (message_id, claimer, lease_token, now, note)).fetchone()
        if row is not None:
            return str(row[0])
    mailbox_id, _status, _holder, _token, attempt, failures = _held(
        txn, message_id, claimer, lease_token
    )
    record = FailureRecord(attempt, claimer, "permanent", note, now)
    to_dead_letters(txn, message_id, mailbox_id, "permanent_failure", now, record, failures)
    return str(mailbox_id)


def op_reject(txn: Txn, message_id: str, note: str, now: int) -> str:
    """Dead-letter a pending message as ``validation_failed``; returns its mailbox id."""
    row = txn.conn.execute(
        "SELECT mailbox_id, status, attempt_count, failures FROM messages WHERE message_id = ?",
        (message_id,),
    ).fetchone()
    if row is None:
        raise MessageNotFoundError(f"message not found: {message_id}")
    mailbox_id, status, attempt, failures = row
    if status != "pending":
        raise InvalidStateError(f"message {message_id} is {status}, not claimable")
    record = FailureRecord(attempt, None, "permanent", note, now)
    to_dead_letters(txn, message_id, mailbox_id, "validation_failed", now, record, failures)
    return str(mailbox_id)
