"""The ``db`` fixture of the PostgreSQL-only tests: a schema name of its own, dropped after."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from service_urls import postgres_url


@pytest.fixture(name="db")
async def pg_db() -> AsyncIterator[tuple[str, str]]:
    """(url, schema): a fresh schema name on the test server, dropped after the test."""
    url = postgres_url()
    schema = f"dovecote_test_{uuid.uuid4().hex[:16]}"
    yield url, schema
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()
