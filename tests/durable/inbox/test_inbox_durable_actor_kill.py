"""SIGKILL a durable ledger actor at random points, again and again: every order is booked
exactly once, none lost, none doubled. On SQLite (store, inbox and ledger in one file) and
on PostgreSQL (store, inbox and ledger in one schema).

The worker process (inbox_actor_worker.py) books each delivered order through
``Inbox.handle_delivery``; the test kills it with SIGKILL after a random number of
deliveries plus a random few milliseconds, so kills land anywhere: inside the handler's
transaction, between the inbox commit and the store commit, between messages. Each new
worker gets the killed one's claims back after their lease. ``DOVECOTE_INBOX_KILL_RUNS``
(default 4 per backend) sets how many workers are killed; ``DOVECOTE_INBOX_KILL_SEED``
replays a run.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
import asyncpg
import attrs
import pytest

from dovecote.codec import encode
from dovecote.durable import Inbox, InboxStats, open_store
from service_urls import postgres_url

WORKER = Path(__file__).with_name("inbox_actor_worker.py")
LEASE_MS = 300
KILLS = int(os.environ.get("DOVECOTE_INBOX_KILL_RUNS", "4"))
ORDERS = max(40, 8 * KILLS)  # enough that every kill lands mid-stream
TIMEOUT = 60.0


@attrs.frozen
class Place:
    """Where one run keeps its store, inbox and ledger."""

    kind: str  # "sqlite" | "postgresql"
    target: str  # the SQLite file, or the PostgreSQL URL
    schema: str | None = None

    def worker_args(self) -> list[str]:
        return [self.kind, self.target, str(LEASE_MS), *([self.schema] if self.schema else [])]

    def store(self) -> Any:
        if self.kind == "sqlite":
            return open_store(f"sqlite:///{self.target}", sweep_interval=None)
        return open_store(self.target, sweep_interval=None, schema=self.schema, max_size=2)

    async def state(self) -> Any:
        if self.kind == "sqlite":
            return await aiosqlite.connect(self.target, timeout=30)
        return await asyncpg.create_pool(
            self.target, min_size=1, max_size=2, server_settings={"search_path": self.schema}
        )

    async def run(self, db: Any, sql: str) -> None:
        await db.execute(sql)
        if self.kind == "sqlite":
            await db.commit()

    async def rows(self, db: Any, sql: str) -> list[tuple[Any, ...]]:
        if self.kind == "sqlite":
            return [tuple(r) for r in await db.execute_fetchall(sql)]
        return [tuple(r) for r in await db.fetch(sql)]


@asynccontextmanager
async def _place(kind: str, tmp_path: Path) -> AsyncIterator[Place]:
    if kind == "sqlite":
        yield Place("sqlite", str(tmp_path / "shop.db"))
        return
    place = Place("postgresql", postgres_url(), f"inbox_kill_{uuid.uuid4().hex[:12]}")
    try:
        yield place
    finally:
        conn = await asyncpg.connect(place.target)
        try:
            await conn.execute(f"DROP SCHEMA IF EXISTS {place.schema} CASCADE")
        finally:
            await conn.close()


async def _start(place: Place) -> Any:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        *place.worker_args(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    line = await asyncio.wait_for(proc.stdout.readline(), TIMEOUT)
    if line.strip() != b"ready":
        err = await proc.stderr.read()
        raise AssertionError(f"worker did not start: {line!r}\n{err.decode()}")
    return proc


async def _deliveries(proc: Any, count: int, log: list[str]) -> None:
    for _ in range(count):
        line = await asyncio.wait_for(proc.stdout.readline(), TIMEOUT)
        if not line:
            return
        log.append(line.decode().strip())


async def _all_committed(place: Place) -> None:
    """Return once the store shows every order committed (another process commits them:
    its database is the only place to observe that, so this looks every 50 ms)."""
    async with place.store() as store:
        while True:
            if (await store.stats("orders")).committed_count == ORDERS:
                return
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_sigkill_at_random_points_books_every_order_exactly_once(
    kind: str, tmp_path: Path
):
    seed = int(os.environ.get("DOVECOTE_INBOX_KILL_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    async with _place(kind, tmp_path) as place:
        async with place.store() as store:
            # many deliveries per message are expected here: never dead-letter one
            await store.ensure_mailbox("orders", ordering_mode="unordered", max_attempts=1_000)
            for n in range(ORDERS):
                await store.send("orders", encode({"no": n, "amount": n + 1}), sender="test")
        db = await place.state()
        try:
            await _kill_and_check(place, db, rng, seed)
        finally:
            await db.close()


async def _kill_and_check(place: Place, db: Any, rng: random.Random, seed: int) -> None:
    inbox = Inbox(db, table="ledger_inbox")
    await inbox.declare_schema()
    await place.run(db, "CREATE TABLE ledger (order_no INT NOT NULL, amount INT NOT NULL)")
    await place.run(db, "CREATE TABLE balance (total INT NOT NULL)")
    await place.run(db, "INSERT INTO balance VALUES (0)")

    log: list[str] = []
    kills = 0
    while kills < KILLS:
        proc = await _start(place)
        progress = asyncio.ensure_future(_deliveries(proc, rng.randint(1, 6), log))
        finished = asyncio.ensure_future(_all_committed(place))
        await asyncio.wait({progress, finished}, timeout=TIMEOUT, return_when="FIRST_COMPLETED")
        if finished.done():  # nothing left to kill it in the middle of
            progress.cancel()
            proc.stdin.close()
            await asyncio.wait_for(proc.wait(), TIMEOUT)
            break
        finished.cancel()
        await asyncio.sleep(rng.uniform(0, 0.03))  # where the kill lands, not a wait
        proc.send_signal(signal.SIGKILL)
        assert await proc.wait() == -signal.SIGKILL
        kills += 1
    last = await _start(place)
    try:
        await asyncio.wait_for(_all_committed(place), TIMEOUT)
    finally:
        last.stdin.close()
        await asyncio.wait_for(last.wait(), TIMEOUT)

    context = f"seed {seed}, {kills} kills, deliveries seen: {log}"
    rows = await place.rows(
        db, "SELECT order_no, count(*), sum(amount) FROM ledger GROUP BY order_no ORDER BY 1"
    )
    assert rows == [(n, 1, n + 1) for n in range(ORDERS)], context
    assert await place.rows(db, "SELECT total FROM balance") == [
        (sum(range(1, ORDERS + 1)),)
    ], context
    assert await inbox.get_stats(source="orders") == InboxStats(ORDERS, ORDERS, 0)
    async with place.store() as store:
        stats = await store.stats("orders")
        assert (stats.committed_count, stats.dead_lettered_count) == (ORDERS, 0), context
