"""A durable ledger actor in its own process, for the SIGKILL test.

    python inbox_actor_worker.py DATABASE LEASE_MS

Opens the store on the SQLite file DATABASE (``orders`` mailbox, filled by the test) and
an aiosqlite connection to the same file for the inbox and the ledger, then books every
order it is delivered through ``Inbox.handle_delivery``. Prints ``ready``, then one line
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
    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox

    async def on_receive(self, order: dict[str, int]) -> None:
        async def book(tx: Any) -> None:
            await tx.execute(
                "INSERT INTO ledger (order_no, amount) VALUES (?, ?)",
                (order["no"], order["amount"]),
            )
            await tx.execute("UPDATE balance SET total = total + ?", (order["amount"],))

        outcome = await self.inbox.handle_delivery(self.context, book)
        print(f"{'booked' if outcome.fresh else 'skipped'} {order['no']}", flush=True)


async def main(database: str, lease_ms: int) -> None:
    async with open_store(f"sqlite:///{database}", sweep_interval=0.05) as store:
        db = await aiosqlite.connect(database, timeout=30)
        try:
            inbox = Inbox(db, table="ledger_inbox", audit=False)
            async with ActorSystem("shop") as system:
                options = ActorOptions.create().with_durable_mailbox(
                    store, "orders", lease_duration_ms=lease_ms, claim_ahead=1
                )
                system.spawn(lambda: Ledger(inbox), "ledger", options=options)
                print("ready", flush=True)
                await asyncio.to_thread(sys.stdin.read)  # until the test closes stdin
                await system.shutdown(timeout=5)
        finally:
            await db.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
