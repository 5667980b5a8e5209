"""Every statement of ``PostgresStore``, formatted once for one schema (``Statements``).

Each operation is one statement (its own transaction): the schema is in
``_postgres_schema``, the claim and dead-letter CTE chains in ``_postgres_claim_sql``.
Claims pick with ``FOR UPDATE SKIP LOCKED`` (many processes share one mailbox); every
statement that makes a message claimable calls ``pg_notify`` (delivered on commit), so
``claim_stream`` in any process wakes without polling. A commit, release or rejection
that matches nothing also returns the row as it was, so the store names the reason
without a second query (and nothing changed). Claims and commits first try a lean
statement for the usual case (``claim_fast``, ``commit_fast``: no row when a commit is
refused) and run the full one only when that reports it is needed.
"""

from __future__ import annotations

import attrs

from dovecote.durable._postgres_claim_sql import (
    BY_ID,
    ORDER,
    PEEK_HOLD,
    claim_fast_statement,
    claim_statement,
    dead_letter_move,
    fifo_hold,
    lease_lost,
)
from dovecote.durable._postgres_schema import (
    DEAD_LETTER_COLUMNS,
    M_COLUMNS,
    MAILBOX_COLUMNS,
    SLOT,
    ddl,
)

__all__ = ["Statements"]


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
    claim_fast: dict[str, str]
    next_wake: str
    commit: str
    commit_fast: str
    release_transient: str
    release_permanent: str
    unclaim: str
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
            INSERT INTO {s}.settled (mailbox_id, slot, n) SELECT mailbox_id, {SLOT}, 1 FROM done
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
        commit_ctes = f"""WITH done AS (
                    UPDATE {s}.messages SET status = 'committed', committed_at_ms = $3,
                        checkpoint_token = $4, lease_expires_at_ms = NULL, lease_token = NULL
                    WHERE message_id = $1 AND {BY_ID}'claimed' AND claimed_by = $2
                      AND ($5::text IS NULL OR lease_token = $5)
                    RETURNING mailbox_id, sender_id),
                settle AS ({settle_one}),
                woke AS ({notify_next})"""
        claim = {
            mode: claim_statement(s, fifo_hold(s) if mode == "fifo" else "", order)
            for mode, order in ORDER.items()
        }
        claim_fast = {
            mode: claim_fast_statement(s, fifo_hold(s) if mode == "fifo" else "", order)
            for mode, order in ORDER.items()
        }
        peek = {
            mode: f"""SELECT {M_COLUMNS} FROM {s}.messages m WHERE m.mailbox_id = $1
                AND m.status = 'pending' AND m.visible_at_ms <= $2
                AND (m.expires_at_ms IS NULL OR m.expires_at_ms > $2) AND m.attempt_count < $3
                {PEEK_HOLD.format(s=s) if mode == "fifo" else ""}
                ORDER BY {order} LIMIT $4"""
            for mode, order in ORDER.items()
        }
        return cls(
            schema=schema,
            channel=channel,
            ddl=ddl(s),
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
            claim_fast=claim_fast,
            next_wake=f"""SELECT least(
                (SELECT min(visible_at_ms) FROM {s}.messages WHERE mailbox_id = $1
                    AND status = 'pending' AND visible_at_ms > $2),
                (SELECT min(lease_expires_at_ms) FROM {s}.messages WHERE mailbox_id = $1
                    AND status = 'claimed' AND lease_expires_at_ms > $2))""",
            commit=f"""{commit_ctes}
                SELECT (SELECT mailbox_id FROM done) AS done, (SELECT count(*) FROM woke),
                    s.* FROM (SELECT 1) one LEFT JOIN ({state}) s ON true""",
            commit_fast=f"""{commit_ctes}
                SELECT d.mailbox_id, (SELECT count(*) FROM woke) FROM done d""",
            release_transient=f"""WITH done AS (
                    UPDATE {s}.messages SET status = 'pending', claimed_by = NULL,
                        lease_token = NULL, lease_expires_at_ms = NULL,
                        failures = failures || jsonb_build_array(jsonb_build_object(
                            'attempt', attempt_count, 'claimed_by', $2::text,
                            'failure_kind', 'transient', 'note', $4::text, 'at_ms', $3::bigint))
                    WHERE message_id = $1 AND {BY_ID}'claimed' AND claimed_by = $2
                      AND ($5::text IS NULL OR lease_token = $5)
                    RETURNING mailbox_id),
                woke AS (SELECT pg_notify('{channel}', mailbox_id) FROM done)
                SELECT (SELECT mailbox_id FROM done) AS done, (SELECT count(*) FROM woke),
                    s.* FROM (SELECT 1) one LEFT JOIN ({state}) s ON true""",
            unclaim=f"""WITH done AS (
                    UPDATE {s}.messages SET status = 'pending', attempt_count = attempt_count - 1,
                        claimed_by = NULL, lease_token = NULL, lease_expires_at_ms = NULL
                    WHERE message_id = $1 AND {BY_ID}'claimed' AND claimed_by = $2
                      AND lease_token = $3
                    RETURNING mailbox_id),
                woke AS (SELECT pg_notify('{channel}', mailbox_id) FROM done)
                SELECT (SELECT mailbox_id FROM done) AS done, (SELECT count(*) FROM woke),
                    s.* FROM (SELECT 1) one LEFT JOIN ({state}) s ON true""",
            release_permanent=f"""WITH src AS (
                    SELECT message_id, attempt_count AS attempt FROM {s}.messages
                    WHERE message_id = $1 AND {BY_ID}'claimed' AND claimed_by = $3
                      AND ($5::text IS NULL OR lease_token = $5) FOR UPDATE),
                {dead_letter_move(s, "src", "'permanent_failure'", "$4::text", "$3::text")},
                done AS (SELECT g.mailbox_id, g.sender_id FROM gone g),
                woke AS ({notify_next})
                SELECT (SELECT mailbox_id FROM moved) AS done, (SELECT count(*) FROM woke),
                    s.* FROM (SELECT 1) one LEFT JOIN ({state}) s ON true""",
            reject=f"""WITH src AS (
                    SELECT message_id, attempt_count AS attempt FROM {s}.messages
                    WHERE message_id = $1 AND {BY_ID}'pending' FOR UPDATE),
                {dead_letter_move(s, "src", "'validation_failed'", "$3::text", "NULL::text")},
                done AS (SELECT g.mailbox_id, g.sender_id FROM gone g),
                woke AS ({notify_next})
                SELECT (SELECT mailbox_id FROM moved) AS done, (SELECT count(*) FROM woke),
                    s.* FROM (SELECT 1) one LEFT JOIN ({state}) s ON true""",
            message_state=state,
            is_committed=f"""SELECT EXISTS (SELECT 1 FROM {s}.messages WHERE message_id = $2
                AND mailbox_id = $1 AND {BY_ID}'committed')""",
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
                        failures = m.failures || {lease_lost("m", "$1::bigint")}
                    FROM src WHERE m.message_id = src.message_id RETURNING m.mailbox_id),
                woke AS (SELECT pg_notify('{channel}', mb)
                    FROM (SELECT DISTINCT mailbox_id AS mb FROM done) x)
                SELECT (SELECT count(*) FROM done), (SELECT count(*) FROM woke)""",
            sweep_expired=f"""WITH src AS (
                    SELECT message_id, attempt_count AS attempt FROM {s}.messages
                    WHERE status = 'pending' AND expires_at_ms <= $1
                    FOR UPDATE SKIP LOCKED),
                {dead_letter_move(s, "src", "'expired'",
                                   "'message TTL expired before being claimed'", "NULL::text",
                                   "$1::bigint")}
                SELECT mailbox_id, count(*) FROM moved GROUP BY mailbox_id""",
            sweep_retention=f"""WITH d AS (DELETE FROM {s}.dead_letters d USING {s}.mailboxes b
                    WHERE d.mailbox_id = b.agent_id AND b.dlq_retention_ms IS NOT NULL
                      AND d.dead_lettered_at_ms <= $1 - b.dlq_retention_ms RETURNING 1)
                SELECT count(*) FROM d""",
            notify=f"SELECT pg_notify('{channel}', $1)",
        )
