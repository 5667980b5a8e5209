"""Concurrent duplicates run the handler once: two connections, two processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from inbox_kit import Db

from dovecote.durable import Inbox

WORKER = Path(__file__).with_name("inbox_worker.py")
SOURCE = "cross-process"  # the worker's
TIMEOUT = 30.0


# -- PostgreSQL: the second connection waits on the first one's row ---------------------


async def _blocked_on_a_lock(observer: Db, pid: int) -> None:
    """Return once backend *pid* is waiting for a lock (observed, not guessed)."""
    while True:
        rows = await observer.rows(
            "SELECT wait_event_type FROM pg_stat_activity WHERE pid = ?", pid
        )
        if rows and rows[0][0] == "Lock":
            return
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("first_commits", [True, False], ids=["commit", "rollback"])
async def test_a_second_connection_waits_for_the_first_and_then_sees_its_outcome(
    pg_pool: Db, first_commits: bool
):
    first_conn = await asyncpg.connect(pg_pool.url)
    second_conn = await asyncpg.connect(pg_pool.url)
    try:
        first = Inbox(first_conn, table=pg_pool.table)
        second = Inbox(second_conn, table=pg_pool.table)
        await first.declare_schema()
        entered, release = asyncio.Event(), asyncio.Event()
        calls: list[str] = []

        async def slow(tx: Any) -> str:
            calls.append("first")
            entered.set()
            await release.wait()
            if not first_commits:
                raise RuntimeError("first delivery fails")
            return "first"

        def quick(tx: Any) -> str:
            calls.append("second")
            return "second"

        one = asyncio.create_task(first.handle("m-1", "s", slow))
        await asyncio.wait_for(entered.wait(), TIMEOUT)
        two = asyncio.create_task(second.handle("m-1", "s", quick))
        await asyncio.wait_for(_blocked_on_a_lock(pg_pool, second_conn.get_server_pid()), TIMEOUT)
        assert not two.done()
        release.set()
        if first_commits:
            assert (await asyncio.wait_for(one, TIMEOUT)).result == "first"
            assert (await asyncio.wait_for(two, TIMEOUT)).fresh is False
            assert calls == ["first"]
        else:
            with pytest.raises(RuntimeError):
                await asyncio.wait_for(one, TIMEOUT)
            assert (await asyncio.wait_for(two, TIMEOUT)).result == "second"
            assert calls == ["first", "second"]
    finally:
        await first_conn.close()
        await second_conn.close()


# -- two processes ----------------------------------------------------------------------


def _dsn(db: Db) -> str:
    return str(db.path) if db.kind == "sqlite" else str(db.url)


@contextlib.asynccontextmanager
async def _worker(db: Db, mode: str, fx: str, *ids: str) -> AsyncIterator[Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        mode,
        db.kind,
        _dsn(db),
        db.table,
        fx,
        *ids,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


async def _line(proc: Any) -> str:
    line = await asyncio.wait_for(proc.stdout.readline(), TIMEOUT)
    if not line:
        err = await proc.stderr.read()
        pytest.fail(f"worker exited early:\n{err.decode()}")
    return str(line.decode().strip())


@pytest.fixture(params=["sqlite", "pg_pool"])
def shared(request: pytest.FixtureRequest) -> Db:
    """A database two processes reach: a SQLite file or a PostgreSQL server."""
    db: Db = request.getfixturevalue("sqlite_db" if request.param == "sqlite" else "pg_pool")
    return db


@pytest.mark.parametrize("first_commits", [True, False], ids=["commit", "rollback"])
async def test_a_second_process_waits_for_the_first_and_then_sees_its_outcome(
    shared: Db, first_commits: bool
):
    await shared.inbox().declare_schema()
    fx = await shared.effects_table()
    async with _worker(shared, "hold", fx, "m-1") as holder:
        assert await _line(holder) == "entered"
        async with _worker(shared, "once", fx, "m-1") as second:
            assert await _line(second) == "trying"
            # while the first process holds its transaction the second cannot decide
            answer = asyncio.ensure_future(second.stdout.readline())
            done, _ = await asyncio.wait({answer}, timeout=0.5)
            assert not done
            holder.stdin.write(b"commit\n" if first_commits else b"fail\n")
            await holder.stdin.drain()
            assert await _line(holder) == ("committed" if first_commits else "rolled back")
            line = await asyncio.wait_for(answer, TIMEOUT)
            assert json.loads(line) == {"fresh": not first_commits}
    rows = await shared.rows(f"SELECT id FROM {fx}")
    assert rows == [("m-1",)]  # exactly one effect either way


async def test_two_processes_racing_over_the_same_messages_run_each_handler_once(shared: Db):
    await shared.inbox().declare_schema()
    fx = await shared.effects_table()
    ids = [f"msg-{i:03d}" for i in range(80)]
    orders = [random.sample(ids, len(ids)) for _ in range(2)]
    async with _worker(shared, "race", fx, *orders[0]) as one, _worker(
        shared, "race", fx, *orders[1]
    ) as two:
        fresh_one = json.loads(await _line(one))
        fresh_two = json.loads(await _line(two))
    assert sorted(fresh_one + fresh_two) == ids  # every message ran, none twice
    counts = await shared.rows(f"SELECT id, count(*) FROM {fx} GROUP BY id ORDER BY id")
    assert counts == [(i, 1) for i in ids]
    stats = await shared.inbox().get_stats(source=SOURCE)
    assert (stats.total, stats.processed) == (80, 80)
