"""Crash tests on PostgreSQL: real processes killed with SIGKILL, a real server.

A writer child is killed at a random point ``DOVECOTE_PG_CRASH_RUNS`` times (default 5:
each run starts a process and a schema; ``DOVECOTE_PG_CRASH_RUNS=100`` is the longer
run). Every send and commit the child printed was acknowledged before the print, so each
acknowledged send must be in the table exactly once and each acknowledged commit must
still be committed. A claimer killed mid-lease is redelivered once the lease is over.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import IO

import asyncpg
import pytest

from dovecote import ManualClock
from dovecote.durable import AlreadyCommittedError, open_store

from .pg_fixtures import pg_db  # noqa: F401  (the "db" fixture)

CHILD = Path(__file__).with_name("pg_child.py")
RUNS = int(os.environ.get("DOVECOTE_PG_CRASH_RUNS", "5"))
WAIT = 20.0


async def _spawn(role: str, db: tuple[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, str(CHILD), role, *db, stdout=asyncio.subprocess.PIPE,
    )


async def _line(stream: asyncio.StreamReader | IO[bytes] | None) -> str:
    assert isinstance(stream, asyncio.StreamReader)
    line = await asyncio.wait_for(stream.readline(), WAIT)
    assert line, "the child exited early"
    return line.decode().strip()


async def _kill(proc: asyncio.subprocess.Process) -> None:
    proc.send_signal(signal.SIGKILL)
    await asyncio.wait_for(proc.wait(), WAIT)


@pytest.mark.parametrize("run", range(RUNS))
async def test_every_acknowledged_send_and_commit_survives_sigkill(
    db: tuple[str, str], run: int,
) -> None:
    rng = random.Random(run)
    proc = await _spawn("writer", db)
    sent: dict[int, str] = {}
    committed: set[str] = set()
    try:
        assert await _line(proc.stdout) == "ready"
        for _ in range(rng.randint(1, 300)):
            kind, *rest = (await _line(proc.stdout)).split()
            if kind == "sent":
                sent[int(rest[0])] = rest[1]
            else:
                committed.add(rest[0])
    finally:
        await _kill(proc)
    conn = await asyncpg.connect(db[0])
    try:
        rows = await conn.fetch(f'SELECT message_id, payload, status FROM "{db[1]}".messages')
    finally:
        await conn.close()
    by_seq: dict[int, list[str]] = {}
    statuses = {}
    for message_id, payload, status in rows:
        by_seq.setdefault(int(payload), []).append(message_id)
        statuses[message_id] = status
    for seq, message_id in sent.items():
        assert by_seq.get(seq) == [message_id], f"acknowledged send {seq} not there once"
    assert all(len(ids) == 1 for ids in by_seq.values())  # nothing written twice
    assert all(statuses[m] == "committed" for m in committed)
    async with open_store(db[0], sweep_interval=None, schema=db[1]) as store:
        while (claim := await store.claim("q", claimer="after")) is not None:
            assert claim.message.message_id not in committed
            await store.commit(claim.message.message_id, claimer="after", checkpoint_token="t")


async def test_a_claimer_killed_mid_lease_is_redelivered_after_the_lease(
    db: tuple[str, str],
) -> None:
    async with open_store(db[0], sweep_interval=None, schema=db[1]) as store:
        sent = await store.send("q", b"work", sender="s")
    proc = await _spawn("holder", db)
    try:
        kind, message_id, lease_expires = (await _line(proc.stdout)).split()
    finally:
        await _kill(proc)
    assert (kind, message_id) == ("claimed", sent.message_id)
    clock = ManualClock(wall_start=time.time())
    async with open_store(db[0], sweep_interval=None, schema=db[1], clock=clock) as store:
        if int(clock.wall() * 1000) < int(lease_expires):
            assert await store.claim("q", claimer="next") is None  # the lease still holds
        clock.advance(1.5)
        claim = await store.claim("q", claimer="next")
        assert claim is not None
        assert (claim.message.message_id, claim.message.attempt_count) == (sent.message_id, 2)
        await store.commit(sent.message_id, claimer="next", checkpoint_token="t")
        with pytest.raises(AlreadyCommittedError):
            await store.commit(sent.message_id, claimer="holder", checkpoint_token="t")
