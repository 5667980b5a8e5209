"""Inbox.handle and the low-level API on every backend: exactly once, rollback, re-entry."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from inbox_kit import Db

from dovecote.durable import (
    Inbox,
    InboxOutcome,
    InboxStats,
    InvalidRequestError,
    MessageNotFoundError,
    StorageError,
)

SRC = "kafka:orders.created.v1"


class Boom(Exception):
    pass


async def test_a_first_delivery_runs_the_handler_and_a_replay_does_not(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    calls: list[Any] = []

    async def handler(tx: Any) -> dict[str, str]:
        calls.append(tx)
        return {"order_id": "o-42"}

    first = await inbox.handle("evt-9f3c4d", SRC, handler)
    replay = await inbox.handle("evt-9f3c4d", SRC, handler)

    assert first == InboxOutcome(True, {"order_id": "o-42"})
    assert replay == InboxOutcome(False, None)
    assert len(calls) == 1
    assert await inbox.get_stats(source=SRC) == InboxStats(total=1, processed=1, unprocessed=0)


async def test_a_sync_handler_runs_inline_and_its_value_is_the_result(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    outcome = await inbox.handle("m-1", SRC, lambda tx: 7)
    assert outcome.fresh is True
    assert outcome.result == 7


async def test_the_handler_gets_the_native_connection_inside_the_transaction(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    fx = await backend.effects_table()

    async def handler(tx: Any) -> None:
        if backend.kind == "sqlite":
            assert tx is backend.db
            assert tx.in_transaction
        else:
            assert tx.is_in_transaction()
        await backend.execute(tx, f"INSERT INTO {fx} (id, amount) VALUES (?, ?)", "o-1", 5)

    await inbox.handle("m-1", SRC, handler)
    assert await backend.rows(f"SELECT id, amount FROM {fx}") == [("o-1", 5)]


async def test_a_raising_handler_rolls_back_its_writes_and_the_receive_together(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    fx = await backend.effects_table()
    error = Boom("payment declined")

    async def failing(tx: Any) -> None:
        await backend.execute(tx, f"INSERT INTO {fx} (id, amount) VALUES (?, ?)", "o-1", 5)
        raise error

    with pytest.raises(Boom) as caught:
        await inbox.handle("m-1", SRC, failing)

    assert caught.value is error  # unchanged, not wrapped
    assert await backend.rows(f"SELECT id FROM {fx}") == []
    assert await inbox.is_fresh("m-1", SRC)
    assert await inbox.get_stats() == InboxStats(0, 0, 0)

    async def working(tx: Any) -> str:
        await backend.execute(tx, f"INSERT INTO {fx} (id, amount) VALUES (?, ?)", "o-1", 5)
        return "ok"

    assert await inbox.handle("m-1", SRC, working) == InboxOutcome(True, "ok")
    assert await backend.rows(f"SELECT id FROM {fx}") == [("o-1",)]


async def test_a_sync_handler_that_raises_rolls_back_too(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()

    def failing(tx: Any) -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError):
        await inbox.handle("m-1", SRC, failing)
    assert await inbox.is_fresh("m-1", SRC)


async def test_cancelling_handle_mid_handler_rolls_back_and_a_redelivery_runs_again(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    fx = await backend.effects_table()
    entered = asyncio.Event()

    async def stuck(tx: Any) -> None:
        await backend.execute(tx, f"INSERT INTO {fx} (id, amount) VALUES (?, ?)", "o-1", 1)
        entered.set()
        await asyncio.Future()  # never resolves

    task = asyncio.create_task(inbox.handle("m-1", SRC, stuck))
    await asyncio.wait_for(entered.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await backend.rows(f"SELECT id FROM {fx}") == []
    assert (await inbox.handle("m-1", SRC, lambda tx: "again")).result == "again"


async def test_the_same_id_from_two_sources_is_two_messages(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    assert (await inbox.handle("m-1", "source-a", lambda tx: 1)).fresh
    assert (await inbox.handle("m-1", "source-b", lambda tx: 2)).fresh
    assert (await inbox.handle("m-2", "source-a", lambda tx: 3)).fresh
    assert not (await inbox.handle("m-1", "source-b", lambda tx: 4)).fresh
    assert await inbox.get_stats(source="source-a") == InboxStats(2, 2, 0)
    assert await inbox.get_stats() == InboxStats(3, 3, 0)


async def test_declare_schema_is_idempotent_and_keeps_the_rows(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    await inbox.handle("m-1", SRC, lambda tx: None)
    await inbox.declare_schema()
    await backend.inbox().declare_schema()
    assert not await inbox.is_fresh("m-1", SRC)


async def test_the_schema_has_the_seed_columns_and_primary_key(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    if backend.kind == "sqlite":
        info = await backend.rows(f'PRAGMA table_info("{backend.table}")')
        columns = {row[1]: row[5] for row in info}  # name -> position in the primary key
        assert columns == {
            "message_id": 2,
            "source": 1,
            "received_at": 0,
            "processed_at": 0,
            "metadata_json": 0,
        }
    else:
        rows = await backend.rows(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
            "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = ?::regclass AND i.indisprimary "
            "ORDER BY array_position(i.indkey, a.attnum)",
            backend.table,
        )
        assert rows == [("source",), ("message_id",)]
        types = dict(
            await backend.rows(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = ?",
                backend.table,
            )
        )
        assert types == {
            "message_id": "text",
            "source": "text",
            "received_at": "timestamp with time zone",
            "processed_at": "timestamp with time zone",
            "metadata_json": "jsonb",
        }


async def test_metadata_is_stored_as_json(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    meta = {"partition": 3, "offset": 1041, "headers": ["a", "é"], "note": "back\\u0000slash"}
    await inbox.handle("m-1", SRC, lambda tx: None, metadata=meta)
    await inbox.handle("m-2", SRC, lambda tx: None)
    stored = await backend.rows(
        f'SELECT message_id, metadata_json FROM "{backend.table}" ORDER BY message_id'
    )
    decoded = [(mid, None if raw is None else _json(raw)) for mid, raw in stored]
    assert decoded == [("m-1", meta), ("m-2", None)]


def _json(raw: Any) -> Any:
    return json.loads(raw) if isinstance(raw, str) else raw


async def test_caller_held_transaction_record_then_mark(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    async with backend.held() as tx:
        assert await inbox.record_receive(tx, "m-1", SRC, metadata={"k": 1}) is True
        assert await inbox.record_receive(tx, "m-1", SRC) is False
        await inbox.mark_processed(tx, "m-1", SRC)
    assert await inbox.get_stats() == InboxStats(1, 1, 0)
    async with backend.held() as tx:
        assert await inbox.record_receive(tx, "m-1", SRC) is False


async def test_a_caller_rollback_forgets_the_receive(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()

    async def receive_then_fail() -> None:
        async with backend.held() as tx:
            assert await inbox.record_receive(tx, "m-1", SRC)
            raise Boom

    with pytest.raises(Boom):
        await receive_then_fail()
    assert await inbox.is_fresh("m-1", SRC)


async def test_other_statements_on_the_transaction_do_not_confuse_fresh_vs_duplicate(
    backend: Db,
):
    """The one-statement decision: no changes()/rowcount that a neighbour could move."""
    inbox = backend.inbox()
    await inbox.declare_schema()
    fx = await backend.effects_table()
    async with backend.held() as tx:
        assert await inbox.record_receive(tx, "m-1", SRC)
    async with backend.held() as tx:
        for i in range(3):  # statements that change rows right before the duplicate insert
            await backend.execute(tx, f"INSERT INTO {fx} (id, amount) VALUES (?, ?)", f"x{i}", i)
        await backend.execute(tx, f"UPDATE {fx} SET amount = amount + 1")
        assert await inbox.record_receive(tx, "m-1", SRC) is False
        await backend.execute(tx, f"DELETE FROM {fx} WHERE id = ?", "x0")
        assert await inbox.record_receive(tx, "m-2", SRC) is True
        assert await inbox.record_receive(tx, "m-2", SRC) is False
    assert await inbox.get_stats() == InboxStats(2, 0, 2)


async def test_a_received_but_unprocessed_row_is_a_duplicate_for_handle(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    async with backend.held() as tx:
        await inbox.record_receive(tx, "m-1", SRC)
    assert await inbox.get_stats() == InboxStats(1, 0, 1)
    assert (await inbox.handle("m-1", SRC, lambda tx: pytest.fail("ran twice"))).fresh is False


async def test_mark_processed_of_an_unrecorded_pair_is_not_found(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    with pytest.raises(MessageNotFoundError):
        async with backend.held() as tx:
            await inbox.mark_processed(tx, "never", SRC)


async def test_marking_twice_keeps_the_first_processed_time(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    await inbox.handle("m-1", SRC, lambda tx: None)
    query = f'SELECT processed_at FROM "{backend.table}"'
    (first,) = (await backend.rows(query))[0]
    async with backend.held() as tx:
        await inbox.mark_processed(tx, "m-1", SRC)
    assert await backend.rows(query) == [(first,)]


async def test_is_fresh_follows_handle(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    assert await inbox.is_fresh("m-1", SRC)
    await inbox.handle("m-1", SRC, lambda tx: None)
    assert not await inbox.is_fresh("m-1", SRC)
    assert await inbox.is_fresh("m-1", "another-source")


async def test_concurrent_duplicates_in_one_process_run_the_handler_once(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    fx = await backend.effects_table()
    runs = 0

    async def handler(tx: Any) -> None:
        nonlocal runs
        runs += 1
        await asyncio.sleep(0)  # give the other deliveries a chance to interleave
        await backend.execute(tx, f"INSERT INTO {fx} (id, amount) VALUES (?, ?)", "o-1", 1)

    outcomes = await asyncio.gather(*(inbox.handle("m-1", SRC, handler) for _ in range(12)))
    assert sorted(o.fresh for o in outcomes) == [False] * 11 + [True]
    assert runs == 1
    assert await backend.rows(f"SELECT count(*) FROM {fx}") == [(1,)]


async def test_two_inboxes_on_one_connection_share_its_lock(single: Db):
    first, second = single.inbox(), single.inbox()
    await first.declare_schema()
    results = await asyncio.gather(
        *(ib.handle(f"m-{i}", SRC, lambda tx: None) for i in range(10) for ib in (first, second))
    )
    assert sum(o.fresh for o in results) == 10


async def test_a_handler_may_call_the_inbox_again_on_its_own_connection(single: Db):
    inbox = single.inbox()
    await inbox.declare_schema()

    async def handler(tx: Any) -> tuple[bool, bool, InboxStats]:
        nested = await inbox.handle("m-2", SRC, lambda tx: None)  # a savepoint inside
        return await inbox.is_fresh("m-1", SRC), nested.fresh, await inbox.get_stats()

    outcome = await asyncio.wait_for(inbox.handle("m-1", SRC, handler), 10)
    # inside its own transaction the handler sees its receive (not fresh) and the nested one
    assert outcome.result == (False, True, InboxStats(2, 1, 1))
    assert await inbox.get_stats() == InboxStats(2, 2, 0)


async def test_handle_inside_a_callers_open_transaction_is_a_savepoint(single: Db):
    inbox = single.inbox()
    await inbox.declare_schema()
    fx = await single.effects_table()

    async def failing(tx: Any) -> None:
        await single.execute(tx, f"INSERT INTO {fx} (id, amount) VALUES (?, ?)", "inner", 1)
        raise Boom

    async with single.held() as tx:
        await single.execute(tx, f"INSERT INTO {fx} (id, amount) VALUES (?, ?)", "outer", 1)
        with pytest.raises(Boom):
            await inbox.handle("m-1", SRC, failing)
        assert (await inbox.handle("m-2", SRC, lambda tx: "ok")).fresh
    assert await single.rows(f"SELECT id FROM {fx}") == [("outer",)]
    assert await inbox.is_fresh("m-1", SRC)
    assert not await inbox.is_fresh("m-2", SRC)


async def test_using_the_table_before_declare_schema_is_a_storage_error(backend: Db):
    inbox = backend.inbox()
    with pytest.raises(StorageError) as caught:
        await inbox.handle("m-1", SRC, lambda tx: None)
    assert caught.value.__cause__ is not None
    with pytest.raises(StorageError):
        await inbox.is_fresh("m-1", SRC)
    with pytest.raises(StorageError):
        await inbox.get_stats()


def test_an_unsupported_database_object_is_refused():
    import sqlite3

    with pytest.raises(InvalidRequestError, match="asyncpg pool or connection"):
        Inbox(sqlite3.connect(":memory:"), table="inbox")
    with pytest.raises(InvalidRequestError):
        Inbox(object(), table="inbox")


async def test_the_inbox_reports_its_settings(backend: Db):
    inbox = backend.inbox(retention_days=7)
    assert inbox.table == backend.table
    assert inbox.retention_days == 7
    assert inbox.backend == backend.kind
    assert backend.table in repr(inbox)


async def test_sqlite_without_aiosqlites_thread_hook_takes_the_per_statement_path(
    sqlite_db: Db,
):
    """handle sends two statements per trip through aiosqlite's private ``_execute``; when
    a future aiosqlite lacks it, the public one-statement-per-trip path gives the same
    results."""
    inbox = sqlite_db.inbox()
    backend = inbox._backend
    assert backend._run_in_thread is not None  # type: ignore[attr-defined]
    backend._run_in_thread = None  # type: ignore[attr-defined]
    await inbox.declare_schema()
    fx = await sqlite_db.effects_table()

    async def pay(tx: Any) -> str:
        await sqlite_db.execute(tx, f"INSERT INTO {fx} (id, amount) VALUES (?, ?)", "o-1", 5)
        return "paid"

    def failing(tx: Any) -> None:
        raise Boom

    assert await inbox.handle("m-1", SRC, pay) == InboxOutcome(True, "paid")
    assert await inbox.handle("m-1", SRC, pay) == InboxOutcome(False, None)
    with pytest.raises(Boom):
        await inbox.handle("m-2", SRC, failing)
    assert await inbox.get_stats() == InboxStats(1, 1, 0)
    assert await sqlite_db.rows(f"SELECT id FROM {fx}") == [("o-1",)]
    assert not sqlite_db.db.in_transaction
