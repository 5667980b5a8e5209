"""Fixtures for the inbox suite: one real database per test, on every backend.

``backend`` runs a test on SQLite (a file in tmp_path), on PostgreSQL through a pool and
through one connection. PostgreSQL tests use uniquely named tables (the server is shared
with other suites) and drop them afterwards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiosqlite
import asyncpg
import pytest
from inbox_kit import BACKENDS, SINGLE_CONNECTION, Db, unique_table

from service_urls import postgres_url


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Db]:
    path = tmp_path / "inbox.db"
    conn = await aiosqlite.connect(path)
    await conn.execute("PRAGMA journal_mode=WAL")
    try:
        yield Db("sqlite", conn, unique_table(), path=path)
    finally:
        await conn.close()


@pytest.fixture
async def pg_pool() -> AsyncIterator[Db]:
    url = postgres_url()
    pool = await asyncpg.create_pool(url, min_size=1, max_size=8)
    db = Db("postgresql", pool, unique_table(), url=url)
    try:
        yield db
    finally:
        await db.drop()
        await pool.close()


@pytest.fixture
async def pg_conn() -> AsyncIterator[Db]:
    url = postgres_url()
    conn = await asyncpg.connect(url)
    db = Db("postgresql", conn, unique_table(), url=url)
    try:
        yield db
    finally:
        await db.drop()
        await conn.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Db:
    """Every backend the inbox runs on."""
    db: Db = request.getfixturevalue(
        "sqlite_db" if request.param == "sqlite" else request.param
    )
    return db


@pytest.fixture(params=SINGLE_CONNECTION)
def single(request: pytest.FixtureRequest) -> Db:
    """The backends where the caller hands over one connection (savepoints, re-entry)."""
    db: Db = request.getfixturevalue(
        "sqlite_db" if request.param == "sqlite" else request.param
    )
    return db
