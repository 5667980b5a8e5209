"""The blocking dispatcher: handlers that block run on a pool of daemon threads."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["BlockingExecutor"]

_Work = tuple["concurrent.futures.Future[Any]", Callable[..., Any], tuple[Any, ...]]


class _DaemonPool(concurrent.futures.Executor):
    """A thread pool whose workers are daemon threads that nobody joins at exit.

    ``ThreadPoolExecutor`` joins its workers when the interpreter exits, so one handler
    stuck in ``time.sleep(30)`` would hold a Ctrl-C'd program for 30 seconds. A handler
    still running when the program ends is abandoned instead.
    """

    def __init__(self, max_workers: int) -> None:
        self._max_workers = max_workers
        self._work: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        call = (lambda: fn(*args, **kwargs)) if kwargs else fn
        with self._lock:
            if self._closed:
                raise RuntimeError("the blocking dispatcher is shut down")
            self._work.put((future, call, () if kwargs else args))
            if not self._idle.acquire(blocking=False) and len(self._threads) < self._max_workers:
                thread = threading.Thread(
                    target=self._run,
                    name=f"dovecote-blocking_{len(self._threads)}",
                    daemon=True,
                )
                self._threads.append(thread)
                thread.start()
        return future

    def _run(self) -> None:
        while True:
            work = self._work.get()
            if work is None:
                return
            future, fn, args = work
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args)
                except BaseException as error:  # handed to the loop, like ThreadPoolExecutor
                    future.set_exception(error)
                else:
                    future.set_result(result)
            del work, future, fn, args
            self._idle.release()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            if cancel_futures:
                while True:
                    try:
                        work = self._work.get_nowait()
                    except queue.Empty:
                        break
                    if work is not None:
                        work[0].cancel()
            for _ in self._threads:
                self._work.put(None)
        if wait:
            for thread in self._threads:
                thread.join()


class BlockingExecutor:
    """A lazily started thread pool for actors on the ``"blocking"`` dispatcher.

    A blocking call (``time.sleep``, a synchronous database driver) inside such a
    handler occupies a worker thread, not the event loop, so other actors keep going.
    The workers are daemon threads: a program that ends (Ctrl-C included) does not wait
    for a handler that is still blocked.
    """

    __slots__ = ("_executor", "max_workers")

    def __init__(self, max_workers: int | None = None) -> None:
        if max_workers is not None and (not isinstance(max_workers, int) or max_workers < 1):
            raise ValueError("max_workers must be a positive int or None")
        self.max_workers = max_workers
        self._executor: _DaemonPool | None = None

    def submit(
        self, loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any
    ) -> asyncio.Future[Any]:
        """Run ``fn(*args)`` on a worker thread; return an asyncio future for its result."""
        if self._executor is None:
            # the same default size as ThreadPoolExecutor
            workers = self.max_workers or min(32, (os.cpu_count() or 1) + 4)
            self._executor = _DaemonPool(workers)
        return loop.run_in_executor(self._executor, fn, *args)

    def shutdown(self) -> None:
        """Stop the worker threads once their current calls return (never waits)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
