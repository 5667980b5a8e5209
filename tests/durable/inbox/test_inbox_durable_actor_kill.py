"""SIGKILL a durable ledger actor at random points, again and again: every order is booked
exactly once, none lost, none doubled.

The worker process (inbox_actor_worker.py) books each delivered order through
``Inbox.handle_delivery``; the test kills it with SIGKILL after a random number of
deliveries plus a random few milliseconds, so kills land anywhere: inside the handler's
transaction, between the inbox commit and the store commit, between messages. Each new
worker gets the killed one's claims back after their lease. ``DOVECOTE_INBOX_KILL_RUNS``
(default 6) sets how many workers are killed; ``DOVECOTE_INBOX_KILL_SEED`` replays a run.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from pathlib import Path
from typing import Any

import aiosqlite

from dovecote.codec import encode
from dovecote.durable import Inbox, InboxStats, open_store

WORKER = Path(__file__).with_name("inbox_actor_worker.py")
LEASE_MS = 300
KILLS = int(os.environ.get("DOVECOTE_INBOX_KILL_RUNS", "6"))
ORDERS = max(40, 8 * KILLS)  # enough that every kill lands mid-stream
TIMEOUT = 60.0


async def _start(path: Path) -> Any:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        str(path),
        str(LEASE_MS),
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


async def _all_committed(path: Path) -> None:
    """Return once the store shows every order committed (another process commits them:
    its database is the only place to observe that, so this looks every 50 ms)."""
    async with open_store(f"sqlite:///{path}", sweep_interval=None) as store:
        while True:
            if (await store.stats("orders")).committed_count == ORDERS:
                return
            await asyncio.sleep(0.05)


async def test_sigkill_at_random_points_books_every_order_exactly_once(tmp_path: Path):
    seed = int(os.environ.get("DOVECOTE_INBOX_KILL_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    path = tmp_path / "shop.db"
    async with open_store(f"sqlite:///{path}", sweep_interval=None) as store:
        # many deliveries per message are expected here: never dead-letter one
        await store.ensure_mailbox("orders", ordering_mode="unordered", max_attempts=1_000)
        for n in range(ORDERS):
            await store.send("orders", encode({"no": n, "amount": n + 1}), sender="test")
    db = await aiosqlite.connect(path, timeout=30)
    try:
        inbox = Inbox(db, table="ledger_inbox")
        await inbox.declare_schema()
        await db.execute("CREATE TABLE ledger (order_no INT NOT NULL, amount INT NOT NULL)")
        await db.execute("CREATE TABLE balance (total INT NOT NULL)")
        await db.execute("INSERT INTO balance VALUES (0)")
        await db.commit()

        log: list[str] = []
        kills = 0
        while kills < KILLS:
            proc = await _start(path)
            progress = asyncio.ensure_future(_deliveries(proc, rng.randint(1, 6), log))
            finished = asyncio.ensure_future(_all_committed(path))
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
        last = await _start(path)
        try:
            await asyncio.wait_for(_all_committed(path), TIMEOUT)
        finally:
            last.stdin.close()
            await asyncio.wait_for(last.wait(), TIMEOUT)

        context = f"seed {seed}, deliveries seen: {log}"
        rows = await db.execute_fetchall(
            "SELECT order_no, count(*), sum(amount) FROM ledger GROUP BY order_no ORDER BY 1"
        )
        assert [tuple(r) for r in rows] == [(n, 1, n + 1) for n in range(ORDERS)], context
        (total,) = next(iter(await db.execute_fetchall("SELECT total FROM balance")))
        assert total == sum(range(1, ORDERS + 1)), context
        assert await inbox.get_stats(source="orders") == InboxStats(ORDERS, ORDERS, 0)
        async with open_store(f"sqlite:///{path}", sweep_interval=None) as store:
            stats = await store.stats("orders")
            assert (stats.committed_count, stats.dead_lettered_count) == (ORDERS, 0), context
    finally:
        await db.close()
