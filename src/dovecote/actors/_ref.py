"""ActorRef: the handle through which everyone talks to an actor."""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import numbers
import threading
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Generic

from dovecote._errors import (
    ActorStoppedError,
    AskDeadlockError,
    InvalidTimeoutError,
    MailboxFullError,
)
from dovecote.actors._envelope_kinds import Posted, PostedExempt
from dovecote.actors._messages import DeadLetterReason, PoisonPill
from dovecote.actors._type_params import M, R
from dovecote.mailboxes import Envelope

if TYPE_CHECKING:
    from collections import deque
    from collections.abc import Callable

    from dovecote.actors._cell import ActorCell
    from dovecote.actors._system import ActorSystem

__all__ = ["ActorRef", "ReplyRef", "check_timeout", "from_thread"]

_get_ident = threading.get_ident
_INF = math.inf


def check_timeout(timeout: float | None, what: str = "ask timeout") -> float:
    """``timeout`` as a float of seconds (``inf`` for None); InvalidTimeoutError if it is
    not a positive real number (bools, NaN, zero, negatives and overflowing ints included)."""
    if type(timeout) is float and timeout > 0:  # the common case; NaN fails the comparison
        return timeout
    if timeout is None:
        return _INF
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise InvalidTimeoutError(f"{what} must be a positive number of seconds or None, "
                                  f"got {timeout!r}")
    try:
        seconds = float(timeout)
    except OverflowError:
        raise InvalidTimeoutError(f"{what} {timeout!r} is too large for a float") from None
    if not seconds > 0:
        raise InvalidTimeoutError(f"{what} must be a positive number of seconds, got {timeout!r}")
    return seconds


class ActorRef(Generic[M, R]):
    """A handle to one actor incarnation: ``tell``, ``ask``, ``stop``.

    ``ActorRef[M, R]`` (what ``spawn`` of an ``Actor[M, R]`` returns): ``tell`` takes an
    ``M``, ``await ask(...)`` is an ``R``. A plain ``ActorRef`` is ``ActorRef[Any, Any]``.

    Refs are cheap, hashable and compare by address plus incarnation: a new actor
    spawned under a name that was used before gets a ref that is not equal to the old one.
    ``tell``, ``ask`` and ``stop`` may be called from any thread: from a thread other than
    the system's event loop they hop onto the loop (waking it).
    """

    __slots__ = ("_cell",)

    def __init__(self, cell: ActorCell) -> None:
        self._cell = cell

    # -- sending ---------------------------------------------------------------------------
    def tell(self, message: M, sender: ActorRef | None = None) -> None:
        """Queue ``message`` for the actor; never blocks, never awaits.

        Raises MailboxFullError only when the actor's bounded mailbox uses ``reject``.
        To a stopped actor the message becomes a DeadLetter. Safe from any thread: from
        another thread a ``reject`` cannot be raised to the caller, so that message is
        published as a DeadLetter with reason ``rejected``.
        """
        cell = self._cell
        if sender is None and message is not PoisonPill:
            # A plain Mailbox: the message itself goes straight onto its deque, from any
            # thread (deque.append is atomic). The runtime's own envelopes are private
            # classes, so any object can travel bare.
            queue = cell._queue
            if queue is not None:
                queue.append(message)
                if len(queue) >= cell._mailbox._next_warn:
                    cell._mailbox._grew(len(queue))
                if cell._queue is not queue:  # only another thread sees this: see _orphans
                    cell._system._orphaned(cell, queue)
                elif not cell._scheduled:
                    cell._scheduled = True
                    system = cell._system
                    if _get_ident() == system._loop_thread:
                        system._schedule(cell)
                    elif not system._hop(system._schedule, cell):
                        system._dead_letters += 1  # the loop is closed: counted, never run
                return
            bounded = cell._bounded
            if (
                bounded is not None
                and _get_ident() == cell._system._loop_thread
                and not isinstance(message, Envelope)
            ):
                # A BoundedMailbox on the loop thread: BoundedMailbox.post, inlined while
                # there is room; when full, post() applies the policy (it may raise
                # MailboxFullError). Then the turn is scheduled as above.
                user: deque[Any] = bounded._user  # (bare messages travel too)
                if len(user) < bounded._capacity:
                    user.append(message)
                    if len(user) >= bounded._next_warn:
                        bounded._grew(len(user))
                else:
                    bounded.post(message)
                if not cell._scheduled:
                    cell._scheduled = True
                    cell._system._schedule(cell)
                return
        self._tell_slow(message, sender)

    def _tell_hopped(self, message: Any, sender: ActorRef | None) -> None:
        """A tell made on another thread, now on the loop: nobody is left to raise to."""
        try:
            self.tell(message, sender)
        except MailboxFullError:
            self._cell._system._dead_letter(message, sender, self, DeadLetterReason.REJECTED)

    def _tell_slow(self, message: Any, sender: ActorRef | None) -> None:
        """The PoisonPill, a tell with a sender, or a mailbox that is not a plain one."""
        cell = self._cell
        system = cell._system
        if _get_ident() != system._loop_thread:
            if not system._hop(self._tell_hopped, message, sender):
                system._dead_letters += 1  # the loop is closed: counted, nobody to publish to
            return
        if message is PoisonPill:
            self.stop()
            return
        if sender is None and not isinstance(message, Envelope):
            cell._mailbox.post(message)  # bare: post() takes anything but an Envelope
        else:
            cell._mailbox.enqueue(Posted(message, sender))
        if not cell._scheduled:
            cell._scheduled = True
            system._schedule(cell)

    def ask(self, message: M, timeout: float | None = 5.0) -> asyncio.Future[R]:
        """Send ``message`` now; return a future of the handler's return value (or the
        value passed to context.reply). ``await ref.ask(x)`` is the usual spelling.

        The message is queued before this returns, so ``f = ref.ask(a); ref.tell(b)``
        delivers ``a`` first. ``timeout=None`` waits without a deadline. The future fails
        with the handler's exception if it failed, :class:`AskTimeoutError` after
        ``timeout`` seconds, :class:`ActorStoppedError` if the actor is or becomes stopped
        first, :class:`MailboxFullError` from a full ``reject`` mailbox,
        :class:`AskDeadlockError` when an actor asks itself. A timeout that is not a
        positive number raises :class:`InvalidTimeoutError` (a ValueError) at once, before
        anything is sent. From a thread other than the loop's it returns a
        :class:`concurrent.futures.Future` instead.
        """
        if type(timeout) is not float or not timeout > 0:  # the default passes at once
            timeout = check_timeout(timeout)
        cell = self._cell
        system = cell._system
        if _get_ident() != system._loop_thread:
            return self._ask_from_thread(message, timeout)  # type: ignore[return-value]
        future: asyncio.Future[R] = system._create_future()
        if cell._terminated:
            system._fail_reply(future, cell)
            return future
        if system._running is cell or (
            cell._task is not None and cell._task is asyncio.current_task()
        ):
            future.set_exception(
                AskDeadlockError(
                    f"{cell.path} asked itself from inside its own handler; the reply could "
                    "only come after the handler returns. Use tell, or context.reply."
                )
            )
            return future
        queue = cell._queue
        if queue is not None:  # plain Mailbox: enqueue, inlined
            queue.append(Posted(message, None, future))
            if len(queue) >= cell._mailbox._next_warn:
                cell._mailbox._grew(len(queue))
        else:
            try:
                cell._mailbox.enqueue(Posted(message, None, future))
            except MailboxFullError as full:
                future.set_exception(full)
                return future
        if not cell._scheduled:
            cell._scheduled = True
            system._schedule(cell)
        if timeout != _INF:
            system._ask_timeouts.track(future, self, message, timeout)
        return future

    def _ask_from_thread(self, message: Any, timeout: float) -> concurrent.futures.Future[Any]:
        # Its own method: a closure in ask() would slow down every ask.
        return from_thread(self._cell._system, lambda: self.ask(message, timeout))

    def stop(self) -> asyncio.Future[None]:
        """Graceful stop: a PoisonPill behind the messages already queued.

        Returns a future that completes once the actor has terminated (``post_stop``
        ran); awaiting it is optional. The pill is exempt from overflow policies, so this
        never raises and is never lost. From another thread it returns a
        :class:`concurrent.futures.Future`.
        """
        cell = self._cell
        system = cell._system
        if _get_ident() != system._loop_thread:
            return from_thread(system, self.stop)  # type: ignore[return-value]
        if not cell._terminated:
            cell._mailbox.enqueue(PostedExempt(PoisonPill, None))
            if not cell._scheduled:
                cell._scheduled = True
                system._schedule(cell)
        return cell._termination()

    def tell_durable(self, message: Any, sender: ActorRef | None = None) -> Awaitable[None]:
        """``tell``, returning an awaitable that completes once the message is stored.

        For an actor with a durable mailbox it completes when the store has the message
        on disk (and raises the store's error if the write failed); for any other actor
        the message is queued as by ``tell`` and the awaitable is already complete. To a
        stopped actor it is a dead letter, and the awaitable raises ActorStoppedError.
        """
        cell = self._cell
        write = getattr(cell._mailbox, "write_durable", None)
        if write is not None:
            result: Awaitable[None] = write(message, sender)
            return result
        self.tell(message, sender)
        done: asyncio.Future[None] = cell._system._loop.create_future()
        if cell._terminated:  # it became a dead letter: nothing was stored
            done.set_exception(ActorStoppedError(f"{cell.path} is stopped"))
        else:
            done.set_result(None)
        return done

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
        # by path: a remote ref to the same actor (equal by address) hashes the same
        return hash(self._cell.path)

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


def from_thread(
    system: ActorSystem, call: Callable[[], asyncio.Future[Any]]
) -> concurrent.futures.Future[Any]:
    """Run ``call`` on the system's loop; a concurrent future for the asyncio future it returns.

    For ``ask`` and ``stop`` made from a thread other than the loop's. A caller that
    cancels the concurrent future before the hop has run sends nothing.
    """
    answer: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def on_loop() -> None:
        if not answer.set_running_or_notify_cancel():
            return
        try:
            pending = call()
        except Exception as error:
            answer.set_exception(error)
            return
        pending.add_done_callback(lambda done: _copy_outcome(done, answer))

    if not system._hop(on_loop):
        answer.set_exception(ActorStoppedError(f"actor system {system.name!r} is closed"))
    return answer


def _copy_outcome(source: asyncio.Future[Any], target: concurrent.futures.Future[Any]) -> None:
    """Complete a concurrent future (held by another thread) like ``source`` completed."""
    if target.done():
        return
    if source.cancelled():
        target.set_exception(concurrent.futures.CancelledError())
    elif (error := source.exception()) is not None:
        target.set_exception(error)
    else:
        target.set_result(source.result())
