"""A node process for the remote tests: ``node_proc.py URL SYSTEM HOST BUCKET [fast]``.

Spawns ``echo``, ``recorder`` and ``a.dotted.name`` (an Echo), prints READY, and runs
until stdin closes (then shuts down gracefully) or it is killed. With
``durable PG_URL SCHEMA`` it also spawns ``ledger``, an actor with a durable mailbox on
that PostgreSQL schema, which logs each message it handled to the store mailbox
``handled``.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from remote_kit import Echo, Recorder

from dovecote import Actor, ActorOptions, ActorSystem
from dovecote.durable import open_store
from dovecote.remote import NatsRemote


class Ledger(Actor):
    """Takes a while per message, then logs it to the store mailbox ``handled``."""

    def __init__(self, store: Any) -> None:
        super().__init__()
        self.store = store

    async def on_receive(self, message: Any) -> None:
        await asyncio.sleep(0.05)
        await self.store.send("handled", str(message).encode(), sender="ledger")


async def main(url: str, system: str, host: str, bucket: str, *flags: str) -> None:
    remote = NatsRemote(servers=url, bucket=bucket)
    if "fast" in flags:
        remote = NatsRemote(servers=url, bucket=bucket, heartbeat_interval=0.2, down_after=1.5)
    store = None
    if "durable" in flags:
        pg_url, schema = flags[flags.index("durable") + 1 :][:2]
        store = await open_store(pg_url, schema=schema, max_size=4, sweep_interval=0.2)
    async with ActorSystem(system, host=host, remote=remote) as node:
        if store is not None:
            options = ActorOptions.create().with_durable_mailbox(store, lease_duration_ms=1000)
            node.spawn(lambda: Ledger(store), "ledger", options)
        node.spawn(Echo, "echo")
        node.spawn(Recorder, "recorder")
        node.spawn(Echo, "a.dotted.name")
        print("READY", flush=True)
        await asyncio.to_thread(sys.stdin.read)  # until the test closes our stdin


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
