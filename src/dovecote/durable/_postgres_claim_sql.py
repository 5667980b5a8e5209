"""Statement builders shared by claims and dead-lettering on PostgreSQL.

A claim is one statement: pick the next candidate with ``FOR UPDATE SKIP LOCKED``, recover
the mailbox's other expired leases, then claim the candidate or, at ``max_attempts``,
dead-letter it. Every dead-lettering (claim, permanent release, rejection, TTL sweep)
uses the same CTE chain: delete, insert the record with its history, count it settled.
"""

from __future__ import annotations

from dovecote.durable._postgres_schema import M_COLUMNS, SLOT

__all__ = [
    "BY_ID",
    "CLAIMABLE",
    "FAST_COLUMNS",
    "ORDER",
    "PEEK_HOLD",
    "claim_fast_statement",
    "claim_statement",
    "dead_letter_move",
    "fifo_hold",
    "lease_lost",
]

def lease_lost(m: str, now: str = "$2::bigint") -> str:
    """A one-entry history: the lease of ``m`` (a row alias) expired and was recovered."""
    return (
        f"jsonb_build_array(jsonb_build_object('attempt', {m}.attempt_count, 'claimed_by', "
        f"{m}.claimed_by, 'failure_kind', 'transient', 'note', 'lease expired', 'at_ms', {now}))"
    )


def dead_letter_move(
    s: str, source: str, reason: str, note: str, claimed_by: str, now: str = "$2::bigint",
    prior: str = "'[]'::jsonb",
) -> str:
    """CTEs that move the rows of CTE ``source`` (message_id, attempt, ...) to the DLQ.

    Appends ``prior`` (a jsonb array) and one failure record ``{attempt, claimed_by,
    failure_kind: permanent, note}`` to the history, counts each row as settled, and
    leaves a ``gone`` (the deleted rows) and a ``moved`` CTE (message_id, mailbox_id).
    ``reason``, ``note``, ``claimed_by``, ``now`` and ``prior`` are SQL expressions.
    """
    return f"""
    gone AS (
        DELETE FROM {s}.messages m USING {source} src WHERE m.message_id = src.message_id
        RETURNING m.*, {prior} AS dl_prior, src.attempt AS dl_attempt),
    moved AS (
        INSERT INTO {s}.dead_letters (message_id, mailbox_id, sender_id, payload, headers,
            priority, created_at_ms, attempt_count, poison_reason, dead_lettered_at_ms,
            failure_history)
        SELECT message_id, mailbox_id, sender_id, payload, headers, priority, created_at_ms,
            dl_attempt, {reason}, {now},
            failures || dl_prior || jsonb_build_array(jsonb_build_object('attempt', dl_attempt,
                'claimed_by', {claimed_by}, 'failure_kind', 'permanent', 'note', {note},
                'at_ms', {now}))
        FROM gone
        RETURNING message_id, mailbox_id),
    counted AS (
        INSERT INTO {s}.settled (mailbox_id, slot, n)
        SELECT mailbox_id, {SLOT}, count(*) FROM moved GROUP BY mailbox_id ORDER BY mailbox_id
        ON CONFLICT (mailbox_id, slot) DO UPDATE SET n = {s}.settled.n + EXCLUDED.n)"""


CLAIMABLE = """((m.status = 'pending' AND m.visible_at_ms <= $2)
               OR (m.status = 'claimed' AND m.lease_expires_at_ms <= $2))
          AND (m.expires_at_ms IS NULL OR m.expires_at_ms > $2)"""
#: FIFO hold for claims: no other message of the sender under a live lease, and none
#: older that is claimable or claimed (that one goes first; the second half is what keeps
#: two concurrent claimers from taking a sender's two oldest messages at once)
_FIFO_HOLD = """AND NOT EXISTS (
            SELECT 1 FROM {s}.messages e
            WHERE e.mailbox_id = $1 AND e.sender_id = m.sender_id
              AND e.message_id <> m.message_id AND e.status IN ('pending', 'claimed')
              AND ((e.status = 'claimed' AND e.lease_expires_at_ms > $2)
                   OR ((e.created_at_ms, e.message_id) < (m.created_at_ms, m.message_id)
                       AND (e.status = 'claimed' OR e.visible_at_ms <= $2)
                       AND (e.expires_at_ms IS NULL OR e.expires_at_ms > $2))))"""
#: FIFO hold for peeks: nothing of a sender that has a message claimed
PEEK_HOLD = """AND NOT EXISTS (
            SELECT 1 FROM {s}.messages e WHERE e.mailbox_id = $1
              AND e.sender_id = m.sender_id AND e.status = 'claimed')"""


def claim_statement(s: str, hold: str, order: str) -> str:
    """One claim attempt ($1 mailbox, $2 now, $3 claimer, $4 token, $5 lease end, $6 max).

    Picks the next candidate (pending and visible, or claimed with an expired lease; TTL
    not passed) with SKIP LOCKED and returns the mailbox's other expired leases to
    pending. Under max_attempts the candidate is claimed (``kind = 'claim'``); at the
    limit it is dead-lettered (``kind = 'dead'``) and the caller tries again.
    """
    lost = lease_lost("m")
    pick = f"""
    pick AS (
        SELECT m.message_id, m.attempt_count AS attempt, m.status AS was FROM {s}.messages m
        WHERE m.mailbox_id = $1 AND {CLAIMABLE}
          {hold}
        ORDER BY {order} LIMIT 1 FOR UPDATE OF m SKIP LOCKED),
    lost AS (
        SELECT m.message_id FROM {s}.messages m
        WHERE m.mailbox_id = $1 AND m.status = 'claimed' AND m.lease_expires_at_ms <= $2
          AND m.message_id NOT IN (SELECT message_id FROM pick)
        FOR UPDATE OF m SKIP LOCKED),
    recovered AS (
        UPDATE {s}.messages m SET status = 'pending', claimed_by = NULL, lease_token = NULL,
            lease_expires_at_ms = NULL, failures = m.failures || {lost}
        FROM lost WHERE m.message_id = lost.message_id RETURNING 1),
    taken AS (
        UPDATE {s}.messages m SET status = 'claimed', attempt_count = m.attempt_count + 1,
            claimed_by = $3, lease_token = $4, lease_expires_at_ms = $5,
            failures = CASE WHEN pick.was = 'claimed' THEN m.failures || {lost}
                       ELSE m.failures END
        FROM pick WHERE m.message_id = pick.message_id AND pick.attempt < $6
        RETURNING {M_COLUMNS}),
    exhausted AS (SELECT message_id, attempt, was FROM pick WHERE attempt >= $6),"""
    move = dead_letter_move(
        s,
        "exhausted",
        "'max_attempts_exceeded'",
        "format('attempt_count %s reached max_attempts %s', dl_attempt, $6::int)",
        "$3::text",
        prior=f"CASE WHEN src.was = 'claimed' THEN {lost} ELSE '[]'::jsonb END",
    )
    return f"""WITH {pick}{move}
    SELECT 'claim' AS kind, taken.* FROM taken
    UNION ALL SELECT 'dead', message_id, mailbox_id, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM moved"""


#: what a fast claim returns (read by ``row_to_claimed``)
FAST_COLUMNS = (
    "m.message_id, m.sender_id, m.payload, m.headers::text AS headers, m.priority, "
    "m.created_at_ms, m.visible_at_ms, m.attempt_count, m.expires_at_ms"
)


def claim_fast_statement(s: str, hold: str, order: str) -> str:
    """The usual claim, without the rare work ($1..$6 as :func:`claim_statement`).

    Picks the next candidate as :func:`claim_statement` does and claims it when that
    statement would do nothing else: the candidate is under max_attempts and the mailbox
    has no other expired lease. Otherwise nothing changes and the one row says ``'slow'``:
    the caller runs :func:`claim_statement`. No candidate and no expired lease: no row.
    A claim row holds ``FAST_COLUMNS`` after its kind; the caller knows the others
    (mailbox $1, claimed by $3 until $5, never committed: commits are final).
    """
    lost = lease_lost("m")
    return f"""WITH
    pick AS (
        SELECT m.message_id, m.attempt_count AS attempt, m.status AS was FROM {s}.messages m
        WHERE m.mailbox_id = $1 AND {CLAIMABLE}
          {hold}
        ORDER BY {order} LIMIT 1 FOR UPDATE OF m SKIP LOCKED),
    slow AS (
        SELECT (SELECT attempt FROM pick) >= $6 OR EXISTS (
            SELECT 1 FROM {s}.messages m
            WHERE m.mailbox_id = $1 AND m.status = 'claimed' AND m.lease_expires_at_ms <= $2
              AND m.message_id IS DISTINCT FROM (SELECT message_id FROM pick)) AS slow),
    taken AS (
        UPDATE {s}.messages m SET status = 'claimed', attempt_count = m.attempt_count + 1,
            claimed_by = $3, lease_token = $4, lease_expires_at_ms = $5,
            failures = CASE WHEN pick.was = 'claimed' THEN m.failures || {lost}
                       ELSE m.failures END
        FROM pick WHERE m.message_id = pick.message_id
          AND NOT coalesce((SELECT slow FROM slow), false)
        RETURNING {FAST_COLUMNS})
    SELECT 'claim' AS kind, taken.* FROM taken
    UNION ALL SELECT 'slow', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        FROM slow WHERE slow"""


#: ``(status || '') = `` keeps a lookup by message id on the primary key: a bare
#: ``status = 'claimed'`` lets the generic plan prefer a full scan of a partial index it
#: believes small (with many messages in flight, a scan of all of them per commit)
BY_ID = "(status || '') = "
ORDER = {
    "fifo": "m.created_at_ms, m.message_id",
    "unordered": "m.created_at_ms, m.message_id",
    "priority": "m.priority DESC, m.created_at_ms, m.message_id",
}



def fifo_hold(s: str) -> str:
    """The FIFO hold of claims, for schema ``s``."""
    return _FIFO_HOLD.format(s=s)
