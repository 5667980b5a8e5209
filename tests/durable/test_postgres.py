"""What only the PostgreSQL backend promises: many connections and processes on one
database, LISTEN/NOTIFY wake-ups, whole-database sweeps, schema setup under concurrency.

Every test works in a schema of its own on the shared server and drops it afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from dovecote import ManualClock
from dovecote.durable import CapacityError, InvalidRequestError, StorageError, open_store

from .pg_claimers import drain
from .pg_fixtures import pg_db  # noqa: F401  (the "db" fixture)

WAIT = 10.0
CLAIMERS = Path(__file__).with_name("pg_claimers.py")
ROOT = Path(__file__).resolve().parents[2]


async def _open(db: tuple[str, str], **options: Any) -> Any:
    url, schema = db
    options.setdefault("sweep_interval", None)
    options.setdefault("max_size", 4)
    return await open_store(url, schema=schema, **options)


async def _child(db: tuple[str, str], mailbox: str, n: int,
                 prefix: str) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(CLAIMERS), db[0], db[1], mailbox, str(n), prefix,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=ROOT,
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), WAIT)
    assert line.strip() == b"ready", line
    return proc


@pytest.mark.parametrize("mode", ["fifo", "unordered"])
async def test_sixteen_claimers_in_two_processes_commit_every_message_exactly_once(
    db: tuple[str, str], mode: str,
) -> None:
    senders = [f"sender-{i}" for i in range(8)]
    per_sender = 20
    first, second = await _open(db), await _open(db)
    try:
        await first.ensure_mailbox("jobs", ordering_mode=mode, capacity=len(senders) * per_sender)

        async def send_all(sender: str) -> list[str]:
            return [(await first.send("jobs", b"job", sender=sender)).message_id
                    for _ in range(per_sender)]

        sent = dict(zip(senders, await asyncio.gather(*map(send_all, senders)), strict=True))
        with pytest.raises(CapacityError):
            await second.send("jobs", b"one too many", sender="x")
        child = await _child(db, "jobs", 8, "child-")
        assert child.stdin is not None
        assert child.stdout is not None
        child.stdin.write(b"go\n")
        await child.stdin.drain()
        # the child goes first (it starts slower under load), so every process takes part
        assert await asyncio.wait_for(child.stdout.readline(), WAIT) == b"claiming\n"
        local = drain(first, "jobs", [f"a-{i}" for i in range(4)])
        other = drain(second, "jobs", [f"b-{i}" for i in range(4)])
        ours, theirs, (out, _) = await asyncio.wait_for(
            asyncio.gather(local, other, child.communicate()), 120)
        assert child.returncode == 0
        held = ours + theirs + [json.loads(line) for line in out.decode().splitlines()]

        committed = [h[1] for h in held]
        assert sorted(committed) == sorted(i for ids in sent.values() for i in ids)
        assert len(set(committed)) == len(committed)  # nobody committed a message twice
        assert {h[0].split("-")[0] for h in held} == {"a", "b", "child"}  # all took part
        if mode == "fifo":  # per-sender hold: one at a time, in send order
            for sender, ids in sent.items():
                mine = sorted((h for h in held if h[2] == sender), key=lambda h: h[3])
                assert [h[1] for h in mine] == ids
                for before, after in itertools.pairwise(mine):
                    assert after[3] > before[4], (sender, before, after)
        stats = await second.stats("jobs")
        assert (stats.pending_count, stats.claimed_count, stats.committed_count) == (
            0, 0, len(committed))
        # every settlement, from every connection and process, freed its place
        again = await asyncio.gather(*(second.send("jobs", b"j", sender="s")
                                       for _ in range(len(committed))))
        assert len(again) == len(committed)
        with pytest.raises(CapacityError):
            await first.send("jobs", b"one too many", sender="x")
    finally:
        await first.close()
        await second.close()


async def test_concurrent_senders_on_two_pools_never_exceed_the_capacity(
    db: tuple[str, str],
) -> None:
    first, second = await _open(db), await _open(db)
    try:
        await first.ensure_mailbox("tight", capacity=10)
        await second.get_mailbox("tight")  # both know it: both take the one-statement path
        results = await asyncio.gather(
            *(store.send("tight", b"x", sender=f"s{i}")
              for i in range(10) for store in (first, second)),
            return_exceptions=True,
        )
        assert sum(not isinstance(r, BaseException) for r in results) == 10
        assert all(isinstance(r, CapacityError) for r in results if isinstance(r, BaseException))
        assert (await first.stats("tight")).pending_count == 10
    finally:
        await first.close()
        await second.close()


async def test_claim_stream_is_woken_by_a_send_from_another_store_without_polling(
    db: tuple[str, str],
) -> None:
    clock = ManualClock(wall_start=1_700_000_000.0)  # never advanced: no timer can fire
    listener, sender = await _open(db, clock=clock), await _open(db, clock=clock)
    try:
        await listener.ensure_mailbox("inbox")
        claims = 0
        parked = asyncio.Event()
        claim = listener._claim

        async def counting(*args: Any) -> Any:
            nonlocal claims
            claims += 1
            found = await claim(*args)
            if found is None:
                parked.set()
            return found

        listener._claim = counting
        stream = listener.claim_stream("inbox", claimer="w", max_messages=1)
        first = asyncio.ensure_future(anext(stream))
        await asyncio.wait_for(parked.wait(), WAIT)
        assert listener.listener.connected
        sent = await sender.send("inbox", b"wake up", sender="other-process")
        got = await asyncio.wait_for(first, WAIT)
        assert got.message.message_id == sent.message_id
        assert claims == 2  # the empty claim, then one claim after the notification
        assert listener.listener.notifications >= 1
        await stream.aclose()
    finally:
        await listener.close()
        await sender.close()


async def test_a_lost_listening_connection_reconnects_and_the_stream_still_wakes(
    db: tuple[str, str],
) -> None:
    listener, sender = await _open(db), await _open(db)
    try:
        await listener.ensure_mailbox("inbox", ordering_mode="unordered")
        stream = listener.claim_stream("inbox", claimer="w")
        one = asyncio.ensure_future(anext(stream))
        await sender.send("inbox", b"1", sender="s")
        await asyncio.wait_for(one, WAIT)
        pid = listener.listener._conn.get_server_pid()
        assert await sender._db.fetchval("t", "SELECT pg_terminate_backend($1)", pid)
        two = asyncio.ensure_future(anext(stream))
        sent = await sender.send("inbox", b"2", sender="s")
        got = await asyncio.wait_for(two, WAIT)
        assert got.message.message_id == sent.message_id
        three = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0)
        sent = await sender.send("inbox", b"3", sender="s")
        assert (await asyncio.wait_for(three, WAIT)).message.message_id == sent.message_id
        assert listener.listener.connected
        await stream.aclose()
    finally:
        await listener.close()
        await sender.close()


async def test_sweep_recovers_leases_and_expires_messages_of_every_store(
    db: tuple[str, str],
) -> None:
    clock = ManualClock(wall_start=1_700_000_000.0)
    first, second = await _open(db, clock=clock), await _open(db, clock=clock)
    try:
        await second.send("b-box", b"leased", sender="s")
        await second.send("b-box", b"ttl", sender="t", ttl_ms=10)
        assert await second.claim("b-box", claimer="w", lease_duration_ms=50) is not None
        clock.advance(1)
        result = await first.sweep()
        assert (result.leases_recovered, result.expired) == (1, 1)
        assert first.counters.value("postbox_leases_swept_total") == 1
        assert first.counters.value("postbox_messages_expired_total", mailbox_id="b-box") == 1
        assert [d.poison_reason for d in await second.dead_letters("b-box")] == ["expired"]
    finally:
        await first.close()
        await second.close()


async def test_many_stores_opening_a_new_schema_at_once_all_succeed(
    db: tuple[str, str],
) -> None:
    stores = await asyncio.gather(*(_open(db, max_size=1) for _ in range(4)))
    try:
        await stores[0].send("q", b"x", sender="s")
        assert (await stores[3].stats("q")).pending_count == 1
    finally:
        for store in stores:
            await store.close()


async def test_an_unreachable_server_is_a_storage_error() -> None:
    with pytest.raises(StorageError):
        await open_store("postgresql://postgres@127.0.0.1:1/test", sweep_interval=None)


@pytest.mark.parametrize(
    "options", [{"schema": "bad-name"}, {"schema": ""}, {"min_size": 3, "max_size": 2},
                {"max_size": 0}, {"min_size": True}, {"durability": "normal"}],
)
async def test_bad_backend_options_are_refused_before_connecting(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequestError):
        await open_store("postgresql://postgres@127.0.0.1:1/test", sweep_interval=None,
                         **options)


async def test_the_sweeper_task_sweeps_on_its_own(db: tuple[str, str]) -> None:
    clock = ManualClock(wall_start=1_700_000_000.0)
    store = await _open(db, clock=clock, sweep_interval=1.0)
    try:
        await store.send("q", b"x", sender="s", ttl_ms=0)
        await asyncio.wait_for(clock.wait_for_sleepers(), WAIT)
        clock.advance(1.0)  # the tick runs, then the sweeper parks for the next one
        await asyncio.wait_for(clock.wait_for_sleepers(), WAIT)
        assert store.sweeper.ticks == 1
        assert [d.poison_reason for d in await store.dead_letters("q")] == ["expired"]
    finally:
        await store.close()


async def test_a_one_connection_pool_serves_many_callers_and_replaces_a_broken_connection(
    db: tuple[str, str],
) -> None:
    store = await _open(db, max_size=1)
    other = await _open(db)
    try:
        sent = await asyncio.gather(*(store.send(f"q{i % 3}", b"x", sender=f"s{i}")
                                      for i in range(20)))
        claims = await asyncio.gather(*(store.claim(f"q{i}", claimer="w") for i in range(3)))
        assert all(c is not None for c in claims)
        assert len({m.message_id for m in sent}) == 20
        [conn] = store._db.pool._idle
        assert await other._db.fetchval("t", "SELECT pg_terminate_backend($1)",
                                        conn.get_server_pid())
        with contextlib.suppress(StorageError):  # the dead connection may fail one call
            await store.stats("q0")
        assert (await store.stats("q0")).pending_count == 6  # a new connection took over
    finally:
        await store.close()
        await other.close()


async def test_calls_waiting_for_a_connection_fail_cleanly_when_the_store_closes(
    db: tuple[str, str],
) -> None:
    store = await _open(db, max_size=1)
    await store.ensure_mailbox("q")
    held = await store._db.pool.acquire()
    waiting = asyncio.ensure_future(store.stats("q"))
    await asyncio.sleep(0)
    await store.close()
    store._db.pool.release(held)
    with pytest.raises(StorageError):
        await asyncio.wait_for(waiting, WAIT)


async def test_sends_queued_when_the_store_closes_are_written_first(
    db: tuple[str, str],
) -> None:
    store = await _open(db)
    await store.ensure_mailbox("q")
    sends = [asyncio.ensure_future(store.send("q", b"x", sender=f"s{i}")) for i in range(50)]
    await asyncio.sleep(0)  # the first write is in flight, the rest queued behind it
    await store.close()
    assert all(s.done() and s.exception() is None for s in sends)
    again = await _open(db)
    try:
        assert (await again.stats("q")).pending_count == 50
    finally:
        await again.close()
