"""Shutting an actor system down: drain, stop children before parents, cancel what is
left at the deadline; and the stop that follows a BaseException escaping an actor."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from dovecote._errors import ShutdownTimeoutError
from dovecote.actors._envelope_kinds import PostedExempt
from dovecote.actors._system_messages import TERMINATE, DrainBarrier
from dovecote.dispatch import note_fatal_error
from dovecote.observability import get_logger

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell
    from dovecote.actors._system import ActorSystem

__all__ = ["SHUTDOWN_GRACE", "fatal", "shut_down"]

_log = get_logger("dovecote.system")

#: Seconds ``shutdown`` waits, once its timeout has passed and the running handlers were
#: cancelled, before it gives up on the actors still running.
SHUTDOWN_GRACE = 0.5


async def shut_down(system: ActorSystem, drain: bool, timeout: float) -> None:
    """The body of :meth:`ActorSystem.shutdown` (which makes it run once)."""
    loop = system._loop
    deadline = loop.time() + timeout
    try:
        if drain:
            await _drain(system, timeout)
        system._guardian._send_system(TERMINATE)
        if await _stopped_within(system, deadline - loop.time()):
            return
        _log.warning("shutdown timed out; cancelling running handlers", system=system._name)
        for cell in list(system._walk()):
            task = cell._task
            if task is not None:
                task.cancel()
        if await _stopped_within(system, SHUTDOWN_GRACE):
            return
        left = tuple(cell.path for cell in system._walk())
        shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
        raise ShutdownTimeoutError(
            f"actor system {system._name!r} did not stop within {timeout:g}s "
            f"(+{SHUTDOWN_GRACE:g}s after cancelling handlers); still running: {shown}",
            left,
        )
    finally:
        system._ask_timeouts.close(system._name)
        system._blocking.shutdown()
        if system._post_office is not None:
            await system._post_office.stop()
        if system._remote is not None:
            await system._remote.close()


async def _stopped_within(system: ActorSystem, seconds: float) -> bool:
    """Wait up to ``seconds`` for the last actor to stop; True if it did."""
    try:
        await asyncio.wait_for(asyncio.shield(system._done), max(0.0, seconds))
    except TimeoutError:
        return False
    return True


async def _drain(system: ActorSystem, timeout: float) -> None:
    pending = 0
    all_done: asyncio.Future[None] = system._loop.create_future()

    def reached(_: ActorCell) -> None:
        nonlocal pending
        pending -= 1
        if pending == 0 and not all_done.done():
            all_done.set_result(None)

    for cell in list(system._walk()):
        if not cell._terminating and not cell._terminated:
            pending += 1
            cell._enqueue(PostedExempt(DrainBarrier(reached)))
    if pending == 0:
        return
    try:
        await asyncio.wait_for(all_done, timeout)
    except TimeoutError:
        _log.warning("drain timed out; stopping the rest", system=system._name, left=pending)


# -- a BaseException escaped an actor ----------------------------------------------------------
def fatal(system: ActorSystem, error: BaseException) -> None:
    """Stop the whole system, then re-raise ``error`` where the system was entered.

    Called on the loop thread when a BaseException that is not an Exception (nor a
    CancelledError) escaped a handler or hook; the first one wins.
    """
    if system._fatal_error is not None:
        return
    system._fatal_error = error
    _log.error(
        "a BaseException escaped an actor; stopping the actor system",
        system=system._name,
        exc_info=error,
    )
    note_fatal_error(system._loop, error)
    system._fatal_stop = system._loop.create_task(_stop_after_fatal(system))


async def _stop_after_fatal(system: ActorSystem) -> None:
    try:
        await system.shutdown(timeout=system._interrupt_timeout)
    except ShutdownTimeoutError as error:
        _log.warning("shutdown after a fatal error timed out", actors=error.actors[:10])
    finally:
        owner = system._owner
        if owner is not None and not owner.done() and not system._exiting:
            owner.cancel()  # its ``async with`` (or dovecote.run) re-raises the error
