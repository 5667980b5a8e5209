"""Calling an actor's handler for one message: bare, enveloped (with its reply) or exempt
(PoisonPill, Terminated, drain barriers); inline, or in a task once it really awaits.

:class:`HandlerCalls` is the middle of the cell's class chain: :class:`ContextImpl` below
it, :class:`~dovecote.actors._cell.ActorCell` (the mailbox and the turn) above it. The
methods are inherited, so a call from the turn costs what a method of the cell would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from dovecote.actors import _fault_handling, _stopping
from dovecote.actors._context_impl import ContextImpl
from dovecote.actors._envelope_kinds import IDLE, is_runtime_envelope
from dovecote.actors._messages import PoisonPill, Terminated
from dovecote.actors._system_messages import DrainBarrier
from dovecote.dispatch import CoroutineType, Escaped, continue_in_task, guarded, step_inline
from dovecote.mailboxes import Envelope

if TYPE_CHECKING:
    import asyncio

    from dovecote.actors._cell import ActorCell

__all__ = ["HandlerCalls"]


class HandlerCalls(ContextImpl):
    """The handler-calling methods of an actor cell, and the slots they own."""

    __slots__ = ("_awaiting", "_stepped", "_task")

    _awaiting: bool
    _stepped: Any
    _task: asyncio.Future[Any] | None
    _terminated: bool
    _watching: set[ActorCell] | None

    def _invoke_bare(self, message: Any) -> None:
        """A message told with no sender: the common case, no envelope, no reply."""
        self._current = message
        try:
            result = self._behavior(message)
            if type(result) is CoroutineType and not self._step(result):
                return
        except Exception as error:
            self._current = IDLE
            _fault_handling.handle_failure(cast("ActorCell", self), message, error)
            return
        self._current = IDLE

    def _invoke(self, env: Envelope) -> None:
        self._current = env
        try:
            result = self._behavior(env.message)
            if type(result) is CoroutineType:
                if not self._step(result):
                    return
                result = self._stepped
                self._stepped = None
        except Exception as error:
            self._current = IDLE
            _fault_handling.handle_failure(cast("ActorCell", self), env, error)
            return
        self._current = IDLE
        reply = env.reply
        if reply is not None:
            if self._replied:
                self._replied = False
            elif reply.done():  # the ask timed out (or was cancelled): a late reply
                self._system._deliver_reply(reply, result, None, self._ref)
            else:  # on the loop thread: blocking cells override _invoke
                reply.set_result(result)

    def _step(self, coro: Any) -> bool:
        """Run an async handler inline; True if it finished (value in ``_stepped``).

        If it really awaits, a task takes over and False is returned.
        """
        actor = self._actor
        if actor is not None and not actor.inline_async_start:
            self._await(self._system._loop.create_task(guarded(coro)))
            return False
        finished, value = step_inline(coro)
        if finished:
            self._stepped = value
            return True
        self._await(continue_in_task(self._system._loop, coro, value))
        return False

    def _await(self, task: asyncio.Future[Any]) -> None:
        """The handler really awaits: let the task finish it, then continue the turn."""
        self._awaiting = True
        self._task = task
        task.add_done_callback(self._handler_done)

    def _handler_done(self, task: asyncio.Future[Any]) -> None:
        item = self._current
        self._current = IDLE
        replied = self._replied
        self._replied = False
        self._awaiting = False
        self._task = None
        reply = item.reply if is_runtime_envelope(item) else None
        if item is not IDLE:
            if task.cancelled():
                # only a forced stop cancels a handler: the asker learns the actor stopped
                if reply is not None:
                    self._system._fail_reply(reply, cast("ActorCell", self))
            elif (error := task.exception()) is not None:
                if isinstance(error, Exception):
                    _fault_handling.handle_failure(cast("ActorCell", self), item, error)
                else:
                    _fault_handling.handle_base_exception(cast("ActorCell", self), item, error)
            elif type(result := task.result()) is Escaped:
                _fault_handling.handle_base_exception(cast("ActorCell", self), item, result.error)
            elif reply is not None and not replied:
                self._system._deliver_reply(reply, result, None, self._ref)
        if not self._terminated:
            self._run()

    def _invoke_exempt(self, env: Envelope) -> None:
        message = env.message
        if message is PoisonPill:
            _stopping.begin_stop(cast("ActorCell", self))
            return
        if type(message) is DrainBarrier:
            message.callback(self)
            return
        if type(message) is Terminated:
            watching = self._watching
            target = message.ref._cell
            if watching is None or target not in watching:
                return  # unwatched after it was queued: not delivered
            watching.discard(target)
        elif getattr(env, "withdrawn", False):
            return  # a post-office letter whose delivery was given up and requeued
        self._invoke(env)
