"""Fixtures of the durable store tests: a hand-driven clock and one store per backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dovecote import ManualClock

from .backends import BACKENDS

#: the test clock's wall time at the start (upstream's MockClock reads the same)
START_WALL = 1_700_000_000.0


@pytest.fixture
def clock() -> ManualClock:
    """A clock that moves only when the test advances it."""
    return ManualClock(wall_start=START_WALL)


@pytest.fixture(params=list(BACKENDS))
async def store(request: pytest.FixtureRequest, tmp_path: Path,
                clock: ManualClock) -> AsyncIterator[Any]:
    """A fresh, empty store of each backend in :data:`BACKENDS` (sweeper off)."""
    async with BACKENDS[request.param](tmp_path, clock) as opened:
        yield opened
