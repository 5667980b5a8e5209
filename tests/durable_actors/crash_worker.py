"""Child process of the crash test: a durable actor that prints each message it handled.

Usage: python crash_worker.py DATABASE — exits 0 once it has handled the message "end".
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from dovecote import Actor, ActorOptions, ActorSystem
from dovecote.durable import open_store

LEASE_MS = 200


class Printer(Actor):
    def __init__(self, finished: asyncio.Future[None]) -> None:
        super().__init__()
        self.finished = finished

    async def on_receive(self, message: Any) -> None:
        await asyncio.sleep(0)  # an await inside the handler: kills land mid-message too
        print(f"handled {message}", flush=True)
        if message == "end":
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
        system.spawn(lambda: Printer(finished), "printer", options)
        await finished


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
