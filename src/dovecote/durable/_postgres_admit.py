"""Admission on PostgreSQL: sends, fanouts and replays written with group commit.

Concurrent ``send`` calls queue *units* (one send, one fanout, one replay: each all or
nothing). One flusher writes everything queued as a single transaction, so N callers cost
one commit (one WAL flush) instead of N; while a flush is in flight the next batch
gathers, and an idle store writes a lone send at once (no timer, no added latency).

- Fast path (every target's configuration is known, so payload sizes were checked at the
  call): one statement locks the target mailboxes in id order, checks that every unit
  fits, inserts, bumps ``admitted`` and notifies; it changes nothing if anything would
  not fit.
- Slow path (an unknown target, or the fast path did not fit): one transaction decides
  unit by unit in order. Mailboxes it creates for units that end up refused are deleted
  again before the commit, so a refused send leaves nothing behind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import attrs

from dovecote.durable._errors import (
    CapacityError,
    MailboxNotFoundError,
    StoreError,
)
from dovecote.durable._model import MailboxConfig
from dovecote.durable._postgres_db import PgDatabase, storage_errors
from dovecote.durable._store_base import SendRow as Row
from dovecote.durable._store_base import payload_too_large
from dovecote.durable._wakeup import MailboxSignals

__all__ = ["Admission", "Row", "Unit"]

_MAX_BATCH_ROWS = 1_000


@attrs.define(slots=True, eq=False)
class Unit:
    """One all-or-nothing admission and the future its caller awaits."""

    rows: list[Row]
    future: asyncio.Future[None]
    #: replays never create their target
    create: bool = True


def _columns(rows: Iterable[Row]) -> list[list[object]]:
    return [list(column) for column in zip(*rows, strict=True)]


class Admission:
    """The group-commit writer of one store."""

    __slots__ = ("_configs", "_db", "_flusher", "_queue", "_signals")

    def __init__(self, db: PgDatabase, configs: dict[str, MailboxConfig],
                 signals: MailboxSignals) -> None:
        self._db = db
        self._configs = configs  # shared with the store: configurations never change
        self._signals = signals
        self._queue: list[Unit] = []
        self._flusher: asyncio.Task[None] | None = None

    async def admit(self, rows: list[Row], *, create: bool = True) -> None:
        """Write ``rows`` as one unit; raises the unit's error (nothing written then)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append(Unit(rows, future, create))
        if self._flusher is None:
            self._flusher = asyncio.get_running_loop().create_task(
                self._flush_all(), name="dovecote-postgres-admission"
            )
        await future

    async def drain(self) -> None:
        """Wait until everything queued so far is written (or has failed)."""
        flusher = self._flusher
        if flusher is not None:
            await asyncio.shield(flusher)

    async def _flush_all(self) -> None:
        try:
            while self._queue:
                batch: list[Unit] = []
                size = 0
                while self._queue and (not batch or size + len(self._queue[0].rows)
                                       <= _MAX_BATCH_ROWS):
                    unit = self._queue.pop(0)
                    batch.append(unit)
                    size += len(unit.rows)
                await self._flush(batch)
        finally:
            self._flusher = None

    async def _flush(self, batch: list[Unit]) -> None:
        outcome: dict[int, StoreError | None]
        try:
            if all(r[1] in self._configs for u in batch for r in u.rows):
                outcome = await self._fast(batch)
            else:
                outcome = {}
            if not outcome:
                outcome = await self._slow(batch)
        except Exception as error:  # the batch's transaction failed: every unit fails
            for unit in batch:
                if not unit.future.done():
                    unit.future.set_exception(error)
            return
        for index, unit in enumerate(batch):
            failure = outcome.get(index)
            if failure is None:
                self._signals.notify_many({r[1] for r in unit.rows})
            if unit.future.done():  # the caller was cancelled; the write stands
                continue
            if failure is None:
                unit.future.set_result(None)
            else:
                unit.future.set_exception(failure)

    async def _fast(self, batch: list[Unit]) -> dict[int, StoreError | None]:
        """Everything in one statement, or ``{}`` when something would not fit."""
        rows = [r for unit in batch for r in unit.rows]
        ok = await self._db.fetchval("sending", self._db.sql.admit_fast, *_columns(rows))
        return dict.fromkeys(range(len(batch))) if ok else {}

    async def _slow(self, batch: list[Unit]) -> dict[int, StoreError | None]:
        sql = self._db.sql
        targets = sorted({r[1] for unit in batch for r in unit.rows})
        unknown = [t for t in targets if t not in self._configs]
        creatable = sorted({r[1] for u in batch if u.create for r in u.rows} & set(unknown))
        outcome: dict[int, StoreError | None] = {}
        with storage_errors("sending"):
            async with self._db.pool.connection() as conn, conn.transaction():
                created: set[str] = set()
                now = batch[0].rows[0][6]
                for agent_id in creatable:
                    defaults = MailboxConfig(agent_id)
                    if await conn.fetchval(
                        sql.insert_mailbox, agent_id, defaults.capacity, defaults.ordering_mode,
                        defaults.max_attempts, defaults.lease_duration_ms,
                        defaults.max_payload_bytes, defaults.dlq_retention_ms, now,
                    ):
                        created.add(agent_id)
                live: dict[str, int] = {}
                capacity: dict[str, int] = {}
                for row in await conn.fetch(sql.lock_counts, targets):
                    live[row[0]], capacity[row[0]] = row[2], row[1]
                for found in await conn.fetch(sql.get_mailboxes, unknown):
                    self._configs.setdefault(found[0], MailboxConfig(*found))
                accepted: list[Row] = []
                used: set[str] = set()
                for index, unit in enumerate(batch):
                    error = self._check(unit, live, capacity)
                    outcome[index] = error
                    if error is None:
                        accepted.extend(unit.rows)
                        for r in unit.rows:
                            live[r[1]] += 1
                            used.add(r[1])
                if accepted:
                    await conn.execute(sql.insert_messages, *_columns(accepted))
                    counts: dict[str, int] = {}
                    for r in accepted:
                        counts[r[1]] = counts.get(r[1], 0) + 1
                    await conn.execute(sql.add_admitted, list(counts), list(counts.values()))
                if created - used:
                    await conn.execute(sql.delete_mailbox, sorted(created - used))
                    for agent_id in created - used:
                        self._configs.pop(agent_id, None)
        return outcome

    def _check(self, unit: Unit, live: dict[str, int],
               capacity: dict[str, int]) -> StoreError | None:
        wanted: dict[str, int] = {}
        for r in unit.rows:
            config = self._configs.get(r[1])
            if config is None:
                return MailboxNotFoundError(f"mailbox not found: {r[1]}")
            if len(r[3]) > config.max_payload_bytes:
                return payload_too_large(len(r[3]), config.max_payload_bytes, r[1])
            wanted[r[1]] = wanted.get(r[1], 0) + 1
        for agent_id, n in wanted.items():
            if live[agent_id] + n > capacity[agent_id]:
                return CapacityError(f"mailbox full: {agent_id} (capacity {capacity[agent_id]})")
        return None
