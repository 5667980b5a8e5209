"""Inbox.handle beside the same transaction without the inbox, on SQLite and PostgreSQL.

Each message is one transaction that inserts an order row and adds its amount to a
balance (two statements, the example's handler). ``plain`` runs that transaction by hand
(SQLite: ``BEGIN IMMEDIATE`` ... ``COMMIT``, what ``handle`` opens; PostgreSQL: a pooled
connection's transaction); ``inbox`` runs it as the handler of ``Inbox.handle`` with a
fresh message id. The two alternate in 20 rounds inside one process, so machine drift
lands on both, and ``inbox_vs_plain`` is the median of the rounds' rate ratios.

SQLite runs in WAL mode twice: with ``synchronous=FULL`` (the store's default durability,
an fsync per commit: ``handles_per_s``, ``plain_per_s``, ``inbox_vs_plain``) and with
``synchronous=NORMAL`` (no fsync, so nothing hides the inbox's own CPU cost:
``inbox_vs_plain_normal``).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from dovecote.durable import Inbox

from .._measure import perf_counter
from ._base import Metrics, Unavailable

ROUNDS = 20
POSTGRES_URL = os.environ.get(
    "DOVECOTE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


async def _alternate(
    n: int, plain: Callable[[int], Awaitable[None]], inbox: Callable[[int], Awaitable[None]]
) -> Metrics:
    """Rates of both over ROUNDS alternating rounds; the ratio is the median of the rounds'
    ratios, so a burst of load from elsewhere on the machine skews one round, not the figure."""
    per_round = max(1, n // ROUNDS)
    spent = {"plain": 0.0, "inbox": 0.0}
    ratios: list[float] = []
    i = 0
    for r in range(ROUNDS):
        pair = [("plain", plain), ("inbox", inbox)]
        took: dict[str, float] = {}
        for name, step in pair if r % 2 == 0 else pair[::-1]:
            t0 = perf_counter()
            for _ in range(per_round):
                await step(i)
                i += 1
            took[name] = perf_counter() - t0
            spent[name] += took[name]
        ratios.append(took["plain"] / took["inbox"])
    done = per_round * ROUNDS
    return {
        "handles_per_s": done / spent["inbox"],
        "plain_per_s": done / spent["plain"],
        "inbox_vs_plain": statistics.median(ratios),
    }


async def inbox_sqlite(n: int) -> Metrics:
    durable = await _sqlite_pair(n, "FULL")
    fast = await _sqlite_pair(n, "NORMAL")
    return {**durable, "inbox_vs_plain_normal": fast["inbox_vs_plain"]}


async def _sqlite_pair(n: int, synchronous: str) -> Metrics:
    try:
        import aiosqlite
    except ImportError as exc:
        raise Unavailable(f"aiosqlite: {exc}") from exc
    with tempfile.TemporaryDirectory() as tmp:
        db = await aiosqlite.connect(Path(tmp) / "bench.db")
        try:
            await db.execute("PRAGMA journal_mode=WAL")
            await db.execute(f"PRAGMA synchronous={synchronous}")
            await db.execute("CREATE TABLE account (id INTEGER PRIMARY KEY, balance INT)")
            await db.execute("CREATE TABLE orders (id TEXT PRIMARY KEY, amount INT)")
            await db.execute("INSERT INTO account VALUES (1, 0)")
            await db.commit()
            inbox = Inbox(db, table="bench_inbox", audit=False)
            await inbox.declare_schema()

            async def work(tx: Any, i: int, kind: str) -> None:
                await tx.execute("INSERT INTO orders VALUES (?, ?)", (f"{kind}-{i}", i))
                await tx.execute("UPDATE account SET balance = balance + ? WHERE id = 1", (i,))

            async def plain(i: int) -> None:
                await db.execute("BEGIN IMMEDIATE")
                await work(db, i, "p")
                await db.commit()

            async def through_inbox(i: int) -> None:
                outcome = await inbox.handle(f"m-{i}", "bench", lambda tx: work(tx, i, "i"))
                assert outcome.fresh

            return await _alternate(n, plain, through_inbox)
        finally:
            await db.close()


async def inbox_postgres(n: int) -> Metrics:
    try:
        import asyncpg
    except ImportError as exc:
        raise Unavailable(f"asyncpg: {exc}") from exc
    try:
        pool = await asyncpg.create_pool(POSTGRES_URL, min_size=1, max_size=2)
    except (OSError, asyncpg.PostgresError) as exc:
        raise Unavailable(f"PostgreSQL at {POSTGRES_URL}: {exc}") from exc
    suffix = uuid.uuid4().hex[:10]
    account, orders, table = f"bench_account_{suffix}", f"bench_orders_{suffix}", f"bench_{suffix}"
    try:
        await pool.execute(f"CREATE TABLE {account} (id INT PRIMARY KEY, balance BIGINT)")
        await pool.execute(f"CREATE TABLE {orders} (id TEXT PRIMARY KEY, amount BIGINT)")
        await pool.execute(f"INSERT INTO {account} VALUES (1, 0)")
        inbox = Inbox(pool, table=table, audit=False)
        await inbox.declare_schema()
        insert = f"INSERT INTO {orders} VALUES ($1, $2)"
        update = f"UPDATE {account} SET balance = balance + $1 WHERE id = 1"

        async def work(tx: Any, i: int, kind: str) -> None:
            await tx.execute(insert, f"{kind}-{i}", i)
            await tx.execute(update, i)

        async def plain(i: int) -> None:
            async with pool.acquire() as conn, conn.transaction():
                await work(conn, i, "p")

        async def through_inbox(i: int) -> None:
            outcome = await inbox.handle(f"m-{i}", "bench", lambda tx: work(tx, i, "i"))
            assert outcome.fresh

        return await _alternate(n, plain, through_inbox)
    finally:
        for name in (account, orders, table):
            await pool.execute(f"DROP TABLE IF EXISTS {name}")
        await pool.close()
