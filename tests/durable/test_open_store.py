"""open_store URLs, the owned sweeper, and SQLite specifics (file, durability, reopen)."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dovecote import ManualClock
from dovecote.durable import (
    InvalidRequestError,
    MailboxStore,
    SqliteStore,
    StorageError,
    open_store,
)
from dovecote.durable._open import parse_store_url

WAIT = 5.0


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite::memory:", ("sqlite", ":memory:")),
        ("sqlite:///var/lib/x.db", ("sqlite", "/var/lib/x.db")),
        ("sqlite://./rel.db", ("sqlite", "./rel.db")),
        ("postgresql://u@h:5432/db", ("postgresql", "postgresql://u@h:5432/db")),
        ("postgres://u@h/db", ("postgresql", "postgres://u@h/db")),
    ],
)
def test_store_urls(url: str, expected: tuple[str, str]) -> None:
    assert parse_store_url(url) == expected


@pytest.mark.parametrize("url", ["mysql://h/db", "sqlite://", "file:///x.db", "", 42])
def test_other_urls_are_refused_naming_the_schemes(url: Any) -> None:
    with pytest.raises(InvalidRequestError, match=r"sqlite|string"):
        open_store(url)


async def test_open_store_is_awaitable_and_a_context_manager(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'a.db'}", sweep_interval=None)
    assert isinstance(store, SqliteStore)
    assert isinstance(store, MailboxStore)
    await store.close()
    await store.close()  # idempotent
    async with open_store("sqlite::memory:", sweep_interval=None) as memory:
        await memory.send("q", b"x", sender="s")
    with pytest.raises(StorageError):
        await memory.send("q", b"x", sender="s")


async def test_a_relative_path_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with open_store("sqlite://./rel.db", sweep_interval=None) as store:
        await store.send("q", b"x", sender="s")
    assert (tmp_path / "rel.db").exists()


async def test_a_file_store_keeps_its_messages_across_a_reopen(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'keep.db'}"
    async with open_store(url, sweep_interval=None) as store:
        sent = await store.send("q", b"kept", sender="s", headers={"a": "b"})
    async with open_store(url, sweep_interval=None) as store:
        [peeked] = await store.peek("q")
        assert peeked == sent


@pytest.mark.parametrize(("durability", "level"), [("full", 2), ("normal", 1)])
async def test_durability_sets_wal_and_synchronous(
    tmp_path: Path, durability: str, level: int
) -> None:
    path = tmp_path / "d.db"
    async with open_store(f"sqlite:///{path}", sweep_interval=None,
                          durability=durability) as store:
        assert store.durability == durability
        read = await store._engine.run(
            lambda txn: txn.conn.execute("PRAGMA synchronous").fetchone()[0], write=False
        )
        assert read == level
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_bad_backend_options_are_refused() -> None:
    with pytest.raises(InvalidRequestError):
        await open_store("sqlite::memory:", durability="off")
    with pytest.raises(InvalidRequestError):
        await open_store("sqlite::memory:", sweep_interval=0)
    with pytest.raises(TypeError):
        await open_store("sqlite::memory:", no_such_option=1)


async def test_an_unopenable_file_is_a_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError):
        await open_store(f"sqlite:///{tmp_path / 'missing-dir' / 'x.db'}")


async def test_the_owned_sweeper_recovers_leases_on_its_own() -> None:
    clock = ManualClock(wall_start=1_700_000_000.0)
    async with open_store("sqlite::memory:", sweep_interval=5.0, clock=clock) as store:
        await store.send("q", b"x", sender="s")
        await store.claim("q", claimer="w", lease_duration_ms=1_000)
        await asyncio.wait_for(clock.wait_for_sleepers(1), WAIT)
        clock.advance(5.0)
        await asyncio.wait_for(clock.wait_for_sleepers(1), WAIT)  # the next tick is waiting
        assert store.sweeper.ticks == 1
        assert (await store.stats("q")).pending_count == 1
        assert store.counters.value("postbox_leases_swept_total") == 1
    assert not store.sweeper.running


async def test_a_failing_sweep_is_logged_and_the_sweeper_goes_on(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = ManualClock()
    async with open_store("sqlite::memory:", sweep_interval=1.0, clock=clock) as store:
        calls = 0
        real = store.sweeper._sweep

        async def flaky() -> Any:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise RuntimeError("disk on fire")
            return await real()

        store.sweeper._sweep = flaky
        with caplog.at_level(logging.ERROR, logger="dovecote"):
            for _ in range(2):
                await asyncio.wait_for(clock.wait_for_sleepers(1), WAIT)
                clock.advance(1.0)
            await asyncio.wait_for(clock.wait_for_sleepers(1), WAIT)
        assert (store.sweeper.failures, store.sweeper.ticks) == (1, 1)
        assert isinstance(store.sweeper.last_error, RuntimeError)
        # structlog renders to stdout today and through stdlib logging once configured
        captured = capsys.readouterr()
        assert "store sweep failed" in caplog.text + captured.out + captured.err


async def test_sweep_interval_none_starts_no_task() -> None:
    async with open_store("sqlite::memory:", sweep_interval=None) as store:
        assert store.sweeper is None


async def test_an_idle_stream_makes_no_queries() -> None:
    async with open_store("sqlite::memory:", sweep_interval=None) as store:
        await store.ensure_mailbox("q")
        stream = store.claim_stream("q", claimer="w")
        pending = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0.05)
        before = store._engine.operations
        await asyncio.sleep(0.2)
        assert store._engine.operations == before  # parked on an event, not polling
        await store.send("q", b"x", sender="s")
        assert (await asyncio.wait_for(pending, WAIT)).message.payload == b"x"
        await stream.aclose()


@pytest.mark.skipif(
    __import__("importlib").util.find_spec("dovecote.durable._postgres") is not None,
    reason="this build has the PostgreSQL backend",
)
async def test_a_postgresql_url_without_the_backend_is_a_clear_error() -> None:
    with pytest.raises(InvalidRequestError, match="PostgreSQL"):
        await open_store("postgresql://postgres@127.0.0.1:5432/test")


async def test_a_sqlite_url_may_carry_durability_and_busy_timeout(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}?durability=normal&busy_timeout=2"
    async with open_store(url, sweep_interval=None) as store:
        assert store.durability == "normal"
    assert (tmp_path / "q.db").exists()
    with pytest.raises(InvalidRequestError, match="unknown SQLite URL option"):
        open_store(f"sqlite:///{tmp_path / 'q.db'}?mode=ro")
    with pytest.raises(InvalidRequestError, match="argument"):
        await open_store(url, durability="full")
