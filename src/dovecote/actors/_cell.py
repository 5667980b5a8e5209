"""ActorCell: owns one actor's mailbox, state and turn on the event loop.

Invariants (they are what make "one message at a time" true without locks):

* ``_scheduled`` is True from the moment a turn is queued with ``call_soon`` until
  the turn ends with an empty mailbox. While it is True nobody schedules another
  turn, so at most one turn exists per actor. (A tell from another thread may race the
  end of a turn and queue a spare one; ``_run`` returns at once from a spare turn while
  the real one awaits, and ``_go_idle`` looks at the queue once more after clearing it.)
* ``_awaiting`` is True while a handler (or hook) that really awaited runs in a
  task, or a blocking handler runs on a thread. ``_scheduled`` stays True meanwhile,
  so new messages only queue; the task's completion continues the turn.
* ``_suspended`` is True while a failure waits for the supervisor: system messages
  are still processed, user messages are not.
* Once ``_terminated`` is set the mailbox is a dead-letter sink and never drained.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dovecote.actors import _envelope_kinds, _fault_handling, _lifecycle
from dovecote.actors._envelope_kinds import IDLE
from dovecote.actors._handler_calls import HandlerCalls
from dovecote.actors._hosted_mailbox import notify_attached
from dovecote.actors._metrics_wiring import DropCounter
from dovecote.actors._ref import ActorRef
from dovecote.dispatch import CoroutineType
from dovecote.mailboxes import BoundedMailbox, Mailbox
from dovecote.observability import get_logger

if TYPE_CHECKING:
    import structlog

    from dovecote.actors._actor import Actor
    from dovecote.actors._options import ActorOptions
    from dovecote.actors._system import ActorSystem
    from dovecote.actors._timers import Cancellable
    from dovecote.observability import ClassStats
    from dovecote.supervision import RestartStats

__all__ = ["ActorCell"]

_perf = time.perf_counter

_base_take = Mailbox.take


class ActorCell(HandlerCalls):
    """The runtime half of an actor: its mailbox, state and turns on the event loop.

    It is also the actor's :class:`ActorContext` (see :class:`ContextImpl`); calling the
    handler for one message is :class:`HandlerCalls`.
    """

    __slots__ = (
        "_bounded",
        "_children_waiter",
        "_class_name",
        "_factory",
        "_log",
        "_name",
        "_options",
        "_queue",
        "_restart_stats",
        "_stats",
        "_stop_requested",
        "_stopped",
        "_stopping_children",
        "_suspended",
        "_terminated",
        "_terminating",
        "_throughput",
        "_timers",
        "_uid",
        "_watchers",
        "_watching",
        "path",
    )

    def __init__(
        self,
        system: ActorSystem,
        parent: ActorCell | None,
        name: str,
        path: str,
        factory: Callable[[], Actor],
        options: ActorOptions,
        mailbox: Mailbox,
        uid: int,
    ) -> None:
        self._system = system
        self._parent = parent
        self._name = name
        self.path = path
        self._factory = factory
        self._options = options
        self._mailbox = mailbox
        self._uid = uid
        self._ref = ActorRef(self)
        # The user deque of a plain Mailbox, for the fast paths (tell, ask, the inlined
        # drain); None for other mailboxes and for cells that drain their own way. Set by
        # _attach_mailbox, at spawn and on restart.
        self._queue: deque[Any] | None = None
        # The mailbox when it is a BoundedMailbox (tell's second fast path), else None.
        self._bounded: BoundedMailbox | None = None
        self._throughput = options.throughput or system._throughput
        self._actor: Actor | None = None
        self._behavior: Callable[[Any], Any] = _not_started
        self._behavior_stack: list[Callable[[Any], Any]] | None = None
        self._scheduled = False
        self._awaiting = False
        self._suspended = False
        self._terminating = False
        self._terminated = False
        self._stop_requested = False
        self._stopping_children = 0  # children with a stop requested, not yet gone
        # None, the future handed out by stop() (done once gone), or True once gone
        self._stopped: asyncio.Future[None] | bool | None = None
        self._current: Any = IDLE  # the item being handled (an Envelope or a bare message)
        self._stepped: Any = None
        self._replied = False
        self._task: asyncio.Future[Any] | None = None
        self._children: dict[str, ActorCell] | None = None
        self._children_waiter: Callable[[], None] | None = None
        self._watchers: set[ActorCell] | None = None
        self._watching: set[ActorCell] | None = None
        self._timers: set[Cancellable] | None = None
        self._stash: list[Any] | None = None
        self._stats: ClassStats | None = None
        self._class_name = ""
        self._restart_stats: RestartStats | None = None
        self._log: structlog.typing.FilteringBoundLogger | None = None

    # -- identity --------------------------------------------------------------------------
    @property
    def address(self) -> str:
        """``mem://<system>@<host><path>``."""
        return self._system._address_prefix + self.path

    @property
    def log(self) -> structlog.typing.FilteringBoundLogger:
        """Logger bound with path and actor class (made on first use)."""
        if self._log is None:
            self._log = get_logger("dovecote.actor", path=self.path, actor_class=self._class_name)
        return self._log

    def __repr__(self) -> str:
        return f"<ActorCell {self.path}>"

    def _termination(self) -> asyncio.Future[None]:
        """A future that completes once this actor is gone (``post_stop`` ran)."""
        stopped = self._stopped
        if stopped is None or stopped is True:
            future = self._system._loop.create_future()
            if stopped is True:
                future.set_result(None)
            else:
                self._stopped = future
            return future
        return stopped  # type: ignore[return-value]

    def _attach_mailbox(self, mailbox: Mailbox) -> None:
        """Attach ``mailbox`` (at spawn and on restart): its owner, the fast-path queue,
        drop counting, and a hosted mailbox's host."""
        mailbox.owner = self.path
        plain_cell = type(self) is ActorCell
        if type(mailbox) is Mailbox:
            # the fast paths (tell, ask, the inlined drain) are for event-loop cells only
            self._queue = mailbox._user if plain_cell else None
            self._bounded = None
            return
        self._queue = None
        self._bounded = mailbox if plain_cell and type(mailbox) is BoundedMailbox else None
        observe = getattr(mailbox, "observe_drops", None)
        if observe is not None:
            observe(DropCounter(self))
        notify_attached(self, mailbox)  # a hosted (durable) mailbox learns its actor

    # -- the turn ----------------------------------------------------------------------------
    def _start(self) -> None:
        """First turn: create the instance, then process whatever already arrived."""
        _lifecycle.start(self)

    def _run(self) -> None:
        """One dispatcher turn: system messages first, then up to ``throughput`` user ones.

        The user part is inlined here (it is the hot path of every tell and ask): it hands
        out the messages queued when it looks, and comes back to the top of the loop for
        whatever must be seen before the next one (a system message, a failure, an await).
        """
        if self._awaiting or self._terminated:
            return  # a spare turn (two threads scheduled it at once): the real one goes on
        self._scheduled = True
        system = self._system
        outer = system._running
        system._running = self
        budget = self._throughput
        done = 0
        try:
            while True:
                mailbox = self._mailbox
                if mailbox._system is not None:  # documented: None whenever empty
                    if self._system_step(mailbox):
                        return
                    continue
                if self._suspended or done >= budget:
                    break
                # Mailboxes that keep the base take() (Mailbox, BoundedMailbox) hand out
                # items straight from their deque, and their length is the deque's.
                user = self._queue  # set for a plain Mailbox
                if user is None and type(mailbox).take is _base_take:
                    user = mailbox._user
                take = mailbox.take if user is None else user.popleft
                empty = stop = False
                item: Any = IDLE
                envelopes = _envelope_kinds.RUNTIME_TYPES
                try:
                    if system._sample_countdown <= 0:
                        empty, stop = self._sample(mailbox)
                        if not empty:
                            done += 1
                        # with sample_every=1 every message comes through here
                        stop = stop or empty or system._sample_countdown <= 0
                    while not stop and done < budget:
                        end = done + (mailbox.user_count if user is None else len(user))
                        if end == done:
                            if user is None or mailbox._next_warn != mailbox.warn_threshold:
                                mailbox.take()  # re-arms the growth warning
                            empty = True
                            break
                        if end > budget:
                            end = budget
                        while done < end:  # what is queued now; later ones next round
                            done += 1
                            item = take()
                            if type(item) not in envelopes:
                                # the common case: a message told with no sender
                                self._current = item
                                result = self._behavior(item)
                                if type(result) is CoroutineType and not self._step(result):
                                    break
                            elif not item.exempt:
                                self._invoke(item)  # an ask, a tell with a sender, a letter
                                if self._awaiting or self._suspended:
                                    break
                            elif self._invoke_item(item):
                                break
                            if mailbox._system is not None:
                                break
                        else:
                            continue
                        break  # the inner loop broke off: back to the top of the turn
                except Exception as error:  # a bare message's handler raised
                    _fault_handling.handle_failure(self, item, error)
                except BaseException as error:
                    _fault_handling.handle_base_exception(self, self._current, error)
                if self._awaiting or self._terminated:
                    return
                if empty:
                    if self._mailbox._system is None:
                        self._go_idle()  # nothing left: the turn ends idle
                        return
                    continue
        finally:
            system._running = outer
            system._sample_countdown -= done
            if not self._awaiting:
                self._current = IDLE
            stats = self._stats
            if stats is not None:
                stats.processed += done
        mailbox = self._mailbox
        if mailbox._system is not None or (not self._suspended and mailbox.user_count):
            system._schedule(self)
        else:  # _go_idle, inlined (the end of every ask round trip)
            self._scheduled = False
            queue = self._queue
            if queue and not self._suspended and not self._scheduled:
                self._scheduled = True
                system._schedule(self)

    def _go_idle(self) -> None:
        """End the turn with nothing to do; the next tell schedules a new one.

        A tell from another thread may have queued a message between the last look at the
        queue and this: it saw ``_scheduled`` still True, so look once more.
        """
        self._scheduled = False
        queue = self._queue
        if queue and not self._suspended and not self._scheduled:
            self._scheduled = True
            self._system._schedule(self)

    def _system_step(self, mailbox: Mailbox) -> bool:
        """Handle one system message; True if the turn must end (awaiting or terminated)."""
        sys_env = mailbox.dequeue_system()
        if sys_env is not None:
            _lifecycle.process_system(self, sys_env.message)
        return self._awaiting or self._terminated

    def _sample(self, mailbox: Mailbox) -> tuple[bool, bool]:
        """Time the next message (sampling is due); returns (queue was empty, stop)."""
        if not mailbox.user_count:  # by count: whatever take() returns may be a message
            mailbox.take()  # re-arms the growth warning
            return True, False
        item = mailbox.take()
        system = self._system
        every = system._sample_every
        system._sample_countdown = 0 if every == 1 else every
        started = _perf()
        stop = self._invoke_item(item)
        stats = self._stats
        if not self._awaiting and stats is not None:  # an awaiting handler is not timed
            stats.observe_seconds(_perf() - started)
        return False, stop or mailbox._system is not None

    def _invoke_item(self, item: Any) -> bool:
        """The general path for one user item; True if the turn must stop here."""
        if type(item) not in _envelope_kinds.RUNTIME_TYPES:
            self._invoke_bare(item)
        elif item.exempt:
            self._invoke_exempt(item)
        else:
            self._invoke(item)
        return self._awaiting or self._terminated or self._suspended


def _not_started(message: Any) -> Any:
    raise RuntimeError("actor instance is not running")
