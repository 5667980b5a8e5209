"""The ActorContext half of a cell: what an actor does about itself from its handlers.

:class:`ContextImpl` holds the context methods (children, sender, reply, stash, become,
watch, timers); :class:`~dovecote.actors._handler_calls.HandlerCalls` adds the handler
calls and :class:`~dovecote.actors._cell.ActorCell` the mailbox and the turn.
The attributes below are the cell's slots, declared here so each half type-checks alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from dovecote._errors import ActorStoppedError
from dovecote.actors import _death_watch, _lifecycle, _stopping, _timers
from dovecote.actors._context import ActorContext
from dovecote.actors._envelope_kinds import IDLE, is_runtime_envelope
from dovecote.actors._messages import DeadLetterReason
from dovecote.actors._ref import ActorRef, ReplyRef
from dovecote.actors._type_params import M, R
from dovecote.mailboxes import Envelope, Mailbox

if TYPE_CHECKING:
    import asyncio

    from dovecote.actors._actor import Actor
    from dovecote.actors._cell import ActorCell
    from dovecote.actors._options import ActorOptions
    from dovecote.actors._system import ActorSystem
    from dovecote.actors._timers import Cancellable

__all__ = ["ContextImpl"]


class ContextImpl(ActorContext):
    """The context methods of an actor cell."""

    __slots__ = (
        "_actor",
        "_behavior",
        "_behavior_stack",
        "_children",
        "_current",
        "_mailbox",
        "_parent",
        "_ref",
        "_replied",
        "_scheduled",
        "_stash",
        "_system",
    )

    _system: ActorSystem
    _parent: ActorCell | None
    _ref: ActorRef
    _actor: Actor | None
    _mailbox: Mailbox
    _children: dict[str, ActorCell] | None
    _current: Any
    _replied: bool
    _scheduled: bool
    _stash: list[Any] | None
    _behavior: Callable[[Any], Any]
    _behavior_stack: list[Callable[[Any], Any]] | None

    def _run(self) -> None:
        raise NotImplementedError

    # -- replies -----------------------------------------------------------------------------
    def _reply(self, message: Any) -> None:
        env = self._current
        if not is_runtime_envelope(env):
            self._system._dead_letter(message, self._ref, None, DeadLetterReason.NO_RECIPIENT)
        elif env.sender is not None:
            env.sender.tell(message, self._ref)
        elif env.reply is not None:
            self._replied = True
            self._system._deliver_reply(env.reply, message, self._ref, self._ref)
        else:
            self._system._dead_letter(message, self._ref, None, DeadLetterReason.NO_RECIPIENT)

    def _sender(self) -> ActorRef | None:
        env = self._current
        if not is_runtime_envelope(env):
            return None
        sender: ActorRef | None = env.sender
        if sender is not None:
            return sender
        if env.reply is not None and not hasattr(env, "letter"):
            return ReplyRef(cast("ActorCell", self), env.reply)
        return None


    # -- ActorContext ------------------------------------------------------------------------
    @property
    def self(self) -> ActorRef:
        return self._ref

    @property
    def parent(self) -> ActorRef | None:
        return self._parent._ref if self._parent is not None else None

    @property
    def children(self) -> tuple[ActorRef, ...]:
        children = self._children
        return tuple(c._ref for c in children.values()) if children else ()

    @property
    def system(self) -> ActorSystem:
        return self._system

    @property
    def sender(self) -> ActorRef | None:
        return self._sender()

    def spawn(
        self,
        factory: Callable[[], Actor[M, R]],
        name: str | None = None,
        options: ActorOptions | None = None,
    ) -> ActorRef[M, R]:
        return _lifecycle.spawn(cast("ActorCell", self), factory, name, options)

    def stop(self, ref: ActorRef) -> asyncio.Future[None]:
        return _stopping.stop_now(ref._cell)

    def watch(self, ref: ActorRef) -> ActorRef:
        _death_watch.watch(cast("ActorCell", self), ref)
        return ref

    def unwatch(self, ref: ActorRef) -> ActorRef:
        _death_watch.unwatch(cast("ActorCell", self), ref)
        return ref

    def stash(self) -> None:
        env = self._current
        if env is IDLE:
            raise RuntimeError("stash() can only be called while handling a message")
        if is_runtime_envelope(env) and env.reply is not None:
            if env.reply.done():
                raise RuntimeError("cannot stash a message that was already answered")
            self._replied = True  # the handler's return value must not answer it now
        if self._stash is None:
            self._stash = []
        self._stash.append(env)

    def unstash_all(self) -> None:
        stash = self._stash
        if stash:
            self._stash = None
            self._mailbox.prepend_user(stash)
            if not self._scheduled:
                self._scheduled = True
                self._system._schedule(cast("ActorCell", self))

    def become(self, handler: Callable[[Any], Any], *, discard_old: bool = True) -> None:
        if not callable(handler):
            raise TypeError("become() needs a callable taking one message")
        stack = self._behavior_stack
        if stack is None:
            stack = self._behavior_stack = []
        if discard_old and stack:
            stack[-1] = handler
        else:
            stack.append(handler)
        self._behavior = handler

    def unbecome(self) -> None:
        stack = self._behavior_stack
        if stack:
            stack.pop()
        if stack:
            self._behavior = stack[-1]
        elif self._actor is not None:
            self._behavior = self._actor.on_receive

    def schedule_once(
        self, delay: float, message: Any, target: ActorRef | None = None
    ) -> Cancellable:
        return _timers.schedule(cast("ActorCell", self), delay, None, message, target)

    def schedule_repeatedly(
        self, initial_delay: float, interval: float, message: Any, target: ActorRef | None = None
    ) -> Cancellable:
        return _timers.schedule(cast("ActorCell", self), initial_delay, interval, message, target)

    def forward(self, ref: ActorRef) -> None:
        env = self._current
        if env is IDLE:
            raise RuntimeError("forward() can only be called while handling a message")
        if not is_runtime_envelope(env):
            ref.tell(env)
            return
        if env.reply is not None:
            self._replied = True  # the target answers the ask now, not our return value
        target = ref._cell
        if target._terminated:
            ref.tell(env.message, env.sender)  # dead-lettered with the usual accounting
            if env.reply is not None and not env.reply.done():
                env.reply.set_exception(ActorStoppedError(f"{target.path} is stopped"))
            return
        target._enqueue(env)

    def reply(self, message: Any) -> None:
        self._reply(message)

    # -- plumbing used by the concern modules --------------------------------------------------
    def _send_system(self, message: object) -> None:
        self._mailbox.enqueue_system(message)
        if not self._scheduled:
            self._scheduled = True
            self._system._schedule(cast("ActorCell", self))

    def _enqueue(self, env: Envelope) -> None:
        self._mailbox.enqueue(env)
        if not self._scheduled:
            self._scheduled = True
            self._system._schedule(cast("ActorCell", self))
