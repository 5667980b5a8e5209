"""Remote tells into a durable mailbox on a shared PostgreSQL survive a SIGKILLed node."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from remote_kit import NodeProcess

from dovecote import ActorSystem
from dovecote.durable import MailboxNotFoundError, open_store
from service_urls import postgres_url

N = 60


async def until(check: Callable[[], Any], timeout: float) -> None:
    """Poll the store until ``check()`` is true: another process writes to it, and its
    counts have no wake-up to await."""

    async def poll() -> None:
        while not await check():  # noqa: ASYNC110 (see above)
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), timeout)


async def test_every_stored_message_is_handled_across_a_sigkill(
    nats: str, system_name: str, fast: Callable[..., Any]
) -> None:
    pg = postgres_url()
    schema = f"dovecote_remote_{uuid.uuid4().hex[:12]}"
    store = await open_store(pg, schema=schema, max_size=2, sweep_interval=None)
    first = NodeProcess(nats, system_name, "worker", "fast", "durable", pg, schema)
    second: NodeProcess | None = None
    try:
        await first.ready()
        async with ActorSystem(system_name, host="client", remote=fast()) as client:
            ledger = client.resolve(first.address + "/user/ledger")
            for i in range(N):
                ledger.tell(i)

            async def all_stored() -> bool:
                try:
                    s = await store.stats("/user/ledger")
                except MailboxNotFoundError:  # the worker has not written its first one yet
                    return False
                return s.pending_count + s.claimed_count + s.committed_count == N

            async def some_handled() -> bool:
                return (await store.stats("/user/ledger")).committed_count >= 5

            await until(all_stored, 20)  # acknowledged: every message is in the store
            await until(some_handled, 20)
            first.kill()  # mid-run: most messages still pending, one claimed
            assert (await store.stats("/user/ledger")).committed_count < N
            second = NodeProcess(nats, system_name, "worker", "fast", "durable", pg, schema)
            await second.ready()

            async def all_handled() -> bool:
                s = await store.stats("/user/ledger")
                return s.committed_count == N and s.pending_count == s.claimed_count == 0

            await until(all_handled, 30)
            handled = {int(m.payload) for m in await store.peek("handled", max=10 * N)}
            assert handled == set(range(N))  # at least once: none lost (a repeat is allowed)
    finally:
        first.kill()
        if second is not None:
            second.stop()
        await store.drop_schema()
        await store.close()
