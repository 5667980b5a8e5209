"""Crash and multi-process tests on a SQLite file: real processes, SIGKILL, no mocks.

The writer test kills a child at a random point ``DOVECOTE_CRASH_RUNS`` times (default
20; the documented longer run is ``DOVECOTE_CRASH_RUNS=200``). Every send and commit the
child printed was acknowledged by the store before the print, so after the kill each
acknowledged send must be in the file exactly once and each acknowledged commit must
still be committed (and never handed out again).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest

from dovecote import ManualClock
from dovecote.durable import open_store

CHILD = Path(__file__).with_name("store_child.py")
RUNS = int(os.environ.get("DOVECOTE_CRASH_RUNS", "20"))
WAIT = 20.0


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _line(stream: IO[str] | None) -> str:
    assert stream is not None
    line = stream.readline()
    assert line, "the child exited early"
    return line.strip()


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=WAIT)


def _check_file(path: Path, sent: dict[int, str], committed: set[str]) -> None:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT message_id, payload, status FROM messages").fetchall()
    finally:
        conn.close()
    by_seq: dict[int, list[tuple[str, str]]] = {}
    for message_id, payload, status in rows:
        by_seq.setdefault(int(payload), []).append((message_id, status))
    for seq, message_id in sent.items():
        assert by_seq.get(seq) == [(message_id, by_seq[seq][0][1])], f"send {seq} not once"
    statuses = {message_id: status for message_id, _payload, status in rows}
    for message_id in committed:
        assert statuses[message_id] == "committed"
    assert all(len(found) == 1 for found in by_seq.values())  # nothing written twice


@pytest.mark.parametrize("run", range(RUNS))
async def test_every_acknowledged_send_and_commit_survives_sigkill(
    tmp_path: Path, run: int
) -> None:
    path = tmp_path / "crash.db"
    rng = random.Random(run)
    proc = _spawn("writer", str(path))
    sent: dict[int, str] = {}
    committed: set[str] = set()
    try:
        assert _line(proc.stdout) == "ready"
        stop_after = rng.randint(1, 400)
        for _ in range(stop_after):
            kind, *rest = _line(proc.stdout).split()
            if kind == "sent":
                sent[int(rest[0])] = rest[1]
            else:
                committed.add(rest[0])
    finally:
        _kill(proc)
    _check_file(path, sent, committed)
    # the store reopens cleanly and hands out nothing that was committed
    async with open_store(f"sqlite:///{path}", sweep_interval=None) as store:
        for message_id in committed:
            assert await store.is_committed("q", message_id)
        while (claim := await store.claim("q", claimer="after")) is not None:
            assert claim.message.message_id not in committed
            await store.commit(claim.message.message_id, claimer="after", checkpoint_token="t")


async def test_a_claimer_killed_mid_lease_is_redelivered_after_the_lease(tmp_path: Path) -> None:
    path = tmp_path / "lease.db"
    async with open_store(f"sqlite:///{path}", sweep_interval=None) as store:
        sent = await store.send("q", b"work", sender="s")
    proc = _spawn("holder", str(path))
    try:
        kind, message_id, lease_expires = _line(proc.stdout).split()
    finally:
        _kill(proc)
    assert (kind, message_id) == ("claimed", sent.message_id)
    clock = ManualClock(wall_start=time.time())
    async with open_store(f"sqlite:///{path}", sweep_interval=None, clock=clock) as store:
        if int(clock.wall() * 1000) < int(lease_expires):
            assert await store.claim("q", claimer="next") is None  # the lease still holds
        clock.advance(1.5)
        claim = await store.claim("q", claimer="next")
        assert claim is not None
        assert (claim.message.message_id, claim.message.attempt_count) == (sent.message_id, 2)
        await store.commit(sent.message_id, claimer="next", checkpoint_token="t")
        with pytest.raises(Exception, match="already committed"):
            await store.commit(sent.message_id, claimer="holder", checkpoint_token="t")


async def test_sixteen_claimers_in_two_processes_commit_each_message_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.db"
    count = 300
    async with open_store(f"sqlite:///{path}", sweep_interval=None) as store:
        await store.ensure_mailbox("q", capacity=10**6, ordering_mode="unordered")
        ids = {m.message_id for m in await store.fanout(["q"] * count, b"job", sender="s")}
    procs = [_spawn("claimers", str(path), "8") for _ in range(2)]
    outputs: list[str] = []
    head: list[str] = []  # lines read before the drain
    try:
        for proc in procs:
            assert _line(proc.stdout) == "ready"
        for word in ("go", "drain"):
            for proc in procs:
                assert proc.stdin is not None
                proc.stdin.write(f"{word}\n")
                proc.stdin.flush()
            if word == "go":
                for proc in procs:  # 16 claimers hold a message each, in two processes
                    while (line := _line(proc.stdout)) != "holding":
                        head.append(line)
        for proc in procs:
            out, err = await asyncio.wait_for(asyncio.to_thread(proc.communicate), WAIT * 3)
            assert proc.returncode == 0, err
            outputs.append(out)
    finally:
        for proc in procs:
            if proc.poll() is None:
                _kill(proc)
    holder: dict[str, str] = {}
    commits: dict[str, int] = {}
    per_process = []
    waits: list[int] = []
    outputs[0] = "\n".join([*head, outputs[0]])
    for out in outputs:
        lines = [line.split() for line in out.splitlines() if line]
        assert lines[-1][0] == "done"
        waits.append(int(lines[-1][1]))
        per_process.append(sum(1 for line in lines if line[0] == "committed"))
        for kind, claimer, message_id in (line for line in lines if len(line) == 3):
            if kind == "claimed":
                # a message is claimed exactly once: never held by two claimers
                assert message_id not in holder, f"{message_id} claimed twice"
                holder[message_id] = claimer
            else:
                assert holder[message_id] == claimer
                commits[message_id] = commits.get(message_id, 0) + 1
    assert set(commits) == ids
    assert set(commits.values()) == {1}
    assert len(set(holder.values())) == 16  # every claimer of both processes took part
    print("batches that waited for the other process's lock:", waits)
    async with open_store(f"sqlite:///{path}", sweep_interval=None) as store:
        stats = await store.stats("q")
        assert (stats.committed_count, stats.pending_count, stats.claimed_count) == (count, 0, 0)
