"""Retention sweeps, stats and the structlog audit trail, on every backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from inbox_kit import Db
from structlog.testing import capture_logs

from dovecote.durable import InboxStats

SRC = "sqs:payments"


async def _processed_and_pending(db: Db, **options: Any) -> Any:
    """An inbox with two processed rows and one received-but-unprocessed row."""
    inbox = db.inbox(**options)
    await inbox.declare_schema()
    await inbox.handle("done-1", SRC, lambda tx: None)
    await inbox.handle("done-2", "other", lambda tx: None)
    async with db.held() as tx:
        await inbox.record_receive(tx, "pending-1", SRC)
    return inbox


async def test_sweep_keeps_rows_younger_than_retention(backend: Db):
    inbox = await _processed_and_pending(backend)
    now = datetime.now(UTC)
    assert await inbox.sweep(now=now + timedelta(days=29)) == 0
    assert await inbox.sweep() == 0
    assert await inbox.get_stats() == InboxStats(3, 2, 1)


async def test_sweep_deletes_processed_rows_past_retention_and_keeps_unprocessed_twice_as_long(
    backend: Db,
):
    inbox = await _processed_and_pending(backend)
    now = datetime.now(UTC)
    assert await inbox.sweep(now=now + timedelta(days=31)) == 2
    assert await inbox.get_stats() == InboxStats(1, 0, 1)
    assert await inbox.is_fresh("done-1", SRC)  # swept: a redelivery now is fresh again
    assert await inbox.sweep(now=now + timedelta(days=59)) == 0
    assert await inbox.sweep(now=now + timedelta(days=61)) == 1
    assert await inbox.get_stats() == InboxStats(0, 0, 0)


async def test_retention_may_be_a_fraction_of_a_day_and_now_any_timezone(backend: Db):
    inbox = await _processed_and_pending(backend, retention_days=0.5)
    tokyo = timezone(timedelta(hours=9))
    now = datetime.now(tokyo)
    assert await inbox.sweep(now=now + timedelta(hours=11)) == 0
    assert await inbox.sweep(now=now + timedelta(hours=13)) == 2
    assert await inbox.sweep(now=now + timedelta(hours=23)) == 0
    assert await inbox.sweep(now=now + timedelta(hours=25)) == 1


async def test_retention_counts_from_received_at_not_processed_at(backend: Db):
    inbox = backend.inbox(retention_days=1)
    await inbox.declare_schema()
    async with backend.held() as tx:
        await inbox.record_receive(tx, "m-1", SRC)
    received = datetime.now(UTC)
    # marked later; the row is aged by when it was received
    async with backend.held() as tx:
        await inbox.mark_processed(tx, "m-1", SRC)
    assert await inbox.sweep(now=received + timedelta(days=1, seconds=1)) == 1


async def test_a_huge_retention_sweeps_nothing_instead_of_overflowing(backend: Db):
    inbox = await _processed_and_pending(backend, retention_days=400_000_000)
    assert await inbox.sweep() == 0
    assert (await inbox.get_stats()).total == 3


async def test_stats_count_per_source_and_for_all(backend: Db):
    inbox = await _processed_and_pending(backend)
    assert await inbox.get_stats() == InboxStats(total=3, processed=2, unprocessed=1)
    assert await inbox.get_stats(source=SRC) == InboxStats(2, 1, 1)
    assert await inbox.get_stats(source="other") == InboxStats(1, 1, 0)
    assert await inbox.get_stats(source="nobody") == InboxStats(0, 0, 0)


async def test_audit_events_are_info_level_structlog_events(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    with capture_logs() as logs:
        await inbox.handle("m-1", SRC, lambda tx: None)
        await inbox.handle("m-1", SRC, lambda tx: None)
        await inbox.sweep(now=datetime.now(UTC) + timedelta(days=31))
    events = [(e["event"], e["log_level"]) for e in logs if e["event"].startswith("inbox.")]
    assert events == [
        ("inbox.received", "info"),
        ("inbox.processed", "info"),
        ("inbox.duplicate", "info"),
        ("inbox.swept", "info"),
    ]
    received = next(e for e in logs if e["event"] == "inbox.received")
    assert (received["source"], received["message_id"], received["table"]) == (
        SRC,
        "m-1",
        backend.table,
    )
    swept = next(e for e in logs if e["event"] == "inbox.swept")
    assert (swept["deleted"], swept["processed"], swept["unprocessed"]) == (1, 1, 0)


async def test_the_low_level_api_audits_too(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()
    with capture_logs() as logs:
        async with backend.held() as tx:
            await inbox.record_receive(tx, "m-1", SRC)
            await inbox.record_receive(tx, "m-1", SRC)
            await inbox.mark_processed(tx, "m-1", SRC)
    assert [e["event"] for e in logs] == ["inbox.received", "inbox.duplicate", "inbox.processed"]


async def test_a_failed_handler_is_audited_as_rolled_back(backend: Db):
    inbox = backend.inbox()
    await inbox.declare_schema()

    def failing(tx: Any) -> None:
        raise ValueError("no")

    with capture_logs() as logs, pytest.raises(ValueError):
        await inbox.handle("m-1", SRC, failing)
    assert [(e["event"], e.get("error")) for e in logs] == [
        ("inbox.received", None),
        ("inbox.rolled_back", "ValueError"),
    ]


async def test_audit_false_emits_no_inbox_events(backend: Db):
    inbox = backend.inbox(audit=False)
    await inbox.declare_schema()
    with capture_logs() as logs:
        await inbox.handle("m-1", SRC, lambda tx: None)
        await inbox.handle("m-1", SRC, lambda tx: None)
        await inbox.sweep()
    assert [e for e in logs if e["event"].startswith("inbox.")] == []
