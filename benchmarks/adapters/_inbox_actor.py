"""The exactly-once durable actor beside the at-least-once one (SQLite file, FULL).

Both actors have a durable mailbox on one store file and book each order into a ledger
table in that file through an aiosqlite connection. The at-least-once actor books with a
plain transaction (``BEGIN IMMEDIATE``, INSERT, COMMIT: a crash before its store commit
books the order again); the exactly-once one books through ``Inbox.handle_delivery``.
N tells, the clock stops when the N-th order is booked. Each phase gets a fresh file.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from dovecote import Actor, ActorOptions, ActorSystem
from dovecote.durable import Inbox, open_store

from .._measure import perf_counter
from ._base import Metrics, Unavailable

Book = Callable[[Actor, Any], Awaitable[None]]


class _Booker(Actor):
    def __init__(self, book: Book, done: asyncio.Future[None], target: int) -> None:
        super().__init__()
        self.book, self.done, self.target, self.n = book, done, target, 0

    async def on_receive(self, order: Any) -> None:
        await self.book(self, order)
        self.n += 1
        if self.n == self.target:
            self.done.set_result(None)


async def _phase(folder: Path, n: int, exactly_once: bool) -> float:
    import aiosqlite

    path = folder / f"{'once' if exactly_once else 'least'}.db"
    async with open_store(f"sqlite:///{path}", sweep_interval=None) as store:
        db = await aiosqlite.connect(path, timeout=30)
        try:
            await db.execute("CREATE TABLE ledger (order_no INT, amount INT)")
            await db.commit()
            inbox = Inbox(db, table="ledger_inbox", audit=False)
            await inbox.declare_schema()
            insert = "INSERT INTO ledger VALUES (?, ?)"

            async def plain(actor: Actor, order: Any) -> None:
                await db.execute("BEGIN IMMEDIATE")
                await db.execute(insert, (order, order))
                await db.commit()

            async def once(actor: Actor, order: Any) -> None:
                await inbox.handle_delivery(
                    actor.context, lambda tx: tx.execute(insert, (order, order))
                )

            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            book = once if exactly_once else plain
            async with ActorSystem("bench-inbox-actor") as system:
                options = ActorOptions.create().with_durable_mailbox(store, "orders")
                ref = system.spawn(lambda: _Booker(book, done, n), "booker", options=options)
                t0 = perf_counter()
                for i in range(n):
                    ref.tell(i)
                await done
                return n / (perf_counter() - t0)
        finally:
            await db.close()


async def durable_actor_inbox(n: int) -> Metrics:
    try:
        import aiosqlite  # noqa: F401
    except ImportError as exc:
        raise Unavailable(f"aiosqlite: {exc}") from exc
    with tempfile.TemporaryDirectory(prefix="bench-inbox-actor-") as tmp:
        least = await _phase(Path(tmp), n, exactly_once=False)
        once = await _phase(Path(tmp), n, exactly_once=True)
    return {
        "exactly_once_per_s": once,
        "at_least_once_per_s": least,
        "once_vs_least": once / least,
    }
