"""dovecote's PostgreSQL store row: ``PostgresStore`` through ``open_store``.

The same work as ``asyncpg_plain`` at the same concurrency: 4 concurrent senders on a
store whose pool has 4 connections (their sends share transactions: group commit), then
4 consumers claiming and committing (each call one statement) until the mailbox is empty.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dovecote.durable import open_store

from .._measure import perf_counter
from ._base import Metrics
from ._pg_shape import (
    CONSUMERS,
    PAYLOAD,
    SENDERS,
    connect_or_unavailable,
    drop_schema,
    fresh_schema,
    postgres_url,
)


class DovecotePostgresWorkloads:
    """Mixed into the dovecote adapter: the ``store_pg`` workload."""

    async def wl_store_pg(self, n: int) -> Metrics:
        url, schema = postgres_url(), fresh_schema()
        await (await connect_or_unavailable(url)).close()
        store: Any = await open_store(url, sweep_interval=None, schema=schema,
                                      min_size=SENDERS, max_size=SENDERS)
        try:
            await store.ensure_mailbox("q", capacity=10**9, ordering_mode="unordered")
            each = max(1, n // SENDERS)

            async def sender() -> None:
                for _ in range(each):
                    await store.send("q", PAYLOAD, sender="s")

            async def consumer(name: str) -> int:
                done = 0
                while True:
                    claim = await store.claim("q", claimer=name)
                    if claim is None:
                        return done
                    await store.commit(claim.message.message_id, claimer=name,
                                       checkpoint_token="t")
                    done += 1

            t0 = perf_counter()
            await asyncio.gather(*(sender() for _ in range(SENDERS)))
            sent = each * SENDERS / (perf_counter() - t0)
            t0 = perf_counter()
            done = await asyncio.gather(*(consumer(f"w{i}") for i in range(CONSUMERS)))
            claimed = sum(done) / (perf_counter() - t0)
        finally:
            await store.close()
            await drop_schema(url, schema)
        return {"send_per_s": sent, "claim_per_s": claimed}
