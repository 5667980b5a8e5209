"""Fixtures for the post-office tests: a manual clock and an isolated provider."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from dovecote.addressing import ManualClock, MemoryProvider, PostOffice


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def provider(clock: ManualClock) -> MemoryProvider:
    return MemoryProvider.create_isolated(clock=clock)


@pytest.fixture
async def office(provider: MemoryProvider) -> AsyncIterator[PostOffice]:
    post_office = PostOffice([provider])
    await post_office.start()
    yield post_office
    await post_office.stop()
