"""Child process of the claim-ahead crash test: handles messages until it reaches "hold".

Usage: python claim_ahead_worker.py DATABASE — prints ``handled X`` per message, then
``holding`` and waits forever inside the handler of "hold" (the test kills it there,
with the messages claimed ahead of it in memory).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from dovecote import Actor, ActorOptions, ActorSystem
from dovecote.durable import open_store

LEASE_MS = 300


class Holder(Actor):
    async def on_receive(self, message: Any) -> None:
        if message == "hold":
            print("holding", flush=True)
            await asyncio.Event().wait()
        print(f"handled {message}", flush=True)


async def main(database: str) -> None:
    async with (
        open_store(f"sqlite:///{database}", sweep_interval=None) as store,
        ActorSystem("ahead") as system,
    ):
        options = ActorOptions.create().with_durable_mailbox(
            store, "ahead", lease_duration_ms=LEASE_MS  # claim_ahead: the default
        )
        system.spawn(Holder, "holder", options)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
