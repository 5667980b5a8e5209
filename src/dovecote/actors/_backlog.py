"""Dead-lettering what a stopped actor left queued, in slices that yield to the loop.

A stop turns every queued message into a dead letter. A small queue is done at once; a
large one (millions of messages) is done a slice at a time, so that the event loop, and
with it ``shutdown``'s timeout, keeps running meanwhile. The actor counts as stopped
(watchers, ``ActorStopped``, its parent) once the last slice is done.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from dovecote.actors._envelope_kinds import unwrap
from dovecote.actors._messages import DeadLetterReason
from dovecote.dispatch import DEFAULT_SLICE
from dovecote.mailboxes import Mailbox

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell

__all__ = ["dead_letter_backlog"]

_BATCH = 256  # messages between two looks at the clock
_perf = time.perf_counter


def dead_letter_backlog(
    cell: ActorCell, mailbox: Mailbox, then: Callable[[ActorCell], None]
) -> None:
    """Dead-letter every user message left in ``mailbox``, then call ``then(cell)``."""
    if _lose_for(cell, mailbox, DEFAULT_SLICE):
        then(cell)
        return
    call_soon = cell._system._loop.call_soon

    def next_slice() -> None:
        if _lose_for(cell, mailbox, DEFAULT_SLICE):
            then(cell)
        else:
            call_soon(next_slice)

    call_soon(next_slice)


def _lose_for(cell: ActorCell, mailbox: Mailbox, seconds: float) -> bool:
    """Dead-letter queued messages for about ``seconds``; True once the queue is empty."""
    lose = cell._system._lose
    take = mailbox.take
    reason = DeadLetterReason.QUEUED_AT_STOP
    deadline = _perf() + seconds
    while True:
        for _ in range(_BATCH):
            # the count, not the marker, says "empty": a user may have told anything
            if not mailbox.user_count:
                return True
            lose(unwrap(take()), cell, reason)
        if _perf() >= deadline:
            return False
