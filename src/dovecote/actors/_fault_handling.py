"""Failures: a child reports, the parent's strategy decides, the decision is applied."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from dovecote._errors import ActorInitializationError
from dovecote.actors._envelope_kinds import IDLE, is_runtime_envelope
from dovecote.actors._hosted_mailbox import notify_decision
from dovecote.actors._system_messages import RESUME, Failed, Restart
from dovecote.supervision import Directive, RestartStats, SupervisorStrategy

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell

__all__ = ["handle_base_exception", "handle_failure", "is_fatal", "report", "supervise"]


def is_fatal(error: BaseException) -> bool:
    """A BaseException that stops the whole system: not an Exception, not a cancellation."""
    return not isinstance(error, (Exception, asyncio.CancelledError))


def handle_failure(cell: ActorCell, item: Any, error: Exception) -> None:
    """A handler raised: the asker gets the error, the supervisor gets the failure.

    The failing message was delivered, so it is neither redelivered nor a dead letter.
    """
    stats = cell._stats
    if stats is not None:
        stats.failed += 1
    env = item if is_runtime_envelope(item) else None
    message = env.message if env is not None else item
    cell.log.error("actor failed", message_type=type(message).__name__, exc_info=error)
    # Supervisor first: its turn is queued before the asker wakes, so an asker that
    # catches the error already sees the supervisor's decision applied.
    report(cell, error, message)
    reply = env.reply if env is not None else None
    if reply is not None and not reply.done():
        reply.set_exception(error)


def handle_base_exception(cell: ActorCell, item: Any, error: BaseException) -> None:
    """A BaseException that is not an Exception escaped a handler.

    A CancelledError (the handler awaited something that was cancelled) only fails the
    ask. Anything else (SystemExit, KeyboardInterrupt, a user's own BaseException) stops
    this actor and the whole system; the asker gets an ActorStoppedError caused by it.
    """
    cell._current = IDLE
    system = cell._system
    env = item if is_runtime_envelope(item) else None
    if is_fatal(error):
        system._stop_errors[cell] = error
        from dovecote.actors._stopping import request_stop

        request_stop(cell)
        system._fatal(error)
    reply = env.reply if env is not None else None
    if reply is not None:
        system._fail_reply(reply, cell)


def report(cell: ActorCell, error: BaseException, message: Any) -> None:
    """Suspend ``cell`` and ask its parent for a decision."""
    cell._suspended = True
    parent = cell._parent
    if parent is None:
        cell.log.error("the root guardian failed; stopping it", exc_info=error)
        from dovecote.actors._stopping import begin_stop

        begin_stop(cell)
        return
    parent._send_system(Failed(cell, error, message))


def _strategy_for(parent: ActorCell, child: ActorCell) -> SupervisorStrategy:
    override = child._options.supervisor_strategy
    if override is not None:
        return override
    system = parent._system
    if parent is system._guardian:
        return system._guardian_strategy
    actor = parent._actor
    if actor is not None:
        return actor.supervisor_strategy
    return system._guardian_strategy


def supervise(parent: ActorCell, failed: Failed) -> None:
    """Apply the strategy's decision for a failed child."""
    child = failed.child
    if child._parent is not parent or child._terminating or child._terminated:
        return  # stale: the child is already going away
    if parent._terminating:
        return  # the parent is stopping all its children anyway
    system = parent._system
    strategy = _strategy_for(parent, child)
    stats = child._restart_stats
    if stats is None:
        stats = child._restart_stats = RestartStats()
    try:
        decision = strategy.handle_failure(stats, failed.error, system.clock.now())
    except Exception as decider_error:
        parent.log.error("supervisor decider failed", exc_info=decider_error)
        report(parent, decider_error, None)
        return
    directive = decision.directive
    if directive is Directive.ESCALATE and parent._parent is None:
        parent.log.error(
            "failure escalated to the guardian; stopping the actor", child=child.path
        )
        directive = Directive.STOP
    notify_decision(child, failed.error, directive)  # a durable mailbox settles the message
    targets = (
        [c for c in parent._children.values() if not c._terminating]
        if strategy.applies_to_all and parent._children
        else [child]
    )
    if directive is Directive.RESUME:
        child._send_system(RESUME)
    elif directive is Directive.RESTART:
        for target in targets:
            msg = Restart(failed.error, failed.message if target is child else None)
            if target is not child:
                target._suspended = True
            if decision.delay > 0:
                system.clock.call_later(decision.delay, target._send_system, msg)
            else:
                target._send_system(msg)
    elif directive is Directive.STOP:
        from dovecote.actors._stopping import request_stop

        error = failed.error
        if isinstance(error, ActorInitializationError) and error.__cause__ is not None:
            error = error.__cause__  # what the factory, constructor or pre_start raised
        system._stop_errors.setdefault(child, error)
        for target in targets:
            request_stop(target)
    else:  # ESCALATE: fail as if our own handler had raised
        report(parent, failed.error, failed.message)
