"""The backends the store behaviour suite runs against; add one by adding an entry.

Each entry maps a backend id (the pytest parameter id) to an async context manager
factory ``open(tmp_path, clock) -> MailboxStore``. The sweeper is off in the suite (tests
call ``store.sweep()`` by hand) and time is the test's ``ManualClock``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from dovecote.addressing import ManualClock
from dovecote.durable import MailboxStore, open_store

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


#: backend id -> factory; the ``store`` fixture is parametrised over this (in order)
BACKENDS: dict[str, OpenBackend] = {
    "sqlite-memory": sqlite_memory,
    "sqlite-file": sqlite_file,
}
