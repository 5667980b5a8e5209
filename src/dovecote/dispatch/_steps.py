"""Run a coroutine inline until it really awaits; only then hand it to a task.

A handler written as ``async def`` that never awaits anything completes during its
first ``send(None)``: no task, no future, no loop round trip. When it does await,
the partly-run coroutine is finished inside a task, which resumes it exactly where
it stopped (the task first waits for whatever the coroutine yielded).
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any

__all__ = ["CoroutineType", "Escaped", "continue_in_task", "guarded", "step_inline"]

CoroutineType = types.CoroutineType


def step_inline(coro: Coroutine[Any, Any, Any]) -> tuple[bool, Any]:
    """Advance ``coro`` by one step.

    Returns ``(True, value)`` if it finished (its return value), or ``(False, yielded)``
    when it is waiting on what it yielded. Exceptions from the coroutine propagate.
    """
    try:
        yielded = coro.send(None)
    except StopIteration as stop:
        return True, stop.value
    return False, yielded


@types.coroutine
def _resume(coro: Coroutine[Any, Any, Any], yielded: Any) -> Generator[Any, Any, Any]:
    # Hand the pending awaitable to the driving task, then let the coroutine go on.
    while True:
        try:
            yield yielded
        except BaseException as exc:  # cancellation and throw() reach the coroutine
            try:
                yielded = coro.throw(exc)
            except StopIteration as stop:
                return stop.value
            continue
        return (yield from coro)


class Escaped:
    """The result of a task whose coroutine raised ``SystemExit`` or ``KeyboardInterrupt``.

    asyncio re-raises those two out of the event loop, past everything; returning them
    wrapped lets the runtime stop in order instead (and re-raise them afterwards).
    """

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


async def _finish(coro: Coroutine[Any, Any, Any], yielded: Any) -> Any:
    try:
        return await _resume(coro, yielded)
    except (SystemExit, KeyboardInterrupt) as error:
        return Escaped(error)


async def guarded(coro: Coroutine[Any, Any, Any]) -> Any:
    """Await ``coro``; ``SystemExit`` / ``KeyboardInterrupt`` come back as :class:`Escaped`."""
    try:
        return await coro
    except (SystemExit, KeyboardInterrupt) as error:
        return Escaped(error)


def continue_in_task(
    loop: asyncio.AbstractEventLoop,
    coro: Coroutine[Any, Any, Any],
    yielded: Any,
    done: Callable[[asyncio.Task[Any]], object] | None = None,
) -> asyncio.Task[Any]:
    """Finish a coroutine that :func:`step_inline` left waiting, in a new task.

    ``done``, if given, is added as the task's done callback.
    """
    task = loop.create_task(_finish(coro, yielded))
    if done is not None:
        task.add_done_callback(done)
    return task
