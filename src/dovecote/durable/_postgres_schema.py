"""The PostgreSQL schema of ``PostgresStore`` and the column lists its statements read.

- ``messages`` holds live (pending, claimed) and committed rows; a dead letter moves to
  ``dead_letters`` (so commit / release of a dead-lettered id finds nothing).
- Capacity without a hot row: ``mailboxes.admitted`` counts every message ever admitted
  (incremented by sends under the mailbox row's lock), and ``settled`` counts messages that
  left the live set (commit, dead letter) in one row per (mailbox, connection slot), so
  settlements on different connections never wait for each other. ``live = admitted -
  sum(settled)``; a settlement not yet committed only makes the check stricter.
- Partial indexes keep each claim an index walk: live messages in created order and by
  sender (fifo hold), pending by priority band, claimed by lease expiry, pending by TTL.
"""

from __future__ import annotations

import re

__all__ = [
    "DEAD_LETTER_COLUMNS",
    "MAILBOX_COLUMNS",
    "MESSAGE_COLUMNS",
    "M_COLUMNS",
    "SCHEMA_VERSION",
    "SLOT",
    "ddl",
    "valid_schema",
]

SCHEMA_VERSION = 1
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

#: the columns of a StoredMessage, in the order ``_row_to_message`` reads them
MESSAGE_COLUMNS = (
    "message_id, mailbox_id, sender_id, payload, headers::text AS headers, priority, "
    "created_at_ms, visible_at_ms, status, attempt_count, lease_expires_at_ms, claimed_by, "
    "committed_at_ms, checkpoint_token, expires_at_ms"
)
M_COLUMNS = MESSAGE_COLUMNS.replace("message_id,", "m.message_id,", 1)
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
SLOT = "(pg_backend_pid() % 64)"


def valid_schema(name: str) -> bool:
    """A schema option must be a plain identifier (it is quoted in SQL all the same)."""
    return isinstance(name, str) and _IDENT.fullmatch(name) is not None


def ddl(s: str) -> tuple[str, ...]:
    """Every CREATE of schema ``s`` (quoted), each idempotent (IF NOT EXISTS)."""
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


