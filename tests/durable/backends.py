"""The backends the store behaviour suite runs against; add one by adding an entry.

Each entry maps a backend id (the pytest parameter id) to an async context manager
factory ``open(tmp_path, clock) -> MailboxStore``. The sweeper is off in the suite (tests
call ``store.sweep()`` by hand) and time is the test's ``ManualClock``.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from dovecote import ManualClock
from dovecote.durable import MailboxStore, open_store
from service_urls import postgres_url

OpenBackend = Callable[[Path, ManualClock], contextlib.AbstractAsyncContextManager[Any]]


@contextlib.asynccontextmanager
async def sqlite_memory(tmp_path: Path, clock: ManualClock) -> AsyncIterator[MailboxStore]:
    async with open_store("sqlite::memory:", sweep_interval=None, clock=clock) as store:
        yield store


@contextlib.asynccontextmanager
async def sqlite_file(tmp_path: Path, clock: ManualClock) -> AsyncIterator[MailboxStore]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    async with open_store(url, sweep_interval=None, clock=clock) as store:
        yield store


@contextlib.asynccontextmanager
async def postgresql(tmp_path: Path, clock: ManualClock) -> AsyncIterator[MailboxStore]:
    """A PostgresStore in a schema of its own, dropped afterwards (the server is shared)."""
    schema = f"dovecote_test_{uuid.uuid4().hex[:16]}"
    store: Any = await open_store(postgres_url(), sweep_interval=None, clock=clock,
                                  schema=schema, max_size=2)
    try:
        yield store
    finally:
        await store.drop_schema()


#: backend id -> factory; the ``store`` fixture is parametrised over this (in order)
BACKENDS: dict[str, OpenBackend] = {
    "sqlite-memory": sqlite_memory,
    "sqlite-file": sqlite_file,
    "postgresql": postgresql,
}
