"""Inbox.handle_delivery: exactly-once effects for an actor on a durable mailbox."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from dovecote import Actor, ActorOptions, ActorSystem
from dovecote.durable import (
    Inbox,
    InboxStats,
    InvalidStateError,
    StoredMessage,
    durable_message,
    open_store,
)

ORDERS = 12
FLAKY = 5  # this order's first delivery fails *after* its inbox commit


class Ledger(Actor):
    """Books orders exactly once; order FLAKY crashes once after booking (no store ack)."""

    def __init__(self, inbox: Inbox, seen: list[tuple[int, bool]], done: asyncio.Event):
        super().__init__()
        self.inbox, self.seen, self.done = inbox, seen, done

    async def on_receive(self, order: dict[str, int]) -> None:
        async def book(tx: Any) -> StoredMessage | None:
            await tx.execute(
                "INSERT INTO ledger (order_no, amount) VALUES (?, ?)",
                (order["no"], order["amount"]),
            )
            return durable_message(self.context)

        outcome = await self.inbox.handle_delivery(self.context, book)
        self.seen.append((order["no"], outcome.fresh))
        if len(self.seen) == ORDERS + 1:
            self.done.set()
        if order["no"] == FLAKY and outcome.fresh:
            raise RuntimeError("crashed after the inbox commit, before the store commit")


async def test_a_redelivered_message_skips_the_handler_and_is_committed(tmp_path: Path):
    path = tmp_path / "shop.db"
    async with open_store(f"sqlite:///{path}", sweep_interval=0.05) as store:
        db = await aiosqlite.connect(path)
        try:
            inbox = Inbox(db, table="ledger_inbox")
            await inbox.declare_schema()
            await db.execute("CREATE TABLE ledger (order_no INT NOT NULL, amount INT)")
            await db.commit()
            seen: list[tuple[int, bool]] = []
            done = asyncio.Event()
            async with ActorSystem("shop") as system:
                options = ActorOptions.create().with_durable_mailbox(store, "orders")
                ref = system.spawn(lambda: Ledger(inbox, seen, done), "ledger", options=options)
                for n in range(ORDERS):
                    await ref.tell_durable({"no": n, "amount": 10 * n})
                await asyncio.wait_for(done.wait(), 30)
                await system.shutdown(timeout=5)  # flushes the last commits to the store

            assert sorted(seen) == sorted([(n, True) for n in range(ORDERS)] + [(FLAKY, False)])
            rows = await db.execute_fetchall(
                "SELECT order_no, count(*) FROM ledger GROUP BY order_no ORDER BY order_no"
            )
            assert [tuple(r) for r in rows] == [(n, 1) for n in range(ORDERS)]
            assert await inbox.get_stats(source="orders") == InboxStats(ORDERS, ORDERS, 0)
            stats = await store.stats("orders")
            assert (stats.committed_count, stats.pending_count, stats.claimed_count) == (
                ORDERS,
                0,
                0,
            )
        finally:
            await db.close()


class Probe(Actor):
    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox

    async def on_receive(self, message: Any) -> Any:
        if message == "where":
            return durable_message(self.context)
        await self.inbox.handle_delivery(self.context, lambda tx: None)


async def test_handle_delivery_outside_a_durable_delivery_is_an_invalid_state(tmp_path: Path):
    db = await aiosqlite.connect(tmp_path / "x.db")
    try:
        inbox = Inbox(db, table="probe_inbox")
        async with ActorSystem("probe") as system:
            ordinary = system.spawn(lambda: Probe(inbox), "probe")
            assert await ordinary.ask("where") is None
            with pytest.raises(InvalidStateError, match="durable mailbox"):
                await ordinary.ask("handle")
        with pytest.raises(InvalidStateError):
            await inbox.handle_delivery(object(), lambda tx: None)
    finally:
        await db.close()


async def test_durable_message_names_the_stored_message_being_handled(tmp_path: Path):
    async with open_store(f"sqlite:///{tmp_path / 's.db'}", sweep_interval=None) as store:
        seen: asyncio.Future[StoredMessage | None] = asyncio.get_running_loop().create_future()

        class Peek(Actor):
            async def on_receive(self, message: Any) -> None:
                await asyncio.sleep(0)  # still known after an await
                seen.set_result(durable_message(self.context))

        async with ActorSystem("peek") as system:
            options = ActorOptions.create().with_durable_mailbox(store)
            ref = system.spawn(Peek, "peek", options=options)
            await ref.tell_durable("hello")
            stored = await asyncio.wait_for(seen, 10)
        assert stored is not None
        assert stored.mailbox_id == ref.path  # the default store mailbox: the actor's path
        assert stored.status == "claimed"
