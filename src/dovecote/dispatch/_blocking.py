"""The blocking dispatcher: handlers that block run on a thread pool."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import Any

__all__ = ["BlockingExecutor"]


class BlockingExecutor:
    """A lazily started thread pool for actors on the ``"blocking"`` dispatcher.

    A blocking call (``time.sleep``, a synchronous database driver) inside such a
    handler occupies a worker thread, not the event loop, so other actors keep going.
    """

    __slots__ = ("_executor", "max_workers")

    def __init__(self, max_workers: int | None = None) -> None:
        if max_workers is not None and (not isinstance(max_workers, int) or max_workers < 1):
            raise ValueError("max_workers must be a positive int or None")
        self.max_workers = max_workers
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None

    def submit(
        self, loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any
    ) -> asyncio.Future[Any]:
        """Run ``fn(*args)`` on a worker thread; return an asyncio future for its result."""
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=self.max_workers, thread_name_prefix="dovecote-blocking"
            )
        return loop.run_in_executor(self._executor, fn, *args)

    def shutdown(self) -> None:
        """Stop the worker threads once their current calls return."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
