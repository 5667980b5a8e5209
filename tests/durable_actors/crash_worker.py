"""Child process of the crash test: a durable actor that prints each message it handled.

Usage: python crash_worker.py DATABASE — exits 0 once it has handled the message "end"
and nothing else is left in the mailbox.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from dovecote import Actor, ActorOptions, ActorSystem
from dovecote.durable import open_store

LEASE_MS = 200


class Printer(Actor):
    """Prints each message; finishes once it has seen "end" and nothing else is left
    (messages a killed worker held come back when their leases run out)."""

    def __init__(self, finished: asyncio.Future[None], store: Any) -> None:
        super().__init__()
        self.finished = finished
        self.store = store
        self.ended = False

    async def on_receive(self, message: Any) -> None:
        await asyncio.sleep(0)  # an await inside the handler: kills land mid-message too
        print(f"handled {message}", flush=True)
        self.ended = self.ended or message == "end"
        if self.ended and not self.finished.done():
            stats = await self.store.stats("crash")
            if stats.pending_count == 0 and stats.claimed_count == 1:  # only this one
                self.finished.set_result(None)


async def main(database: str) -> None:
    async with (
        open_store(f"sqlite:///{database}", sweep_interval=0.05) as store,
        ActorSystem("crash") as system,
    ):
        finished = asyncio.get_running_loop().create_future()
        options = ActorOptions.create().with_durable_mailbox(
            store, "crash", lease_duration_ms=LEASE_MS
        )
        system.spawn(lambda: Printer(finished, store), "printer", options)
        await finished


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
