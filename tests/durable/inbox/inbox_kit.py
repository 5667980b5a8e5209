"""Shared by the inbox tests: a live database with dialect-neutral helpers."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs

from dovecote.durable import Inbox

BACKENDS = ("sqlite", "pg_pool", "pg_conn")
SINGLE_CONNECTION = ("sqlite", "pg_conn")


def unique_table(prefix: str = "inbox") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


@attrs.define
class Db:
    """A live database for one test, with dialect-neutral helpers (write SQL with ``?``)."""

    kind: str  # "sqlite" | "postgresql"
    db: Any  # what Inbox gets: aiosqlite connection, asyncpg pool or connection
    table: str
    url: str | None = None
    path: Path | None = None
    _extra_tables: list[str] = attrs.field(factory=list)

    def inbox(self, **options: Any) -> Inbox:
        return Inbox(self.db, table=options.pop("table", self.table), **options)

    def sql(self, text: str) -> str:
        if self.kind == "sqlite":
            return text
        counter = iter(range(1, 1000))
        return re.sub(r"\?", lambda _: f"${next(counter)}", text)

    async def execute(self, tx: Any, text: str, *args: Any) -> None:
        if self.kind == "sqlite":
            await tx.execute(text, args)
        else:
            await tx.execute(self.sql(text), *args)

    async def rows(self, text: str, *args: Any) -> list[tuple[Any, ...]]:
        """Run a query outside any inbox transaction (its own connection on a pool)."""
        if self.kind == "sqlite":
            return [tuple(r) for r in await self.db.execute_fetchall(text, args)]
        return [tuple(r) for r in await self.db.fetch(self.sql(text), *args)]

    async def effects_table(self) -> str:
        """A table ``(id TEXT, amount INTEGER)`` with NO unique key, so a double effect shows."""
        name = f"{self.table}_fx"
        self._extra_tables.append(name)
        if self.kind == "sqlite":
            await self.db.execute(f"CREATE TABLE {name} (id TEXT NOT NULL, amount INTEGER)")
            await self.db.commit()
        else:
            await self.db.execute(f"CREATE TABLE {name} (id TEXT NOT NULL, amount INTEGER)")
        return name

    @asynccontextmanager
    async def held(self) -> AsyncIterator[Any]:
        """A transaction the caller owns (what record_receive / mark_processed are for).

        On a single connection that is already inside a transaction, it joins that one.
        """
        if self.kind == "sqlite":
            outer = self.db.in_transaction
            if not outer:
                await self.db.execute("BEGIN")
            try:
                yield self.db
            except BaseException:
                if not outer:
                    await self.db.rollback()
                raise
            if not outer:
                await self.db.commit()
            return
        pooled = hasattr(self.db, "acquire")
        conn = await self.db.acquire() if pooled else self.db
        try:
            async with conn.transaction():
                yield conn
        finally:
            if pooled:
                await self.db.release(conn)

    async def drop(self) -> None:
        if self.kind == "postgresql":
            for name in [self.table, *self._extra_tables]:
                await self.db.execute(f'DROP TABLE IF EXISTS "{name}"')
