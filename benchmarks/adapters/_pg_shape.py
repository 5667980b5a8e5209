"""What the PostgreSQL store rows share: the server, a throwaway schema, the concurrency.

Both sides (plain asyncpg and ``PostgresStore``) run on the same tables and indexes (the
store's DDL) in a schema made for the cell and dropped after it, with 4 connections /
4 concurrent senders and 4 consumers (issue 9's baseline shape).
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from ._base import Unavailable

PAYLOAD = b"x" * 100
#: connections (plain) / concurrent senders (store); consumers of the claim figure
SENDERS = 4
CONSUMERS = 4
URL_ENV = "DOVECOTE_TEST_POSTGRES_URL"
DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def postgres_url() -> str:
    """The benchmark's server (``DOVECOTE_TEST_POSTGRES_URL`` or the local default)."""
    return os.environ.get(URL_ENV, DEFAULT_URL)


def fresh_schema() -> str:
    """A schema name no other cell or test uses."""
    return f"bench_{uuid.uuid4().hex[:16]}"


async def connect_or_unavailable(url: str) -> Any:
    """One asyncpg connection, or :class:`Unavailable` naming how to start the server."""
    try:
        import asyncpg
    except ImportError as exc:
        raise Unavailable(f"asyncpg: {exc}") from exc
    try:
        return await asyncpg.connect(url, timeout=5)
    except (OSError, asyncpg.PostgresError) as exc:
        raise Unavailable(f"PostgreSQL at {url.split('@')[-1]} is not reachable: {exc}") from exc


async def drop_schema(url: str, schema: str) -> None:
    """Drop a cell's schema."""
    conn = await connect_or_unavailable(url)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()
