"""Shared helpers for the post-office tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")

INBOX = "mem://svc@example.com/inbox"


async def within(awaitable: Awaitable[T], timeout: float = 2.0) -> T:
    """Await the expected event, failing the test instead of hanging."""
    return await asyncio.wait_for(awaitable, timeout)
