"""Fixtures shared by the whole test suite."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest


@pytest.fixture
async def system() -> AsyncIterator[Any]:
    """A fresh ActorSystem named ``t``, shut down (quickly) when the test ends."""
    # Imported here so that suites for leaf packages still collect while the runtime is
    # being built.
    from dovecote import ActorSystem

    async with ActorSystem("t") as actor_system:
        yield actor_system
        await actor_system.shutdown(timeout=2.0)
