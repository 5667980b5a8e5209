"""Death watch: ``Terminated(ref)`` exactly once to every watcher."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dovecote.actors._envelope_kinds import PostedExempt
from dovecote.actors._messages import Terminated
from dovecote.actors._remote_seam import RemoteCell

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell
    from dovecote.actors._ref import ActorRef

__all__ = ["on_terminated", "unwatch", "watch"]


def watch(watcher: ActorCell, ref: ActorRef) -> None:
    """Start watching ``ref``; an already dead target is reported at once."""
    target = ref._cell
    if target is watcher:
        return
    watching = watcher._watching
    if watching is None:
        watching = watcher._watching = set()
    if target in watching:
        return
    watching.add(target)
    if target._terminated:
        _notify(watcher, target)
        return
    watchers = target._watchers
    if watchers is None:
        watchers = target._watchers = set()
    watchers.add(watcher)
    if isinstance(target, RemoteCell):
        target.on_watched()  # a remote actor's stand-in: the transport takes it from here


def unwatch(watcher: ActorCell, ref: ActorRef) -> None:
    """Stop watching; a Terminated already queued is then skipped."""
    target = ref._cell
    if watcher._watching is not None:
        watcher._watching.discard(target)
    if target._watchers is not None and watcher in target._watchers:
        target._watchers.discard(watcher)
        if isinstance(target, RemoteCell):
            target.on_unwatched()


def _notify(watcher: ActorCell, target: ActorCell) -> None:
    # Tail of the user queue (tells sent before the death come first), exempt from
    # overflow policies so no bound can drop it.
    watcher._enqueue(PostedExempt(Terminated(target._ref)))


def on_terminated(cell: ActorCell) -> None:
    """``cell`` has stopped: tell its watchers, forget whom it watched."""
    watchers = cell._watchers
    cell._watchers = None
    if watchers:
        for watcher in watchers:
            # A watcher that is stopping handles no more user messages: its Terminated
            # would only turn into a queued-at-stop dead letter (noise, not a lost message).
            if not watcher._terminated and not watcher._terminating:
                _notify(watcher, cell)
    watching = cell._watching
    cell._watching = None
    if watching:
        for target in watching:
            if target._watchers is not None:
                target._watchers.discard(cell)
