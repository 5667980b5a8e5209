"""The inbox on the durable store's own SQLite file, beside the store (WAL: two connections).

The store gives at-least-once delivery; an inbox table in the same file, written in the
same transaction as the consumer's state, makes each message's effect happen once even
when the store redelivers (here: the consumer "crashes" after its inbox commit and before
its store commit, so the message comes back).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiosqlite

from dovecote.durable import Inbox, InboxStats, open_store

MAILBOX = "orders"
SOURCE = f"store:{MAILBOX}"


async def test_an_inbox_and_a_store_share_one_sqlite_file(tmp_path: Path):
    path = tmp_path / "shop.db"
    async with open_store(f"sqlite:///{path}", sweep_interval=None) as store:
        db = await aiosqlite.connect(path)
        try:
            mode = await db.execute_fetchall("PRAGMA journal_mode")
            assert next(iter(mode))[0] == "wal"  # the store made the file WAL
            inbox = Inbox(db, table="order_inbox")
            await inbox.declare_schema()
            await db.execute("CREATE TABLE ledger (order_id TEXT NOT NULL, amount INT)")
            await db.commit()

            sent = [await store.send(MAILBOX, f"{n * 10}".encode(), sender="shop") for n in
                    range(1, 21)]
            crashed: set[str] = set()
            applied = 0
            while True:
                claim = await store.claim(MAILBOX, claimer="worker")
                if claim is None:
                    break
                message = claim.message

                async def book(tx: Any, message: Any = message) -> None:
                    await tx.execute(
                        "INSERT INTO ledger VALUES (?, ?)",
                        (message.message_id, int(message.payload)),
                    )

                outcome = await inbox.handle(message.message_id, SOURCE, book)
                applied += outcome.fresh
                if message.message_id not in crashed and len(crashed) < 5:
                    # died after the inbox commit, before acking the store: redelivered
                    crashed.add(message.message_id)
                    await store.release(message.message_id, claimer="worker")
                    continue
                await store.commit(
                    message.message_id, claimer="worker", checkpoint_token="booked"
                )

            rows = await db.execute_fetchall(
                "SELECT order_id, count(*), sum(amount) FROM ledger GROUP BY order_id"
            )
            assert sorted(tuple(r) for r in rows) == sorted(
                (m.message_id, 1, int(m.payload)) for m in sent
            )
            assert applied == 20
            assert len(crashed) == 5
            assert await inbox.get_stats() == InboxStats(20, 20, 0)
            assert (await store.stats(MAILBOX)).committed_count == 20
        finally:
            await db.close()


async def test_store_and_inbox_writers_on_one_file_wait_for_each_other(tmp_path: Path):
    """Concurrent writers through both connections: every write lands, none is refused."""
    path = tmp_path / "busy.db"
    async with open_store(f"sqlite:///{path}", sweep_interval=None) as store:
        db = await aiosqlite.connect(path, timeout=30)
        try:
            inbox = Inbox(db, table="busy_inbox", audit=False)
            await inbox.declare_schema()

            async def through_inbox() -> int:
                fresh = 0
                for i in range(40):
                    fresh += (await inbox.handle(f"m-{i}", "s", lambda tx: None)).fresh
                return fresh

            async def through_store() -> int:
                for i in range(40):
                    await store.send(MAILBOX, b"x%d" % i, sender="load")
                return 40

            fresh, sent = await asyncio.wait_for(
                asyncio.gather(through_inbox(), through_store()), 60
            )
            assert (fresh, sent) == (40, 40)
            assert (await store.stats(MAILBOX)).pending_count == 40
        finally:
            await db.close()
