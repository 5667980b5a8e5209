"""Fixtures of the durable actor tests: a real SQLite store and a system beside it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dovecote import ActorSystem
from dovecote.durable import open_store


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Any]:
    """A fresh SQLite store in a temporary file (sweeper every 50 ms: leases come back)."""
    async with open_store(f"sqlite:///{tmp_path / 'actors.db'}", sweep_interval=0.05) as opened:
        yield opened


@pytest.fixture
async def system(store: Any) -> AsyncIterator[ActorSystem]:
    """An ActorSystem named ``t``, shut down before the store closes."""
    async with ActorSystem("t") as actor_system:
        yield actor_system
        await actor_system.shutdown(timeout=2.0)
