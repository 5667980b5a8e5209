"""The SQL of ``PostgresStore``: the schema and every statement, formatted for one schema.

Design (see docs/durable-postgres.md):

- ``messages`` holds live (pending, claimed) and committed rows; a dead letter moves to
  ``dead_letters`` (so commit / release of a dead-lettered id finds nothing).
- Capacity without a hot row: ``mailboxes.admitted`` counts every message ever admitted
  (incremented by sends under the mailbox row's lock), and ``settled`` counts messages that
  left the live set (commit, dead letter) in one row per (mailbox, connection slot), so
  settlements on different connections never wait for each other. ``live = admitted -
  sum(settled)``; a settlement not yet committed only makes the check stricter.
- Claims pick with ``FOR UPDATE SKIP LOCKED``: many processes share one mailbox.
- Every statement that makes a message claimable calls ``pg_notify`` (delivered on
  commit) so ``claim_stream`` in any process wakes without polling.
"""

from __future__ import annotations

import re

import attrs

__all__ = ["SCHEMA_VERSION", "Statements", "valid_schema"]

SCHEMA_VERSION = 1
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

#: the columns of a StoredMessage, in the order ``_row_to_message`` reads them
MESSAGE_COLUMNS = (
    "message_id, mailbox_id, sender_id, payload, headers::text AS headers, priority, "
    "created_at_ms, visible_at_ms, status, attempt_count, lease_expires_at_ms, claimed_by, "
    "committed_at_ms, checkpoint_token, expires_at_ms"
)
_M = MESSAGE_COLUMNS.replace("message_id,", "m.message_id,", 1)
MAILBOX_COLUMNS = (
    "agent_id, capacity, ordering_mode, max_attempts, lease_duration_ms, max_payload_bytes, "
    "dlq_retention_ms"
)
DEAD_LETTER_COLUMNS = (
    "message_id, mailbox_id, sender_id, payload, headers::text AS headers, priority, "
    "created_at_ms, attempt_count, poison_reason, dead_lettered_at_ms, "
    "failure_history::text AS failure_history"
)
#: the settlement slot of the connection running the statement
_SLOT = "(pg_backend_pid() % 64)"


def valid_schema(name: str) -> bool:
    """A schema option must be a plain identifier (it is quoted in SQL all the same)."""
    return isinstance(name, str) and _IDENT.fullmatch(name) is not None


def _ddl(s: str) -> tuple[str, ...]:
    return (
        f"CREATE SCHEMA IF NOT EXISTS {s}",
        f"""CREATE TABLE IF NOT EXISTS {s}.mailboxes (
            agent_id text COLLATE "C" PRIMARY KEY,
            capacity bigint NOT NULL,
            ordering_mode text NOT NULL,
            max_attempts integer NOT NULL,
            lease_duration_ms bigint NOT NULL,
            max_payload_bytes bigint NOT NULL,
            dlq_retention_ms bigint,
            created_at_ms bigint NOT NULL,
            admitted bigint NOT NULL DEFAULT 0)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.settled (
            mailbox_id text COLLATE "C" NOT NULL,
            slot integer NOT NULL,
            n bigint NOT NULL,
            PRIMARY KEY (mailbox_id, slot))""",
        f"""CREATE TABLE IF NOT EXISTS {s}.messages (
            message_id text COLLATE "C" PRIMARY KEY,
            mailbox_id text COLLATE "C" NOT NULL,
            sender_id text NOT NULL,
            payload bytea NOT NULL,
            headers jsonb NOT NULL,
            priority integer NOT NULL,
            created_at_ms bigint NOT NULL,
            visible_at_ms bigint NOT NULL,
            status text NOT NULL,
            attempt_count integer NOT NULL DEFAULT 0,
            lease_expires_at_ms bigint,
            claimed_by text,
            lease_token text,
            committed_at_ms bigint,
            checkpoint_token text,
            expires_at_ms bigint,
            failures jsonb NOT NULL DEFAULT '[]')""",
        f"""CREATE INDEX IF NOT EXISTS messages_live_order ON {s}.messages
            (mailbox_id, created_at_ms, message_id) WHERE status IN ('pending', 'claimed')""",
        f"""CREATE INDEX IF NOT EXISTS messages_pending_priority ON {s}.messages
            (mailbox_id, priority DESC, created_at_ms, message_id) WHERE status = 'pending'""",
        f"""CREATE INDEX IF NOT EXISTS messages_live_sender ON {s}.messages
            (mailbox_id, sender_id, created_at_ms, message_id)
            WHERE status IN ('pending', 'claimed')""",
        f"""CREATE INDEX IF NOT EXISTS messages_claimed_leases ON {s}.messages
            (mailbox_id, lease_expires_at_ms) WHERE status = 'claimed'""",
        f"""CREATE INDEX IF NOT EXISTS messages_ttl ON {s}.messages (expires_at_ms)
            WHERE status = 'pending' AND expires_at_ms IS NOT NULL""",
        f"""CREATE INDEX IF NOT EXISTS messages_by_status ON {s}.messages
            (mailbox_id, status)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.dead_letters (
            message_id text COLLATE "C" PRIMARY KEY,
            mailbox_id text COLLATE "C" NOT NULL,
            sender_id text NOT NULL,
            payload bytea NOT NULL,
            headers jsonb NOT NULL,
            priority integer NOT NULL,
            created_at_ms bigint NOT NULL,
            attempt_count integer NOT NULL,
            poison_reason text NOT NULL,
            dead_lettered_at_ms bigint NOT NULL,
            failure_history jsonb NOT NULL)""",
        f"""CREATE INDEX IF NOT EXISTS dead_letters_by_time ON {s}.dead_letters
            (mailbox_id, dead_lettered_at_ms, message_id)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.schema_version (version integer NOT NULL)""",
        f"""INSERT INTO {s}.schema_version SELECT {SCHEMA_VERSION}
            WHERE NOT EXISTS (SELECT 1 FROM {s}.schema_version)""",
    )


def _lease_lost(m: str, now: str = "$2::bigint") -> str:
    """A one-entry history: the lease of ``m`` (a row alias) expired and was recovered."""
    return (
        f"jsonb_build_array(jsonb_build_object('attempt', {m}.attempt_count, 'claimed_by', "
        f"{m}.claimed_by, 'failure_kind', 'transient', 'note', 'lease expired', 'at_ms', {now}))"
    )


def _dead_letter_move(
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
        SELECT mailbox_id, {_SLOT}, count(*) FROM moved GROUP BY mailbox_id ORDER BY mailbox_id
        ON CONFLICT (mailbox_id, slot) DO UPDATE SET n = {s}.settled.n + EXCLUDED.n)"""


_CLAIMABLE = """((m.status = 'pending' AND m.visible_at_ms <= $2)
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
_PEEK_HOLD = """AND NOT EXISTS (
            SELECT 1 FROM {s}.messages e WHERE e.mailbox_id = $1
              AND e.sender_id = m.sender_id AND e.status = 'claimed')"""


def _claim(s: str, hold: str, order: str) -> str:
    """One claim attempt ($1 mailbox, $2 now, $3 claimer, $4 token, $5 lease end, $6 max).

    Picks the next candidate (pending and visible, or claimed with an expired lease; TTL
    not passed) with SKIP LOCKED and returns the mailbox's other expired leases to
    pending. Under max_attempts the candidate is claimed (``kind = 'claim'``); at the
    limit it is dead-lettered (``kind = 'dead'``) and the caller tries again.
    """
    lost = _lease_lost("m")
    pick = f"""
    pick AS (
        SELECT m.message_id, m.attempt_count AS attempt, m.status AS was FROM {s}.messages m
        WHERE m.mailbox_id = $1 AND {_CLAIMABLE}
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
        RETURNING {_M}),
    exhausted AS (SELECT message_id, attempt, was FROM pick WHERE attempt >= $6),"""
    move = _dead_letter_move(
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


#: ``(status || '') = `` keeps a lookup by message id on the primary key: a bare
#: ``status = 'claimed'`` lets the generic plan prefer a full scan of a partial index it
#: believes small (with many messages in flight, a scan of all of them per commit)
_BY_ID = "(status || '') = "
_ORDER = {
    "fifo": "m.created_at_ms, m.message_id",
    "unordered": "m.created_at_ms, m.message_id",
    "priority": "m.priority DESC, m.created_at_ms, m.message_id",
}


@attrs.frozen(slots=True)
class Statements:
    """Every statement of the store, formatted once for one (quoted) schema."""

    schema: str
    channel: str
    ddl: tuple[str, ...]
    lock_schema: str
    insert_mailbox: str
    get_mailbox: str
    get_mailboxes: str
    list_mailboxes: str
    stats: str
    lock_counts: str
    add_admitted: str
    delete_mailbox: str
    insert_messages: str
    admit_fast: str
    peek: dict[str, str]
    claim: dict[str, str]
    next_wake: str
    commit: str
    release_transient: str
    release_permanent: str
    reject: str
    message_state: str
    is_committed: str
    dead_letters: str
    dead_letters_reason: str
    dead_letter: str
    purge: str
    sweep_leases: str
    sweep_expired: str
    sweep_retention: str
    notify: str

    @classmethod
    def for_schema(cls, schema: str) -> Statements:
        """Format every statement for ``schema`` (a plain identifier)."""
        s = f'"{schema}"'
        channel = f"dovecote_{schema}"[:63]
        insert_cols = (
            "message_id, mailbox_id, sender_id, payload, headers, priority, created_at_ms, "
            "visible_at_ms, status, expires_at_ms"
        )
        unnest = (
            "SELECT u.id, u.mb, u.sender, u.payload, u.headers::jsonb, u.priority, u.created, "
            "u.visible, 'pending', u.expires FROM unnest($1::text[], $2::text[], $3::text[], "
            "$4::bytea[], $5::text[], $6::int[], $7::bigint[], $8::bigint[], $9::bigint[]) "
            "AS u(id, mb, sender, payload, headers, priority, created, visible, expires)"
        )
        settle_one = f"""
            INSERT INTO {s}.settled (mailbox_id, slot, n) SELECT mailbox_id, {_SLOT}, 1 FROM done
            ON CONFLICT (mailbox_id, slot) DO UPDATE SET n = {s}.settled.n + 1"""
        state = f"""SELECT status, claimed_by, lease_token, mailbox_id, attempt_count
            FROM {s}.messages WHERE message_id = $1"""
        # a fifo mailbox wakes its streams when a sender's head leaves and more wait behind it
        notify_next = f"""SELECT pg_notify('{channel}', d.mailbox_id) FROM done d
            WHERE (SELECT b.ordering_mode FROM {s}.mailboxes b WHERE b.agent_id = d.mailbox_id)
                = 'fifo'
              AND EXISTS (SELECT 1 FROM {s}.messages x WHERE x.mailbox_id = d.mailbox_id
                AND x.sender_id = d.sender_id AND x.status IN ('pending', 'claimed')
                AND x.status = 'pending')"""
        claim = {
            mode: _claim(s, _FIFO_HOLD.format(s=s) if mode == "fifo" else "", order)
            for mode, order in _ORDER.items()
        }
        peek = {
            mode: f"""SELECT {_M} FROM {s}.messages m WHERE m.mailbox_id = $1
                AND m.status = 'pending' AND m.visible_at_ms <= $2
                AND (m.expires_at_ms IS NULL OR m.expires_at_ms > $2) AND m.attempt_count < $3
                {_PEEK_HOLD.format(s=s) if mode == "fifo" else ""}
                ORDER BY {order} LIMIT $4"""
            for mode, order in _ORDER.items()
        }
        return cls(
            schema=schema,
            channel=channel,
            ddl=_ddl(s),
            lock_schema="SELECT pg_advisory_xact_lock(hashtext('dovecote.schema.' || $1))",
            insert_mailbox=f"""INSERT INTO {s}.mailboxes ({MAILBOX_COLUMNS}, created_at_ms)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (agent_id) DO NOTHING
                RETURNING agent_id""",
            get_mailbox=f"SELECT {MAILBOX_COLUMNS} FROM {s}.mailboxes WHERE agent_id = $1",
            get_mailboxes=f"""SELECT {MAILBOX_COLUMNS} FROM {s}.mailboxes
                WHERE agent_id = ANY($1::text[])""",
            list_mailboxes=f"""SELECT {MAILBOX_COLUMNS} FROM {s}.mailboxes
                WHERE $1::text IS NULL OR agent_id > $1 ORDER BY agent_id LIMIT $2""",
            stats=f"""SELECT
                count(*) FILTER (WHERE status = 'pending') AS pending,
                count(*) FILTER (WHERE status = 'claimed') AS claimed,
                count(*) FILTER (WHERE status = 'committed') AS committed,
                (SELECT count(*) FROM {s}.dead_letters d WHERE d.mailbox_id = $1) AS dead,
                min(created_at_ms) FILTER (WHERE status = 'pending') AS oldest
                FROM {s}.messages WHERE mailbox_id = $1""",
            lock_counts=f"""SELECT b.agent_id, b.capacity, b.admitted - coalesce(
                    (SELECT sum(n) FROM {s}.settled t WHERE t.mailbox_id = b.agent_id), 0) AS live
                FROM {s}.mailboxes b WHERE b.agent_id = ANY($1::text[])
                ORDER BY b.agent_id FOR UPDATE OF b""",
            add_admitted=f"""UPDATE {s}.mailboxes b SET admitted = b.admitted + u.n
                FROM unnest($1::text[], $2::bigint[]) AS u(mb, n) WHERE b.agent_id = u.mb""",
            delete_mailbox=f"DELETE FROM {s}.mailboxes WHERE agent_id = ANY($1::text[])",
            insert_messages=f"""WITH ins AS (INSERT INTO {s}.messages ({insert_cols}) {unnest}
                RETURNING mailbox_id)
                SELECT pg_notify('{channel}', mb)
                FROM (SELECT DISTINCT mailbox_id AS mb FROM ins) x""",
            admit_fast=f"""WITH need AS (
                    SELECT mb, count(*) AS n FROM unnest($2::text[]) AS u(mb) GROUP BY mb),
                lk AS (
                    SELECT b.agent_id, b.capacity, b.admitted FROM {s}.mailboxes b
                    WHERE b.agent_id IN (SELECT mb FROM need) ORDER BY b.agent_id FOR UPDATE OF b),
                ok AS (
                    SELECT count(*) = (SELECT count(*) FROM need) AND coalesce(bool_and(
                        lk.admitted + need.n - coalesce((SELECT sum(t.n) FROM {s}.settled t
                            WHERE t.mailbox_id = lk.agent_id), 0) <= lk.capacity), true) AS ok
                    FROM need JOIN lk ON lk.agent_id = need.mb),
                ins AS (
                    INSERT INTO {s}.messages ({insert_cols}) {unnest}
                    WHERE (SELECT ok FROM ok) RETURNING 1),
                up AS (
                    UPDATE {s}.mailboxes b SET admitted = b.admitted + need.n FROM need
                    WHERE b.agent_id = need.mb AND (SELECT ok FROM ok)),
                woke AS (
                    SELECT pg_notify('{channel}', mb) FROM need WHERE (SELECT ok FROM ok))
                SELECT (SELECT ok FROM ok) AS ok, (SELECT count(*) FROM woke) AS woke""",
            peek=peek,
            claim=claim,
            next_wake=f"""SELECT least(
                (SELECT min(visible_at_ms) FROM {s}.messages WHERE mailbox_id = $1
                    AND status = 'pending' AND visible_at_ms > $2),
                (SELECT min(lease_expires_at_ms) FROM {s}.messages WHERE mailbox_id = $1
                    AND status = 'claimed' AND lease_expires_at_ms > $2))""",
            commit=f"""WITH done AS (
                    UPDATE {s}.messages SET status = 'committed', committed_at_ms = $3,
                        checkpoint_token = $4, lease_expires_at_ms = NULL, lease_token = NULL
                    WHERE message_id = $1 AND {_BY_ID}'claimed' AND claimed_by = $2
                      AND ($5::text IS NULL OR lease_token = $5)
                    RETURNING mailbox_id, sender_id),
                settle AS ({settle_one}),
                woke AS ({notify_next})
                SELECT (SELECT mailbox_id FROM done) AS done, (SELECT count(*) FROM woke),
                    s.* FROM (SELECT 1) one LEFT JOIN ({state}) s ON true""",
            release_transient=f"""WITH done AS (
                    UPDATE {s}.messages SET status = 'pending', claimed_by = NULL,
                        lease_token = NULL, lease_expires_at_ms = NULL,
                        failures = failures || jsonb_build_array(jsonb_build_object(
                            'attempt', attempt_count, 'claimed_by', $2::text,
                            'failure_kind', 'transient', 'note', $4::text, 'at_ms', $3::bigint))
                    WHERE message_id = $1 AND {_BY_ID}'claimed' AND claimed_by = $2
                      AND ($5::text IS NULL OR lease_token = $5)
                    RETURNING mailbox_id),
                woke AS (SELECT pg_notify('{channel}', mailbox_id) FROM done)
                SELECT (SELECT mailbox_id FROM done) AS done, (SELECT count(*) FROM woke),
                    s.* FROM (SELECT 1) one LEFT JOIN ({state}) s ON true""",
            release_permanent=f"""WITH src AS (
                    SELECT message_id, attempt_count AS attempt FROM {s}.messages
                    WHERE message_id = $1 AND {_BY_ID}'claimed' AND claimed_by = $3
                      AND ($5::text IS NULL OR lease_token = $5) FOR UPDATE),
                {_dead_letter_move(s, "src", "'permanent_failure'", "$4::text", "$3::text")},
                done AS (SELECT g.mailbox_id, g.sender_id FROM gone g),
                woke AS ({notify_next})
                SELECT (SELECT mailbox_id FROM moved) AS done, (SELECT count(*) FROM woke),
                    s.* FROM (SELECT 1) one LEFT JOIN ({state}) s ON true""",
            reject=f"""WITH src AS (
                    SELECT message_id, attempt_count AS attempt FROM {s}.messages
                    WHERE message_id = $1 AND {_BY_ID}'pending' FOR UPDATE),
                {_dead_letter_move(s, "src", "'validation_failed'", "$3::text", "NULL::text")},
                done AS (SELECT g.mailbox_id, g.sender_id FROM gone g),
                woke AS ({notify_next})
                SELECT (SELECT mailbox_id FROM moved) AS done, (SELECT count(*) FROM woke),
                    s.* FROM (SELECT 1) one LEFT JOIN ({state}) s ON true""",
            message_state=state,
            is_committed=f"""SELECT EXISTS (SELECT 1 FROM {s}.messages WHERE message_id = $2
                AND mailbox_id = $1 AND {_BY_ID}'committed')""",
            dead_letters=f"""SELECT {DEAD_LETTER_COLUMNS} FROM {s}.dead_letters
                WHERE mailbox_id = $1 ORDER BY dead_lettered_at_ms, message_id LIMIT $2""",
            dead_letters_reason=f"""SELECT {DEAD_LETTER_COLUMNS} FROM {s}.dead_letters
                WHERE mailbox_id = $1 AND poison_reason = $3
                ORDER BY dead_lettered_at_ms, message_id LIMIT $2""",
            dead_letter=f"SELECT {DEAD_LETTER_COLUMNS} FROM {s}.dead_letters WHERE message_id = $1",
            purge=f"""WITH d AS (DELETE FROM {s}.dead_letters WHERE mailbox_id = $1
                AND dead_lettered_at_ms < $2 RETURNING 1) SELECT count(*) FROM d""",
            sweep_leases=f"""WITH src AS (
                    SELECT message_id FROM {s}.messages
                    WHERE status = 'claimed' AND lease_expires_at_ms <= $1
                    FOR UPDATE SKIP LOCKED),
                done AS (
                    UPDATE {s}.messages m SET status = 'pending', claimed_by = NULL,
                        lease_token = NULL, lease_expires_at_ms = NULL,
                        failures = m.failures || {_lease_lost("m", "$1::bigint")}
                    FROM src WHERE m.message_id = src.message_id RETURNING m.mailbox_id),
                woke AS (SELECT pg_notify('{channel}', mb)
                    FROM (SELECT DISTINCT mailbox_id AS mb FROM done) x)
                SELECT (SELECT count(*) FROM done), (SELECT count(*) FROM woke)""",
            sweep_expired=f"""WITH src AS (
                    SELECT message_id, attempt_count AS attempt FROM {s}.messages
                    WHERE status = 'pending' AND expires_at_ms <= $1
                    FOR UPDATE SKIP LOCKED),
                {_dead_letter_move(s, "src", "'expired'",
                                   "'message TTL expired before being claimed'", "NULL::text",
                                   "$1::bigint")}
                SELECT mailbox_id, count(*) FROM moved GROUP BY mailbox_id""",
            sweep_retention=f"""WITH d AS (DELETE FROM {s}.dead_letters d USING {s}.mailboxes b
                    WHERE d.mailbox_id = b.agent_id AND b.dlq_retention_ms IS NOT NULL
                      AND d.dead_lettered_at_ms <= $1 - b.dlq_retention_ms RETURNING 1)
                SELECT count(*) FROM d""",
            notify=f"SELECT pg_notify('{channel}', $1)",
        )
