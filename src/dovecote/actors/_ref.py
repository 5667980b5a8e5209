"""ActorRef: the handle through which everyone talks to an actor."""

from __future__ import annotations

import asyncio
import math
import threading
from typing import TYPE_CHECKING, Any, Generic

from dovecote._errors import ActorStoppedError, AskDeadlockError
from dovecote.actors._envelope_kinds import Posted, PostedExempt
from dovecote.actors._messages import PoisonPill
from dovecote.actors._type_params import M, R
from dovecote.mailboxes import Envelope

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell

__all__ = ["ActorRef"]

_get_ident = threading.get_ident
# Flipped on (process-wide) once a blocking-dispatcher actor exists, so that tells made
# from worker threads hop onto the loop; one global read otherwise.
_threads_in_use = False


def enable_threads() -> None:
    """Make tell/stop/replies safe to call from worker threads (blocking dispatcher).

    Swaps in a ``tell`` that hops onto the loop when called from another thread, so
    programs without blocking actors never pay for the check.
    """
    global _threads_in_use
    if not _threads_in_use:
        _threads_in_use = True
        ActorRef.tell = ActorRef._tell_any_thread  # type: ignore[method-assign]


_INF = math.inf


class ActorRef(Generic[M, R]):
    """A handle to one actor incarnation: ``tell``, ``ask``, ``stop``.

    ``ActorRef[M, R]`` (what ``spawn`` of an ``Actor[M, R]`` returns): ``tell`` takes an
    ``M``, ``await ask(...)`` is an ``R``. A plain ``ActorRef`` is ``ActorRef[Any, Any]``.

    Refs are cheap, hashable and compare by address plus incarnation: a new actor
    spawned under a name that was used before gets a ref that is not equal to the old one.
    """

    __slots__ = ("_cell",)

    def __init__(self, cell: ActorCell) -> None:
        self._cell = cell

    # -- sending ---------------------------------------------------------------------------
    def tell(self, message: M, sender: ActorRef | None = None) -> None:
        """Queue ``message`` for the actor; never blocks, never awaits.

        Raises MailboxFullError only when the actor's bounded mailbox uses ``reject``.
        To a stopped actor the message becomes a DeadLetter.
        """
        cell = self._cell
        if sender is None and message is not PoisonPill:
            # The message itself is queued, no envelope: the runtime's own envelopes are
            # private classes, so any object can travel bare.
            queue = cell._queue
            if queue is not None:  # a plain Mailbox: straight onto its deque
                queue.append(message)
                if len(queue) >= cell._mailbox._next_warn:
                    cell._mailbox._grew(len(queue))
            elif not isinstance(message, Envelope):  # post() takes anything else
                cell._mailbox.post(message)
            else:
                self._tell_slow(message, sender)
                return
            if not cell._scheduled:
                cell._scheduled = True
                cell._system._schedule(cell)
            return
        self._tell_slow(message, sender)

    _tell_fast = tell

    def _tell_any_thread(self, message: Any, sender: ActorRef | None = None) -> None:
        """``tell`` once worker threads exist: hop onto the loop when off it."""
        if _get_ident() != self._cell._system._loop_thread:
            self._cell._system._loop.call_soon_threadsafe(self._tell_fast, message, sender)
        else:
            self._tell_fast(message, sender)

    def _tell_slow(self, message: Any, sender: ActorRef | None) -> None:
        """The PoisonPill, a tell with a sender, or an Envelope told to a non-plain mailbox
        (bare messages never get here: ``tell`` queues them itself)."""
        cell = self._cell
        if message is PoisonPill:
            self.stop()
            return
        cell._mailbox.enqueue(Posted(message, sender))
        if not cell._scheduled:
            cell._scheduled = True
            cell._system._schedule(cell)

    async def ask(self, message: M, timeout: float = 5.0) -> R:
        """Send ``message`` and wait for the handler's return value (or context.reply).

        Raises the handler's exception if it failed, :class:`AskTimeoutError` after
        ``timeout`` seconds, :class:`ActorStoppedError` if the actor is or becomes
        stopped first, :class:`AskDeadlockError` when an actor asks itself.
        """
        if not timeout > 0:  # also rejects NaN
            raise ValueError(f"ask timeout must be a positive number of seconds, got {timeout!r}")
        cell = self._cell
        if cell._terminated:
            raise ActorStoppedError(f"{cell.path} is stopped")
        system = cell._system
        if system._running is cell or (
            cell._task is not None and cell._task is asyncio.current_task()
        ):
            raise AskDeadlockError(
                f"{cell.path} asked itself from inside its own handler; the reply could only "
                "come after the handler returns. Use tell, or context.reply."
            )
        future: asyncio.Future[Any] = system._loop.create_future()
        queue = cell._queue
        if queue is not None:  # plain Mailbox: enqueue, inlined
            queue.append(Posted(message, None, future))
            if len(queue) >= cell._mailbox._next_warn:
                cell._mailbox._grew(len(queue))
        else:
            cell._mailbox.enqueue(Posted(message, None, future))
        if not cell._scheduled:
            cell._scheduled = True
            system._schedule(cell)
        if timeout != _INF:
            system._ask_timeouts.track(future, self, message, timeout)
        result: R = await future
        return result

    def stop(self) -> None:
        """Graceful stop: a PoisonPill behind the messages already queued.

        The pill is exempt from overflow policies, so this never raises and is never lost.
        """
        cell = self._cell
        if _threads_in_use and _get_ident() != cell._system._loop_thread:
            cell._system._loop.call_soon_threadsafe(self.stop)
            return
        cell._mailbox.enqueue(PostedExempt(PoisonPill, None))
        if not cell._scheduled:
            cell._scheduled = True
            cell._system._schedule(cell)

    # -- identity ----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The actor's name (the last path segment)."""
        return self._cell._name

    @property
    def path(self) -> str:
        """The actor's path, e.g. ``/user/orders/worker-1``."""
        return self._cell.path

    @property
    def address(self) -> str:
        """The actor's URI, e.g. ``mem://shop@local/user/orders/worker-1``."""
        return self._cell.address

    @property
    def is_alive(self) -> bool:
        """False once the actor has stopped for good."""
        return not self._cell._terminated

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActorRef) and other._cell is self._cell

    def __hash__(self) -> int:
        return hash(self._cell._uid)

    def __repr__(self) -> str:
        return f"ActorRef({self.address!r})"


class ReplyRef(ActorRef):
    """The ``sender`` of an ``ask``: telling it completes the asker's future."""

    __slots__ = ("_future",)

    def __init__(self, cell: ActorCell, future: asyncio.Future[Any]) -> None:
        super().__init__(cell)
        self._future = future

    def tell(self, message: Any, sender: ActorRef | None = None) -> None:
        """Answer the pending ask (a late answer becomes a ``late-reply`` dead letter)."""
        self._cell._system._deliver_reply(self._future, message, sender, self._cell._ref)

    @property
    def path(self) -> str:
        return self._cell.path + "/$ask"

    @property
    def address(self) -> str:
        return self._cell.address + "/$ask"

    @property
    def is_alive(self) -> bool:
        return not self._future.done()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReplyRef) and other._future is self._future

    def __hash__(self) -> int:
        return id(self._future)
