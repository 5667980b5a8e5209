"""A node process for the remote tests: ``node_proc.py URL SYSTEM HOST BUCKET [fast]``.

Spawns ``echo``, ``recorder`` and ``a.dotted.name`` (an Echo), prints READY, and runs
until stdin closes (then shuts down gracefully) or it is killed.
"""

from __future__ import annotations

import asyncio
import sys

from remote_kit import Echo, Recorder

from dovecote import ActorSystem
from dovecote.remote import NatsRemote


async def main(url: str, system: str, host: str, bucket: str, *flags: str) -> None:
    remote = NatsRemote(servers=url, bucket=bucket)
    if "fast" in flags:
        remote = NatsRemote(servers=url, bucket=bucket, heartbeat_interval=0.2, down_after=1.5)
    async with ActorSystem(system, host=host, remote=remote) as node:
        node.spawn(Echo, "echo")
        node.spawn(Recorder, "recorder")
        node.spawn(Echo, "a.dotted.name")
        print("READY", flush=True)
        await asyncio.to_thread(sys.stdin.read)  # until the test closes our stdin


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
