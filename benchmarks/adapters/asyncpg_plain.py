"""The plain-SQL yardstick of the PostgreSQL store rows: asyncpg by hand, no layer.

Same tables and indexes as ``PostgresStore`` (its DDL). A send is one ``INSERT`` on one of
4 connections (each its own transaction); a claim is one ``UPDATE ... WHERE message_id =
(SELECT ... FOR UPDATE SKIP LOCKED) RETURNING`` and a commit one ``UPDATE``, by 4
consumers on 4 connections. No capacity check, no fencing, no metrics, no notify.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from dovecote.durable._postgres_sql import Statements

from .._measure import perf_counter
from ._base import BaseRuntime, Metrics
from ._pg_shape import (
    CONSUMERS,
    PAYLOAD,
    SENDERS,
    connect_or_unavailable,
    drop_schema,
    fresh_schema,
    postgres_url,
)

_ids = itertools.count()


class PlainAsyncpgRuntime(BaseRuntime):
    """``asyncpg`` by hand: the yardstick of the ``store_pg`` workload."""

    name = "asyncpg"
    loop_bound = False

    async def wl_store_pg(self, n: int) -> Metrics:
        url, schema = postgres_url(), fresh_schema()
        sql = Statements.for_schema(schema)
        s = f'"{schema}"'
        conns: list[Any] = [await connect_or_unavailable(url) for _ in range(SENDERS)]
        try:
            for statement in sql.ddl:
                await conns[0].execute(statement)
            insert = (
                f"INSERT INTO {s}.messages (message_id, mailbox_id, sender_id, payload, headers,"
                " priority, created_at_ms, visible_at_ms, status) "
                "VALUES ($1, 'q', 's', $2, '{}', 0, $3, $3, 'pending')"
            )
            claim = (
                f"UPDATE {s}.messages SET status = 'claimed', attempt_count = attempt_count + 1,"
                " claimed_by = $2, lease_expires_at_ms = $3 WHERE message_id = ("
                f"SELECT message_id FROM {s}.messages WHERE mailbox_id = 'q' AND status = "
                "'pending' AND visible_at_ms <= $1 ORDER BY created_at_ms, message_id LIMIT 1 "
                "FOR UPDATE SKIP LOCKED) RETURNING message_id"
            )
            commit = (
                f"UPDATE {s}.messages SET status = 'committed', committed_at_ms = $2, "
                "checkpoint_token = 't' WHERE message_id = $1 AND status = 'claimed' "
                "AND claimed_by = $3"
            )
            each = max(1, n // SENDERS)

            async def sender(conn: Any) -> None:
                for _ in range(each):
                    i = next(_ids)
                    await conn.execute(insert, f"{i:026d}", PAYLOAD, i)

            async def consumer(conn: Any, name: str) -> int:
                done = 0
                while True:
                    found = await conn.fetchval(claim, 2**62, name, 2**62)
                    if found is None:
                        return done
                    await conn.execute(commit, found, 1, name)
                    done += 1

            t0 = perf_counter()
            await asyncio.gather(*(sender(c) for c in conns))
            sent = each * SENDERS / (perf_counter() - t0)
            t0 = perf_counter()
            done = await asyncio.gather(*(consumer(c, f"w{i}") for i, c in
                                          enumerate(conns[:CONSUMERS])))
            claimed = sum(done) / (perf_counter() - t0)
        finally:
            for conn in conns:
                await conn.close()
            await drop_schema(url, schema)
        return {"send_per_s": sent, "claim_per_s": claimed}
