"""A durable ledger actor in its own process, for the SIGKILL test.

    python inbox_actor_worker.py sqlite DATABASE LEASE_MS
    python inbox_actor_worker.py postgresql URL LEASE_MS SCHEMA

Opens the store (``orders`` mailbox, filled by the test) on the SQLite file DATABASE, or
on PostgreSQL in SCHEMA, and a connection to the same database for the inbox and the
ledger (aiosqlite; an asyncpg pool whose search_path is SCHEMA), then books every order
it is delivered through ``Inbox.handle_delivery``. Prints ``ready``, then one line
per delivery (``booked N`` or ``skipped N``). Runs until killed, or until stdin closes
(then it shuts down cleanly).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import aiosqlite

from dovecote import Actor, ActorOptions, ActorSystem
from dovecote.durable import Inbox, open_store


class Ledger(Actor):
    def __init__(self, inbox: Inbox, sqlite: bool) -> None:
        super().__init__()
        self.inbox = inbox
        self.sqlite = sqlite

    async def on_receive(self, order: dict[str, int]) -> None:
        no, amount = order["no"], order["amount"]

        async def book(tx: Any) -> None:
            if self.sqlite:
                await tx.execute("INSERT INTO ledger (order_no, amount) "
                                 "VALUES (?, ?)", (no, amount))
                await tx.execute("UPDATE balance SET total = total + ?", (amount,))
            else:
                await tx.execute("INSERT INTO ledger (order_no, amount) "
                                 "VALUES ($1, $2)", no, amount)
                await tx.execute("UPDATE balance SET total = total + $1", amount)

        outcome = await self.inbox.handle_delivery(self.context, book)
        print(f"{'booked' if outcome.fresh else 'skipped'} {no}", flush=True)


async def _state(kind: str, target: str, schema: str | None) -> Any:
    if kind == "sqlite":
        return await aiosqlite.connect(target, timeout=30)
    import asyncpg

    return await asyncpg.create_pool(
        target, min_size=1, max_size=2, server_settings={"search_path": str(schema)}
    )


async def main(kind: str, target: str, lease_ms: int, schema: str | None) -> None:
    if kind == "sqlite":
        opened = open_store(f"sqlite:///{target}", sweep_interval=0.05)
    else:
        opened = open_store(target, sweep_interval=0.05, schema=schema, max_size=2)
    async with opened as store:
        db = await _state(kind, target, schema)
        try:
            inbox = Inbox(db, table="ledger_inbox", audit=False)
            async with ActorSystem("shop") as system:
                options = ActorOptions.create().with_durable_mailbox(
                    store, "orders", lease_duration_ms=lease_ms, claim_ahead=1
                )
                system.spawn(lambda: Ledger(inbox, kind == "sqlite"), "ledger", options=options)
                print("ready", flush=True)
                await asyncio.to_thread(sys.stdin.read)  # until the test closes stdin
                await system.shutdown(timeout=5)
        finally:
            await db.close()


if __name__ == "__main__":
    kind, target, lease, *rest = sys.argv[1:]
    asyncio.run(main(kind, target, int(lease), rest[0] if rest else None))
