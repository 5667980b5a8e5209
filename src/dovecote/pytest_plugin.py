"""dovecote's pytest plugin (registered through the ``pytest11`` entry point).

Fixtures for any project that installs dovecote (async fixtures: the project needs
pytest-asyncio, e.g. ``pip install 'dovecote[testing]'``):

- ``actor_system``: an entered :class:`~dovecote.ActorSystem`, shut down after the test;
  it runs on ``manual_clock`` when the test asks for both.
- ``probe``: a :class:`~dovecote.testkit.TestProbe` on ``actor_system``.
- ``manual_clock``: a :class:`~dovecote.ManualClock` starting at 0.
- ``durable_store``: an in-memory SQLite store (``open_store("sqlite::memory:")``) with the
  background sweeper off (call ``await durable_store.sweep()``); it uses ``manual_clock``
  when the test asks for both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import pytest
import pytest_asyncio

if TYPE_CHECKING:
    from dovecote.actors import ActorSystem
    from dovecote.testkit import ManualClock, TestProbe

__all__ = ["actor_system", "durable_store", "manual_clock", "probe"]


def _clock_if_requested(request: pytest.FixtureRequest) -> Any:
    if "manual_clock" in request.fixturenames:
        return request.getfixturevalue("manual_clock")
    return None


@pytest.fixture
def manual_clock() -> ManualClock:
    """A ManualClock at 0.0: time moves only when the test calls ``advance``."""
    from dovecote.testkit import ManualClock

    return ManualClock()


@pytest_asyncio.fixture
async def actor_system(request: pytest.FixtureRequest) -> AsyncIterator[ActorSystem]:
    """An ActorSystem named after the test, shut down when the test ends."""
    from dovecote import ActorSystem

    clock = _clock_if_requested(request)
    options: dict[str, Any] = {} if clock is None else {"clock": clock}
    async with ActorSystem("test", **options) as system:
        yield system
        await system.shutdown(timeout=5.0)


@pytest_asyncio.fixture
async def probe(actor_system: ActorSystem) -> TestProbe:
    """A TestProbe on ``actor_system``."""
    from dovecote.testkit import TestProbe

    return TestProbe(actor_system)


@pytest_asyncio.fixture
async def durable_store(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """An in-memory SQLite MailboxStore, closed after the test (sweeper off)."""
    from dovecote.durable import open_store

    clock = _clock_if_requested(request)
    async with open_store("sqlite::memory:", sweep_interval=None, clock=clock) as store:
        yield store
