"""Run a lifecycle hook that may be sync or async, then continue."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dovecote.actors._fault_handling import is_fatal
from dovecote.dispatch import CoroutineType, Escaped, continue_in_task, step_inline

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell

__all__ = ["run_hook"]


def run_hook(
    cell: ActorCell,
    hook: Callable[..., Any],
    args: tuple[Any, ...],
    then: Callable[[BaseException | None], None],
) -> None:
    """Call ``hook(*args)``; call ``then(error_or_None)`` once it has finished.

    A hook that returns at once (or an ``async def`` hook that never awaits) runs
    ``then`` synchronously. One that really awaits runs in a task; the cell is
    ``_awaiting`` meanwhile and its turn continues after ``then``. A BaseException that
    is not an Exception (SystemExit...) also stops the whole system.
    """
    try:
        result = hook(*args)
        if type(result) is CoroutineType:
            finished, value = step_inline(result)
            if not finished:
                cell._awaiting = True
                cell._task = continue_in_task(
                    cell._system._loop, result, value, lambda task: _hook_done(cell, task, then)
                )
                return
    except BaseException as error:
        _failed(cell, error, then)
        return
    then(None)


def _failed(
    cell: ActorCell, error: BaseException, then: Callable[[BaseException | None], None]
) -> None:
    if is_fatal(error):
        cell._system._fatal(error)
    then(error)


def _hook_done(
    cell: ActorCell, task: asyncio.Task[Any], then: Callable[[BaseException | None], None]
) -> None:
    cell._awaiting = False
    cell._task = None
    if task.cancelled():
        then(None)
    elif (error := task.exception()) is not None:
        _failed(cell, error, then)
    elif type(result := task.result()) is Escaped:
        _failed(cell, result.error, then)
    else:
        then(None)
    if not cell._awaiting and not cell._terminated:
        cell._run()
