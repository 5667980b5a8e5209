"""Claimers that drain one PostgreSQL mailbox; used in-process and as a child process.

``python tests/durable/pg_claimers.py URL SCHEMA MAILBOX N PREFIX`` runs ``N`` claimers on
one store (its own pool) until the mailbox is empty and prints one JSON line per commit:
``[claimer, message_id, sender, t_claimed, t_committing]`` (``time.monotonic()``, which is
one clock for every process on the machine).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

Held = list[Any]


async def drain(store: Any, mailbox: str, claimers: list[str],
                on_first: Any = None) -> list[Held]:
    """Claim and commit until nothing is pending; every commit must succeed.

    ``on_first()`` is called once, when the first of these claimers holds a message."""
    done: list[Held] = []

    async def one(name: str) -> None:
        nonlocal on_first
        while True:
            claim = await store.claim(mailbox, claimer=name)
            if claim is None:
                if (await store.stats(mailbox)).pending_count == 0:
                    return
                # fifo: every sender's next message is held by another claimer; try again
                # (a claimer that gave up here could miss the whole run under load)
                await asyncio.sleep(0.001)
                continue
            claimed = time.monotonic()
            if on_first is not None:
                on_first()
                on_first = None
            await asyncio.sleep(0.001)  # the "work": widens the window a double hold shows in
            message = claim.message
            committing = time.monotonic()
            await store.commit(message.message_id, claimer=name, checkpoint_token=name,
                               lease_token=claim.lease_token)
            done.append([name, message.message_id, message.sender_id, claimed, committing])

    await asyncio.gather(*(one(name) for name in claimers))
    return done


async def _main(url: str, schema: str, mailbox: str, n: int, prefix: str) -> None:
    from dovecote.durable import open_store

    store: Any = await open_store(url, sweep_interval=None, schema=schema, max_size=4)
    try:
        print("ready", flush=True)
        sys.stdin.readline()  # the parent says go once everyone is connected
        def first() -> None:
            print("claiming", flush=True)  # the parent starts its own claimers now

        for held in await drain(store, mailbox, [f"{prefix}{i}" for i in range(n)], first):
            print(json.dumps(held))
    finally:
        await store.close()


if __name__ == "__main__":
    url, schema, mailbox, n, prefix = sys.argv[1:6]
    asyncio.run(_main(url, schema, mailbox, int(n), prefix))
