"""dovecote's durable store rows: ``SqliteStore`` through ``open_store``.

One awaited call at a time (what a lone caller pays), then many concurrent senders or
consumers whose operations share transactions (group commit), at ``durability="full"``
and ``"normal"``. The yardstick is ``sqlite_plain`` doing the same work by hand.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from dovecote.durable import open_store

from .._measure import perf_counter
from ._base import Metrics
from ._store_shape import CONSUMERS, PAYLOAD, SENDERS, claim_size, send_size


async def _send(store: Any, n: int, senders: int) -> float:
    left = n

    async def sender() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await store.send("q", PAYLOAD, sender="s")

    t0 = perf_counter()
    await asyncio.gather(*(sender() for _ in range(senders)))
    return n / (perf_counter() - t0)


async def _claim_commit(store: Any, n: int, consumers: int) -> float:
    left = n

    async def consumer(name: str) -> None:
        nonlocal left
        while left > 0:
            left -= 1
            claim = await store.claim("q", claimer=name)
            assert claim is not None
            await store.commit(claim.message.message_id, claimer=name, checkpoint_token="t")

    t0 = perf_counter()
    await asyncio.gather(*(consumer(f"w{i}") for i in range(consumers)))
    return n / (perf_counter() - t0)


class DovecoteStoreWorkloads:
    """Mixed into the dovecote adapter: the ``store_*`` workloads."""

    async def _store(self, folder: str, name: str, durability: str) -> Any:
        store = await open_store(f"sqlite:///{Path(folder) / name}", sweep_interval=None,
                                 durability=durability)
        await store.ensure_mailbox("q", capacity=10**9, ordering_mode="unordered")
        return store

    async def wl_store_send(self, n: int) -> Metrics:
        out: Metrics = {}
        with tempfile.TemporaryDirectory(prefix="bench-store-") as folder:
            for durability in ("full", "normal"):
                store = await self._store(folder, f"send-{durability}.db", durability)
                size = send_size(n, durability)
                await _send(store, max(1, size // 10), 1)  # warm the WAL file
                out[f"{durability}_per_s"] = await _send(store, size, 1)
                out[f"group_{durability}_per_s"] = await _send(store, n, SENDERS)
                await store.close()
        return out

    async def wl_store_claim(self, n: int) -> Metrics:
        out: Metrics = {}
        with tempfile.TemporaryDirectory(prefix="bench-store-") as folder:
            for durability in ("full", "normal"):
                store = await self._store(folder, f"claim-{durability}.db", durability)
                size = claim_size(n, durability)
                await _send(store, 3 * size, SENDERS)
                await _claim_commit(store, size // 10, 1)  # warm up
                out[f"{durability}_per_s"] = await _claim_commit(store, size, 1)
                out[f"group_{durability}_per_s"] = await _claim_commit(store, size, CONSUMERS)
                await store.close()
        return out
