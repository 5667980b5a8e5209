"""ActorSystem: the root of an actor hierarchy, its guardian, dead letters and metrics."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

from dovecote._clock import Clock, SystemClock
from dovecote._errors import ActorStoppedError, ShutdownTimeoutError
from dovecote.actors import _lifecycle, _resolve, _shutdown, _stopping
from dovecote.actors._actor import Actor
from dovecote.actors._ask_timeouts import AskTimeouts
from dovecote.actors._blocking_cell import BlockingActorCell  # noqa: F401 (registers it)
from dovecote.actors._cell import ActorCell
from dovecote.actors._envelope_kinds import is_runtime_envelope
from dovecote.actors._event_stream import EventStream
from dovecote.actors._guardian import make_guardian
from dovecote.actors._messages import DeadLetter, DeadLetterReason, PoisonPill
from dovecote.actors._metrics_wiring import MailboxSizes
from dovecote.actors._options import ActorOptions
from dovecote.actors._ref import ActorRef, check_timeout
from dovecote.actors._remote_seam import (
    RemoteConfig,
    RemoteTransport,
    cluster_of,
    remote_config,
)
from dovecote.actors._system_messages import DrainBarrier
from dovecote.actors._system_options import check_system_options
from dovecote.actors._type_params import M, R
from dovecote.dispatch import DEFAULT_SLICE, DEFAULT_THROUGHPUT, BlockingExecutor, TurnQueue
from dovecote.observability import ClassStats, RuntimeMetrics, get_logger
from dovecote.supervision import OneForOneStrategy, SupervisorStrategy

if TYPE_CHECKING:
    from dovecote.actors._post import ActorMailProvider
    from dovecote.addressing import PostOffice

__all__ = ["ActorSystem"]

_log = get_logger("dovecote.system")


class ActorSystem:
    """A tree of actors under one name, living on the running event loop.

    Create it inside a coroutine (``async with ActorSystem("shop") as system:``); leaving
    the block shuts it down. ``throughput`` is how many messages an actor handles per
    turn before yielding to other actors (``1`` is fairest, larger is faster).
    Turns run back to back inside one event-loop callback; ``dispatch_slice`` is how
    many seconds of them may run before the event loop gets control back (other
    tasks, I/O, timers). ``metrics_sample_every=N`` times about one message in N for
    ``actor_message_seconds``: once N messages have gone by, the first message of the
    next turn is timed (at most one per turn; ``1`` times every message).
    ``interrupt_timeout`` is the shutdown timeout used when the system stops because the
    ``async with`` block was cancelled (Ctrl-C) or a ``BaseException`` that is not an
    ``Exception`` (``SystemExit``...) escaped an actor; that exception is then re-raised
    from the ``async with`` block (and from ``dovecote.run``).

    ``remote="nats://host:4222"`` (or a config object such as
    ``dovecote.remote.NatsRemote(...)``) joins other processes: see docs/remote.md.
    """

    def __init__(
        self,
        name: str = "default",
        *,
        host: str = "local",
        throughput: int = DEFAULT_THROUGHPUT,
        guardian_strategy: SupervisorStrategy | None = None,
        metrics_sample_every: int = 32,
        blocking_workers: int | None = None,
        clock: Clock | None = None,
        dead_letter_log_limit: int = 10,
        dispatch_slice: float = DEFAULT_SLICE,
        interrupt_timeout: float = 1.0,
        remote: str | RemoteConfig | None = None,
    ) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "ActorSystem must be created inside a running event loop "
                "(e.g. in `async def main()` run by dovecote.run or asyncio.run)"
            ) from None
        self._interrupt_timeout = check_system_options(
            name,
            host,
            throughput,
            dispatch_slice,
            guardian_strategy,
            blocking_workers,
            dead_letter_log_limit,
            clock,
            interrupt_timeout,
        )
        self._name = name
        self._host = host.lower()
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self._call_soon = loop.call_soon
        self._call_soon_threadsafe = loop.call_soon_threadsafe
        self._create_future = loop.create_future
        self._turns = TurnQueue(loop, float(dispatch_slice))
        self._schedule = self._turns.schedule
        self._throughput = throughput
        self._guardian_strategy = guardian_strategy or OneForOneStrategy()
        self.clock: Clock = clock if clock is not None else SystemClock()
        self._ask_timeouts = AskTimeouts(self.clock)
        self.metrics = RuntimeMetrics(name, sample_every=metrics_sample_every)
        self.metrics.set_mailbox_size_source(MailboxSizes(self))
        self._sample_every = self.metrics.sample_every
        self._sample_countdown = 0 if self._sample_every == 1 else self._sample_every
        self.event_stream = EventStream()
        self._address_prefix = f"mem://{name}@{self._host}"
        # Linked to other processes (remote=...): addresses take the transport's scheme.
        self._remote: RemoteTransport | None = None
        if remote is not None:
            self._remote = remote_config(remote).open_transport(self)
            self._address_prefix = f"{self._remote.scheme}://{name}@{self._host}"
        self._uids = itertools.count(1)
        self._factory_stats: dict[Any, tuple[str, ClassStats]] = {}
        # New cells wait here for their first turn; one loop callback starts them in
        # spawn order, a batch at a time (one callback instead of one per spawn).
        self._starting: deque[ActorCell] = deque()
        self._running: ActorCell | None = None
        self._dead_letters = 0
        self._dead_letter_log_limit = dead_letter_log_limit
        self._blocking = BlockingExecutor(blocking_workers)
        self._shutting_down = False
        self._shutdown_finished: asyncio.Future[None] | None = None
        self._done: asyncio.Future[None] = loop.create_future()
        # Why actors stopped, while they stop: the error for ActorStopped and for the
        # ActorStoppedError of the asks they leave unanswered (only failures are here).
        self._stop_errors: dict[ActorCell, BaseException] = {}
        # A BaseException that escaped an actor: the system stops and re-raises it.
        self._fatal_error: BaseException | None = None
        self._fatal_stop: asyncio.Task[None] | None = None
        self._owner = asyncio.current_task()  # cancelled after a fatal error; see __aenter__
        self._exiting = False
        self._post_office: PostOffice | None = None
        self._unhandled_warned: dict[tuple[str, type], list[float]] = {}
        self._mail_provider: ActorMailProvider | None = None
        self._guardian = make_guardian(self, next(self._uids))

    # -- public surface ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The system's name (the ``user`` part of every actor address)."""
        return self._name

    @property
    def host(self) -> str:
        """The host part of every actor address (``local`` by default)."""
        return self._host

    @property
    def dead_letters_count(self) -> int:
        """How many messages have gone to dead letters so far."""
        return self._dead_letters

    @property
    def is_shut_down(self) -> bool:
        """True once :meth:`shutdown` has begun."""
        return self._shutting_down

    @property
    def cluster(self) -> Any:
        """The cluster this system joined with ``remote=...`` (``members``, ...)."""
        return cluster_of(self)

    async def start(self) -> None:
        """Join the remote transport (``remote=...``); ``async with`` calls it. Idempotent."""
        if self._remote is not None:
            await self._remote.start()

    @property
    def post_office(self) -> PostOffice:
        """The system's post office, with a MemoryProvider for ``mem`` addresses."""
        if self._post_office is None:
            from dovecote.actors._post import make_post_office

            self._post_office, self._mail_provider = make_post_office(self)
        return self._post_office

    def spawn(
        self,
        factory: Callable[[], Actor[M, R]],
        name: str | None = None,
        options: ActorOptions | None = None,
    ) -> ActorRef[M, R]:
        """Start a top-level actor under ``/user`` and return its ref at once.

        ``factory`` is an Actor subclass or a zero-argument callable returning an Actor;
        it is called again for every restart. Errors in the factory or ``pre_start`` go
        to the supervisor, not out of ``spawn``.
        """
        return _lifecycle.spawn(self._guardian, factory, name, options)

    def stop(self, ref: ActorRef) -> asyncio.Future[None]:
        """Stop ``ref`` now, from outside any actor (like ``context.stop``).

        The message in progress finishes; what is still queued becomes dead letters.
        Use ``ref.stop()`` instead to let the queue drain first. Returns a future that
        completes once the actor has terminated (a concurrent one from another thread).
        """
        if not isinstance(ref, ActorRef):
            raise TypeError("stop() takes an ActorRef")
        return _stopping.stop_now(ref._cell)

    def resolve(self, address_or_path: str) -> ActorRef:
        """Find a live actor by path (``/user/a/b``) or address (``mem://sys@host/user/a/b``)."""
        return _resolve.resolve(self, address_or_path)

    async def shutdown(self, *, drain: bool = False, timeout: float | None = 10.0) -> None:
        """Stop every actor, children before parents; idempotent.

        ``drain=False``: each actor finishes its current message, the rest of its queue
        becomes dead letters. ``drain=True``: each actor first handles what was already
        queued. After ``timeout`` seconds (None: no limit), handlers still running are
        cancelled; if actors are still running :data:`SHUTDOWN_GRACE` seconds later,
        :class:`ShutdownTimeoutError` names them. A call made while a shutdown is under
        way waits for it; one made after it returns at once.
        """
        seconds = check_timeout(timeout, "shutdown timeout")
        if self._shutdown_finished is not None:
            await asyncio.shield(self._shutdown_finished)
            return
        self._shutting_down = True
        finished = self._shutdown_finished = self._loop.create_future()
        try:
            await _shutdown.shut_down(self, drain, seconds)
        finally:
            finished.set_result(None)

    async def __aenter__(self) -> ActorSystem:
        self._owner = asyncio.current_task()
        try:
            await self.start()
        except BaseException:
            await self.shutdown()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._exiting = True
        interrupted = exc_type is not None and issubclass(
            exc_type, (asyncio.CancelledError, KeyboardInterrupt)
        )
        if interrupted or self._fatal_error is not None:
            try:
                await self.shutdown(timeout=self._interrupt_timeout)
            except ShutdownTimeoutError as error:
                _log.warning("shutdown after an interrupt timed out", actors=error.actors[:10])
        else:
            await self.shutdown()
        if self._fatal_error is not None:
            raise self._fatal_error

    def _fatal(self, error: BaseException) -> None:
        """A BaseException escaped an actor: stop the system, re-raise it where it was entered."""
        _shutdown.fatal(self, error)

    def __repr__(self) -> str:
        return f"ActorSystem({self._address_prefix!r})"

    # -- runtime plumbing (refs and cells call these per message: they stay methods) ---------
    def _walk(self) -> Iterator[ActorCell]:
        """Every user actor cell, parents before children."""
        stack = list(self._guardian._children.values()) if self._guardian._children else []
        while stack:
            cell = stack.pop()
            yield cell
            if cell._children:
                stack.extend(cell._children.values())

    def _start_pending(self) -> None:
        starting = self._starting
        for _ in range(self._throughput):
            if not starting:
                return
            starting[0]._start()
            starting.popleft()
        if starting:
            self._call_soon(self._start_pending)

    def _root_terminated(self) -> None:
        if not self._done.done():
            self._done.set_result(None)

    def _class_stats(self, class_name: str) -> ClassStats:
        return self.metrics.class_stats(class_name)

    def _orphaned(self, cell: ActorCell, queue: deque[Any]) -> None:
        """A tell from another thread appended to a queue that a stop or restart had just
        swapped out: move what was left there, on the loop."""
        if threading.get_ident() != self._loop_thread:
            if not self._hop(self._orphaned, cell, queue):
                self._dead_letters += len(queue)  # the loop is closed: counted, never run
            return
        _lifecycle.adopt_orphans(cell, queue)

    def _hop(self, callback: Callable[..., object], *args: Any) -> bool:
        """From another thread: run ``callback(*args)`` on the loop (waking it); False if
        the loop is closed."""
        try:
            self._call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the event loop is closed: the system is gone
            return False
        return True

    def _publish_lifecycle(self, event_type: type, cell: ActorCell, *args: Any) -> None:
        stream = self.event_stream
        if stream._subs and stream.has_subscribers(event_type):
            stream.publish(event_type(cell._ref, *args))

    def _dead_letter(
        self, message: Any, sender: ActorRef | None, recipient: ActorRef | None, reason: str
    ) -> None:
        self._dead_letters += 1
        self.metrics.record_dead_letter(reason)
        if self._dead_letters <= self._dead_letter_log_limit:
            _log.info(
                "dead letter",
                message_type=type(message).__name__,
                recipient=recipient.path if recipient is not None else None,
                reason=reason,
            )
            if self._dead_letters == self._dead_letter_log_limit:
                _log.info("further dead letters are counted and published, not logged")
        stream = self.event_stream
        if stream._subs:
            stream.publish(DeadLetter(message, sender, recipient, reason))

    def _lose(self, item: Any, cell: ActorCell, reason: str) -> None:
        """A queued message will never be handled: fail its ask, record a dead letter.

        A letter from the post office is not lost: failing its delivery puts it back in
        its address's queue, so it is not a dead letter.
        """
        if not is_runtime_envelope(item):
            self._dead_letter(item, None, cell._ref, reason)
            return
        message = item.message
        if message is PoisonPill:
            return  # stopping a stopped actor is a no-op, not a lost message
        if type(message) is DrainBarrier:
            message.callback(cell)  # a stopped actor has nothing left to drain
            return
        if item.reply is not None:
            self._fail_reply(item.reply, cell)
            if self._mail_provider is not None and hasattr(item, "letter"):
                return
        self._dead_letter(item.message, item.sender, cell._ref, reason)

    def _fail_reply(self, reply: asyncio.Future[Any], cell: ActorCell) -> None:
        if not reply.done():
            error = ActorStoppedError(f"{cell.path} stopped before it answered")
            cause = self._stop_errors.get(cell)
            if cause is not None:
                error.__cause__ = cause
            reply.set_exception(error)

    def _deliver_reply(
        self,
        reply: asyncio.Future[Any],
        value: Any,
        sender: ActorRef | None,
        recipient: ActorRef | None,
    ) -> None:
        if threading.get_ident() != self._loop_thread:
            self._hop(self._deliver_reply, reply, value, sender, recipient)
            return
        if reply.done():
            self._dead_letter(value, sender, recipient, DeadLetterReason.LATE_REPLY)
        else:
            reply.set_result(value)
