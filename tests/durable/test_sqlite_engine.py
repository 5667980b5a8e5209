"""The SQLite engine: group commit, per-op failure isolation, whole-batch rollback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dovecote.durable import CapacityError, MailboxNotFoundError, SqliteStore, StorageError
from dovecote.durable._sqlite_txn import Txn


@pytest.fixture(params=["memory", "full", "normal"])
async def sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SqliteStore]:
    if request.param == "memory":
        store = await SqliteStore.open(":memory:", sweep_interval=None)
    else:
        store = await SqliteStore.open(str(tmp_path / "e.db"), sweep_interval=None,
                                       durability=request.param)
    yield store
    await store.close()


async def test_concurrent_sends_share_transactions(sqlite: SqliteStore) -> None:
    await sqlite.ensure_mailbox("q", capacity=10_000)
    before = sqlite._engine.batches
    sent = await asyncio.gather(*(sqlite.send("q", b"x", sender=f"s{i}") for i in range(200)))
    assert len({m.message_id for m in sent}) == 200
    assert sqlite._engine.batches - before < 20  # group commit, not 200 transactions
    assert (await sqlite.stats("q")).pending_count == 200


async def test_a_failing_op_fails_alone_in_its_batch(sqlite: SqliteStore) -> None:
    await sqlite.ensure_mailbox("full", capacity=1)
    results = await asyncio.gather(
        sqlite.send("ok", b"1", sender="s"),
        sqlite.send("full", b"2", sender="s"),
        sqlite.send("full", b"3", sender="s"),
        sqlite.fanout(["ok", "full"], b"4", sender="s"),
        sqlite.send("ok", b"5", sender="s"),
        return_exceptions=True,
    )
    assert [type(r).__name__ for r in results] == [
        "StoredMessage", "StoredMessage", "CapacityError", "CapacityError", "StoredMessage"]
    assert [m.payload for m in await sqlite.peek("ok")] == [b"1", b"5"]
    assert [m.payload for m in await sqlite.peek("full")] == [b"2"]


async def test_a_run_of_sends_that_overflows_falls_back_to_one_by_one(
    sqlite: SqliteStore,
) -> None:
    await sqlite.ensure_mailbox("q", capacity=3)
    results = await asyncio.gather(
        *(sqlite.send("q", bytes([i]), sender="s") for i in range(5)), return_exceptions=True
    )
    assert sum(isinstance(r, CapacityError) for r in results) == 2
    assert (await sqlite.stats("q")).pending_count == 3


def _explode(txn: Txn) -> None:
    raise RuntimeError("disk on fire")


def _create(txn: Txn) -> None:
    txn.conn.execute(
        "INSERT INTO mailboxes (agent_id, capacity, ordering_mode, max_attempts, "
        "lease_duration_ms, max_payload_bytes, created_at_ms) "
        "VALUES ('made', 1, 'fifo', 1, 1, 1, 0)"
    )


def _nothing(txn: Txn) -> None:
    return None


async def test_an_unexpected_error_rolls_the_whole_batch_back(sqlite: SqliteStore) -> None:
    engine: Any = sqlite._engine
    # the first op of a turn starts at once, alone; the next two share the next batch
    results = await asyncio.gather(engine.run(_nothing), engine.run(_create),
                                   engine.run(_explode), return_exceptions=True)
    assert results[0] is None
    assert all(isinstance(r, StorageError) for r in results[1:])
    assert isinstance(results[2].__cause__, RuntimeError)
    with pytest.raises(MailboxNotFoundError):
        await sqlite.get_mailbox("made")
    await sqlite.send("q", b"x", sender="s")  # the engine goes on
    assert (await sqlite.stats("q")).pending_count == 1


async def test_a_lone_call_starts_at_once_and_later_ones_in_its_turn_queue(
    sqlite: SqliteStore,
) -> None:
    engine: Any = sqlite._engine
    await sqlite.ensure_mailbox("q")  # done at once: still this turn
    await asyncio.sleep(0)  # a new turn of the loop
    before = engine.batches
    futures = [engine.run(_nothing) for _ in range(3)]
    assert engine.batches == before + 1  # the first one's transaction already ran
    await asyncio.gather(*futures)
    assert engine.batches == before + 2  # the other two shared one


async def test_close_finishes_queued_work(tmp_path: Path) -> None:
    path = str(tmp_path / "c.db")
    store = await SqliteStore.open(path, sweep_interval=None)
    pending = [asyncio.ensure_future(store.send("q", b"x", sender="s")) for _ in range(50)]
    await asyncio.sleep(0)
    await store.close()
    assert all(p.done() and p.exception() is None for p in pending)
    reopened = await SqliteStore.open(path, sweep_interval=None)
    assert (await reopened.stats("q")).pending_count == 50
    await reopened.close()


async def test_a_send_cancelled_before_its_batch_ran_never_happens(sqlite: SqliteStore) -> None:
    await sqlite.ensure_mailbox("q")
    kept = asyncio.ensure_future(sqlite.send("q", b"kept", sender="s"))
    dropped = asyncio.ensure_future(sqlite.send("q", b"dropped", sender="s"))
    await asyncio.sleep(0)  # both are queued; their batch has not run yet
    dropped.cancel()
    await kept
    assert [m.payload for m in await sqlite.peek("q")] == [b"kept"]


async def test_a_lone_fsync_runs_inline_only_while_fsyncs_are_fast(tmp_path: Path) -> None:
    from dovecote.durable._sqlite_engine import INLINE_SYNC_S

    store = await SqliteStore.open(str(tmp_path / "f.db"), sweep_interval=None)
    engine: Any = store._engine
    try:
        await store.ensure_mailbox("q")
        await asyncio.sleep(0)  # a new turn: the next call is a lone one
        engine._sync_s = 10 * INLINE_SYNC_S  # a slow disk: the fsync leaves the loop
        slow = engine.run(_nothing)
        assert not slow.done()
        await slow
        assert engine._sync_s < 10 * INLINE_SYNC_S  # the helper's commit was measured
        await asyncio.sleep(0)
        engine._sync_s = 0.0  # a fast disk: committed (and fsynced) before run returns
        fast = engine.run(_nothing)
        assert fast.done()
        assert fast.result() is None
        assert engine._sync_s > 0.0  # measured inline too: a slow fsync switches back
    finally:
        await store.close()
