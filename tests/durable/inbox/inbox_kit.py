"""Shared by the inbox tests: a live database with dialect-neutral helpers."""

from __future__ import annotations

import re
import uuid
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

    async def drop(self) -> None:
        if self.kind == "postgresql":
            for name in [self.table, *self._extra_tables]:
                await self.db.execute(f'DROP TABLE IF EXISTS "{name}"')
