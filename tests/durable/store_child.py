"""A child process for the crash and multi-process tests (run by path, not collected).

    python store_child.py writer DB      # concurrent sends and claim+commits; prints acks
    python store_child.py holder DB      # claims one message, prints it, waits to be killed
    python store_child.py claimers DB N  # N claimer tasks drain "q" after a "go" on stdin

Every line is printed only after the store acknowledged the operation (the transaction
committed), so the parent knows exactly what was acknowledged when it sends SIGKILL.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from dovecote.durable import open_store


def _say(*parts: object) -> None:
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


async def writer(store: Any) -> None:
    await store.ensure_mailbox("q", capacity=10**9, ordering_mode="unordered")
    seq = 0

    async def sender(lane: int) -> None:
        nonlocal seq
        while True:
            seq += 1
            mine = seq
            sent = await store.send("q", str(mine).encode(), sender=f"s{lane}")
            _say("sent", mine, sent.message_id)

    async def committer(name: str) -> None:
        while True:
            claim = await store.claim("q", claimer=name)
            if claim is None:
                await asyncio.sleep(0.001)
                continue
            await store.commit(claim.message.message_id, claimer=name, checkpoint_token="done")
            _say("committed", claim.message.message_id)

    _say("ready")
    await asyncio.gather(*(sender(i) for i in range(8)), committer("c1"), committer("c2"))


async def holder(store: Any) -> None:
    claim = await store.claim("q", claimer="holder", lease_duration_ms=1_000)
    assert claim is not None
    _say("claimed", claim.message.message_id, claim.lease_expires_at_ms)
    await asyncio.Event().wait()


async def claimers(store: Any, n: int) -> None:
    loop = asyncio.get_running_loop()
    _say("ready")
    await loop.run_in_executor(None, sys.stdin.readline)
    names = [f"p{os.getpid()}-{i}" for i in range(n)]

    async def take(name: str) -> Any:
        claim = await store.claim("q", claimer=name)
        if claim is not None:
            _say("claimed", name, claim.message.message_id)
        return claim

    async def settle(name: str, claim: Any) -> None:
        await store.commit(claim.message.message_id, claimer=name, checkpoint_token=name,
                           lease_token=claim.lease_token)
        _say("committed", name, claim.message.message_id)

    async def claimer(name: str, first: Any) -> None:
        claim = first
        while claim is not None:
            await settle(name, claim)
            claim = await take(name)

    # every claimer holds one message before any commits: the parent waits until both
    # processes hold theirs (16 held at once), then lets them drain the rest together
    held = await asyncio.gather(*(take(name) for name in names))
    _say("holding")
    await loop.run_in_executor(None, sys.stdin.readline)
    await asyncio.gather(*(claimer(name, first) for name, first in zip(names, held,
                                                                         strict=True)))
    _say("done", store._engine.lock_waits)


async def main() -> None:
    role, path = sys.argv[1], sys.argv[2]
    async with open_store(f"sqlite:///{path}", sweep_interval=None) as store:
        if role == "writer":
            await writer(store)
        elif role == "holder":
            await holder(store)
        else:
            await claimers(store, int(sys.argv[3]))


if __name__ == "__main__":
    asyncio.run(main())
