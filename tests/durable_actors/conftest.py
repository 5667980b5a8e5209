"""Fixtures of the durable actor tests: a real store (SQLite file, PostgreSQL) and a system."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dovecote import ActorSystem
from dovecote.durable import open_store
from service_urls import postgres_url


@pytest.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """A fresh store: a SQLite file, or a PostgreSQL schema of its own (dropped afterwards)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'actors.db'}"
        async with open_store(url, sweep_interval=0.05) as opened:
            yield opened
        return
    schema = f"dovecote_actors_{uuid.uuid4().hex[:16]}"
    opened = await open_store(postgres_url(), sweep_interval=0.05, schema=schema, max_size=4)
    try:
        yield opened
    finally:
        await opened.drop_schema()
        await opened.close()


@pytest.fixture
async def system(store: Any) -> AsyncIterator[ActorSystem]:
    """An ActorSystem named ``t``, shut down before the store closes."""
    async with ActorSystem("t") as actor_system:
        yield actor_system
        await actor_system.shutdown(timeout=2.0)
