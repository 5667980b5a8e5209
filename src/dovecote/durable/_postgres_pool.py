"""A small connection pool for ``PostgresStore``: idle connections on a list, no more.

asyncpg's own pool resets every connection on release (a round trip) and shields the
release in a new task; under load that cost 100-280 us per statement here, as much as the
statement itself. The store's statements leave no session state, so this pool just
hands connections out and takes them back: ``acquire`` pops an idle one (or opens one
below ``max_size``, or waits for a release), ``release`` gives it to the next waiter or
puts it back. A connection that broke is dropped and its slot reopened on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import asyncpg

__all__ = ["ConnectionPool"]


class ConnectionPool:
    """``min_size`` to ``max_size`` connections to ``dsn`` with ``settings`` applied."""

    __slots__ = ("_closed", "_dsn", "_idle", "_max", "_min", "_settings", "_size", "_waiters")

    def __init__(self, dsn: str, *, min_size: int, max_size: int,
                 settings: dict[str, str]) -> None:
        self._dsn = dsn
        self._min = min_size
        self._max = max_size
        self._settings = settings
        self._idle: list[asyncpg.Connection] = []
        #: each gets a connection, or None: "a slot is free, open one yourself"
        self._waiters: deque[asyncio.Future[asyncpg.Connection | None]] = deque()
        self._size = 0  # open or opening
        self._closed = False

    async def start(self) -> None:
        """Open ``min_size`` connections (the first error is raised)."""
        opened = await asyncio.gather(*(self._open() for _ in range(self._min)))
        self._idle.extend(opened)

    async def _open(self) -> asyncpg.Connection:
        self._size += 1
        try:
            conn: asyncpg.Connection = await asyncpg.connect(
                self._dsn, server_settings=self._settings
            )
        except BaseException:
            self._size -= 1
            self._hand_over(None)
            raise
        return conn

    async def acquire(self) -> asyncpg.Connection:
        """A connection for one caller; give it back with :meth:`release`."""
        while True:
            if self._closed:
                raise asyncpg.InterfaceError("the store's connection pool is closed")
            while self._idle:
                conn = self._idle.pop()
                if not conn.is_closed():
                    return conn
                self._size -= 1
            if self._size < self._max:
                return await self._open()
            waiter: asyncio.Future[asyncpg.Connection | None] = (
                asyncio.get_running_loop().create_future()
            )
            self._waiters.append(waiter)
            try:
                handed = await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    given = waiter.result()
                    if given is not None:
                        self.release(given)
                    else:
                        self._hand_over(None)
                raise
            if handed is not None:
                return handed

    def release(self, conn: asyncpg.Connection) -> None:
        """Take a connection back (a broken one, or one after close, is dropped)."""
        if conn.is_closed() or self._closed or conn.is_in_transaction():
            if not conn.is_closed():
                conn.terminate()
            self._size -= 1
            self._hand_over(None)
            return
        self._hand_over(conn)

    def _hand_over(self, conn: asyncpg.Connection | None) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return
        if conn is not None:
            self._idle.append(conn)

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        """``async with pool.connection() as conn``: acquire and release."""
        conn = await self.acquire()
        try:
            yield conn
        finally:
            self.release(conn)

    async def close(self) -> None:
        """Close idle connections now and the others as they come back (idempotent)."""
        self._closed = True
        idle, self._idle = self._idle, []
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)  # they wake, see the pool closed and raise
        self._waiters.clear()
        for conn in idle:
            self._size -= 1
            with contextlib.suppress(Exception):
                await conn.close(timeout=5)
