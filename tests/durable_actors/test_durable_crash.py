"""Durable actors killed with SIGKILL at random points lose nothing and commit each message once.

Each scenario queues messages, then starts worker processes one after another, killing
each after a random number of handled messages (often in the middle of the next one),
until a worker finishes the queue. ``DOVECOTE_CRASH_RUNS`` sets how many scenarios run
(default 2; the documented long run is 50).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from dovecote import ManualClock
from dovecote.codec import decode, encode
from dovecote.durable import open_store

WORKER = Path(__file__).with_name("crash_worker.py")
MESSAGES = 30
RUNS = int(os.environ.get("DOVECOTE_CRASH_RUNS", "2"))


async def _run_worker(database: Path, kill_after: int | None) -> tuple[list[str], bool]:
    """Start a worker; kill it after ``kill_after`` handled lines. (lines, finished by itself)"""
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(WORKER), str(database), stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    handled: list[str] = []
    ended = False
    while kill_after is None or len(handled) < kill_after:
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        if not line:
            ended = True
            break
        if line.startswith(b"handled "):
            handled.append(line.decode().split(" ", 1)[1].strip())
    if not ended:
        process.send_signal(signal.SIGKILL)
        # what it handled (and printed) before the kill landed is in the pipe still
        rest = await asyncio.wait_for(process.stdout.read(), 30)
        handled.extend(line.split(" ", 1)[1].strip() for line in rest.decode().splitlines()
                       if line.startswith("handled "))
    code = await asyncio.wait_for(process.wait(), 30)
    return handled, code == 0


@pytest.mark.parametrize("seed", range(RUNS))
async def test_sigkill_at_random_points_loses_nothing(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    database = tmp_path / "crash.db"
    async with open_store(f"sqlite:///{database}", sweep_interval=None) as store:
        # each kill spends an attempt of everything the worker had claimed ahead (up to
        # 16 messages), and a loaded machine can let a 200 ms lease run out mid-run:
        # attempts to spare, so that this test is about loss and double commits only
        await store.ensure_mailbox("crash", ordering_mode="unordered", max_attempts=50)
        for i in range(MESSAGES):
            await store.send("crash", encode(f"m{i}"), sender="test")
        await store.send("crash", encode("end"), sender="test")
    seen: list[str] = []
    kills = 0
    for _ in range(20):
        kill_after = rng.randint(1, 8) if kills < 4 else None
        handled, finished = await _run_worker(database, kill_after)
        seen.extend(handled)
        if finished:
            break
        kills += 1
    else:  # pragma: no cover - the assertion below explains
        finished = False
    assert finished, f"no worker finished the queue; handled {seen}"
    assert kills >= 1
    expected = {f"m{i}" for i in range(MESSAGES)} | {"end"}
    async with open_store(f"sqlite:///{database}", sweep_interval=None) as store:
        dead = [(r.poison_reason, r.attempt_count) for r in await store.dead_letters("crash")]
    assert dead == []
    assert set(seen) == expected  # nothing lost
    async with open_store(f"sqlite:///{database}", sweep_interval=None) as store:
        stats = await store.stats("crash")
        assert (stats.committed_count, stats.pending_count, stats.claimed_count) == (
            MESSAGES + 1,
            0,
            0,
        )
        assert stats.dead_lettered_count == 0


AHEAD_WORKER = Path(__file__).with_name("claim_ahead_worker.py")


async def test_a_killed_worker_spends_the_attempts_of_what_it_claimed_ahead(
    tmp_path: Path,
) -> None:
    database = tmp_path / "ahead.db"
    async with open_store(f"sqlite:///{database}", sweep_interval=None) as store:
        await store.ensure_mailbox("ahead", ordering_mode="unordered")
        names = [*(f"m{i}" for i in range(20)), "hold", *(f"n{i}" for i in range(20))]
        for name in names:
            await store.send("ahead", encode(name), sender="test")
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(AHEAD_WORKER), str(database), stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    while (line := await asyncio.wait_for(process.stdout.readline(), 30)) != b"holding\n":
        assert line, "the worker ended before it reached 'hold'"
    process.send_signal(signal.SIGKILL)  # "hold" and what was claimed behind it are held
    await asyncio.wait_for(process.wait(), 30)
    # reopened on a clock past every lease: the sweep brings them all back
    later = ManualClock(wall_start=time.time() + 10)
    async with open_store(f"sqlite:///{database}", sweep_interval=None, clock=later) as store:
        held = (await store.stats("ahead")).claimed_count
        assert held > 2  # "hold", maybe one handled but not yet committed, and more behind
        assert (await store.sweep()).leases_recovered == held
        back = [(decode(m.payload), m.attempt_count) for m in await store.peek("ahead", max=100)]
        # what the dead worker held comes back first, each delivery counted; the rest untouched
        assert [n for n, attempts in back[:held]] == names[names.index(back[0][0]):][:held]
        assert "hold" in [n for n, _ in back[:held]]
        assert "n0" in [n for n, _ in back[:held]]
        assert [attempts for _, attempts in back] == [1] * held + [0] * (len(back) - held)
