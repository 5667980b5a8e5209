"""Stopping actors: stop requests, children first, ``post_stop``, then the cell is gone."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from dovecote.actors import _death_watch, _timers
from dovecote.actors._actor import Actor
from dovecote.actors._backlog import dead_letter_backlog
from dovecote.actors._dead_letters import DeadLetterMailbox
from dovecote.actors._hooks import run_hook
from dovecote.actors._messages import ActorStopped, DeadLetterReason
from dovecote.actors._ref import from_thread
from dovecote.actors._remote_seam import RemoteCell
from dovecote.actors._system_messages import TERMINATE

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell

__all__ = [
    "begin_stop",
    "children_changed",
    "request_stop",
    "stop_now",
    "wait_for_stopping_children",
]


# -- stop requests --------------------------------------------------------------------------------
def request_stop(cell: ActorCell) -> None:
    """``context.stop``: stop as soon as the message in progress is done."""
    if isinstance(cell, RemoteCell):
        cell.on_stop_requested()  # another process's actor: its transport sends the stop
        return
    if not cell._terminated and not cell._stop_requested:
        _mark_stop_requested(cell)
        cell._send_system(TERMINATE)


def stop_now(cell: ActorCell) -> asyncio.Future[None]:
    """``context.stop`` / ``system.stop`` from any thread; a future of the termination."""
    if isinstance(cell, RemoteCell):
        return cell.stop_now()  # its transport stops it
    system = cell._system
    if threading.get_ident() != system._loop_thread:
        return from_thread(system, lambda: stop_now(cell))  # type: ignore[return-value]
    request_stop(cell)
    return cell._termination()


def _mark_stop_requested(cell: ActorCell) -> None:
    # The parent counts its stopping children, so waiting for them costs O(1) per child.
    if not cell._stop_requested:
        cell._stop_requested = True
        parent = cell._parent
        if parent is not None:
            parent._stopping_children += 1


# -- waiting for children -----------------------------------------------------------------------
def wait_for_stopping_children(cell: ActorCell, then: Callable[[], None]) -> None:
    """Run ``then`` now, or once the children being stopped are gone (a restart or a stop
    waits for them)."""
    if cell._stopping_children:
        cell._awaiting = True
        cell._children_waiter = then
    else:
        then()


def children_changed(cell: ActorCell) -> None:
    """A child terminated: continue a restart or stop that was waiting for it."""
    waiter = cell._children_waiter
    if waiter is None or cell._stopping_children:
        return
    cell._children_waiter = None
    cell._awaiting = False
    waiter()
    if not cell._awaiting and not cell._terminated:
        cell._run()


# -- stopping -------------------------------------------------------------------------------------
def begin_stop(cell: ActorCell) -> None:
    """Stop children, wait for them, run ``post_stop``, then finalize."""
    if cell._terminating or cell._terminated:
        return
    cell._terminating = True
    _mark_stop_requested(cell)
    cell._suspended = True
    _timers.cancel_all(cell)
    children = cell._children
    if children:
        for child in tuple(children.values()):
            request_stop(child)
    wait_for_stopping_children(cell, lambda: _post_stop(cell))


def _post_stop(cell: ActorCell) -> None:
    actor = cell._actor
    if actor is None or type(actor).post_stop is Actor.post_stop:
        _finalize(cell)
        return

    def after(error: BaseException | None) -> None:
        if error is not None:
            cell.log.error("post_stop failed", exc_info=error)
        _finalize(cell)

    run_hook(cell, actor.post_stop, (), after)


def _finalize(cell: ActorCell) -> None:
    """From now on everything sent is a dead letter; what was queued becomes one too
    (a large backlog in slices that yield to the loop), then the actor is gone."""
    system = cell._system
    cell._terminated = True
    cell._scheduled = True  # never scheduled again: the sink below takes every message
    old = cell._mailbox
    cell._mailbox = DeadLetterMailbox(cell)
    cell._queue = None
    cell._bounded = None
    for env in cell._stash or ():
        system._lose(env, cell, DeadLetterReason.QUEUED_AT_STOP)
    cell._stash = None
    old.drain_system()
    cell._actor = None
    if system._mail_provider is not None:
        system._mail_provider.detach(cell)
    dead_letter_backlog(cell, old, _gone)


def _gone(cell: ActorCell) -> None:
    """The last step of a stop: watchers, the lifecycle event, the parent."""
    system = cell._system
    _death_watch.on_terminated(cell)
    stats = cell._stats
    if stats is not None:
        stats.stopped += 1
    metrics = system.metrics
    if metrics._tracked_paths or metrics._drop_keys_by_path:
        metrics.forget_path(cell.path)
    error = system._stop_errors.pop(cell, None) if system._stop_errors else None
    parent = cell._parent
    if parent is not None:  # the /user guardian is not a user actor
        system._publish_lifecycle(ActorStopped, cell, error)
    stopped = cell._stopped
    cell._stopped = True
    if isinstance(stopped, asyncio.Future) and not stopped.done():
        stopped.set_result(None)
    if parent is not None:
        children = parent._children
        if children is not None and children.get(cell._name) is cell:
            del children[cell._name]
        parent._stopping_children -= 1
        children_changed(parent)
    else:
        system._root_terminated()
