"""When a mailbox is drained: event-loop turns, the blocking pool, uvloop selection.

This package knows nothing about actors: it queues turns and runs them back to back in
one loop callback, runs coroutines inline until they really await, hands blocking calls
to threads, and picks the event loop.
"""

from dovecote.dispatch._blocking import BlockingExecutor
from dovecote.dispatch._loop import loop_factory, note_fatal_error, run, uvloop_available
from dovecote.dispatch._steps import (
    CoroutineType,
    Escaped,
    continue_in_task,
    guarded,
    step_inline,
)
from dovecote.dispatch._turns import DEFAULT_SLICE, HasTurn, TurnQueue

#: Messages an actor may process in one turn before it yields the loop to others.
DEFAULT_THROUGHPUT = 100

__all__ = [
    "DEFAULT_SLICE",
    "DEFAULT_THROUGHPUT",
    "BlockingExecutor",
    "CoroutineType",
    "Escaped",
    "HasTurn",
    "TurnQueue",
    "continue_in_task",
    "guarded",
    "loop_factory",
    "note_fatal_error",
    "run",
    "step_inline",
    "uvloop_available",
]
