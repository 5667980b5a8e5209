"""Spawning, starting and restarting actors, and their system messages (stopping is in
:mod:`._stopping`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dovecote._errors import (
    ActorInitializationError,
    ActorStoppedError,
    InvalidActorNameError,
    MailboxFullError,
)
from dovecote.actors import _fault_handling, _timers
from dovecote.actors._actor import Actor, _constructing
from dovecote.actors._envelope_kinds import Posted, is_runtime_envelope, unwrap
from dovecote.actors._fault_handling import is_fatal
from dovecote.actors._hooks import run_hook
from dovecote.actors._messages import ActorRestarted, ActorStarted, DeadLetterReason
from dovecote.actors._names import auto_name, validate_name
from dovecote.actors._options import ActorOptions
from dovecote.actors._stopping import begin_stop, wait_for_stopping_children
from dovecote.actors._system_messages import RESUME, Failed, Restart, Resume, Terminate
from dovecote.mailboxes import Envelope, Mailbox

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell
    from dovecote.actors._ref import ActorRef

__all__ = ["adopt_orphans", "process_system", "spawn", "start"]

_DEFAULT_OPTIONS = ActorOptions()


# -- spawning -----------------------------------------------------------------------------------
def spawn(
    parent: ActorCell,
    factory: Callable[[], Actor],
    name: str | None,
    options: ActorOptions | None,
) -> ActorRef:
    """Create a child cell of ``parent`` and schedule its first turn; return its ref.

    Every check happens before anything is created, so bad input changes nothing.
    """
    system = parent._system
    if system._shutting_down or parent._terminating or parent._terminated:
        raise ActorStoppedError(f"cannot spawn under {parent.path}: it is stopping")
    if not callable(factory):
        raise TypeError(f"factory must be an Actor subclass or a callable, not {factory!r}")
    if isinstance(factory, type) and not issubclass(factory, Actor):
        raise TypeError(f"{factory.__qualname__} is not a subclass of dovecote.Actor")
    if options is None:
        options = _DEFAULT_OPTIONS  # already valid
    elif isinstance(options, ActorOptions):
        options.validate()
    else:
        raise TypeError("options must be an ActorOptions")
    children = parent._children
    if name is None:
        name = auto_name()
        while children is not None and name in children:
            name = auto_name()
    else:
        validate_name(name)
        if children is not None and name in children:
            raise InvalidActorNameError(f"{parent.path}/{name} already exists")
    mailbox = Mailbox() if options is _DEFAULT_OPTIONS else options.make_mailbox()
    cls = _cell_classes[options.dispatcher == "blocking"]
    cell = cls(
        system, parent, name, f"{parent.path}/{name}", factory, options, mailbox, next(system._uids)
    )
    known = system._factory_stats.get(factory)
    if known is None:
        class_name = factory.__qualname__ if isinstance(factory, type) else "Actor"
        known = (class_name, system._class_stats(class_name))
        if isinstance(factory, type):
            system._factory_stats[factory] = known
    cell._class_name, cell._stats = known
    cell._attach_mailbox(mailbox)
    if children is None:
        children = parent._children = {}
    children[name] = cell
    if system._mail_provider is not None:
        system._mail_provider.attach(cell)
    cell._scheduled = True  # its first turn is the start; tells until then only queue
    starting = system._starting
    starting.append(cell)
    if len(starting) == 1:
        system._call_soon(system._start_pending)
    return cell._ref


# -- starting -----------------------------------------------------------------------------------
# [ActorCell, BlockingActorCell], filled in by _blocking_cell (the cell modules import this one)
_cell_classes: list[type[ActorCell]] = []


def _create_instance(cell: ActorCell) -> Actor:
    _constructing.append(cell)
    try:
        actor = cell._factory()
    except BaseException as error:
        if is_fatal(error):
            cell._system._fatal(error)
        raise ActorInitializationError(f"creating {cell.path} failed: {error!r}") from error
    finally:
        _constructing.pop()
    if not isinstance(actor, Actor):
        raise ActorInitializationError(f"factory for {cell.path} did not return an Actor") from (
            TypeError(f"expected an Actor, got {type(actor).__name__}")
        )
    actor._cell = cell
    cell._actor = actor
    cell._behavior = actor.on_receive
    cell._behavior_stack = None
    name = type(actor).__qualname__
    if name != cell._class_name:
        cell._class_name = name
        cell._stats = cell._system._class_stats(name)
    return actor


def start(cell: ActorCell) -> None:
    """The first turn of a new cell: construct, ``pre_start``, then drain the mailbox."""
    system = cell._system
    outer = system._running
    system._running = cell
    try:
        try:
            actor = _create_instance(cell)
        except ActorInitializationError as error:
            _start_failed(cell, error)
        else:
            if type(actor).pre_start is Actor.pre_start:
                _started(cell, None)  # nothing to run: skip the hook machinery
            else:
                run_hook(cell, actor.pre_start, (), lambda error: _started(cell, error))
    finally:
        system._running = outer
    if not cell._awaiting and not cell._terminated:
        cell._run()


def _start_failed(cell: ActorCell, error: ActorInitializationError) -> None:
    """The factory, constructor, ``pre_start`` or ``post_restart`` raised: say so loudly,
    then let the supervisor decide (``default_decider``: STOP)."""
    cell.log.error("actor failed to start", error=repr(error.__cause__), exc_info=error)
    _fault_handling.report(cell, error, None)


def _started(cell: ActorCell, error: BaseException | None) -> None:
    if error is not None:
        init_error = ActorInitializationError(f"pre_start of {cell.path} failed: {error!r}")
        init_error.__cause__ = error
        _start_failed(cell, init_error)
        return
    stats = cell._stats
    if stats is not None:
        stats.started += 1
    if cell._system.event_stream._subs:
        cell._system._publish_lifecycle(ActorStarted, cell)


# -- system messages ------------------------------------------------------------------------------
def process_system(cell: ActorCell, message: object) -> None:
    """Handle one message from the system lane."""
    kind = type(message)
    if kind is Terminate:
        begin_stop(cell)
    elif kind is Failed:
        _fault_handling.supervise(cell, message)  # type: ignore[arg-type]
    elif kind is Restart:
        _restart(cell, message)  # type: ignore[arg-type]
    elif kind is Resume:
        if not cell._terminating:
            cell._suspended = False
            for child in tuple(cell._children.values()) if cell._children else ():
                if child._suspended and not child._terminating:
                    child._send_system(RESUME)
    else:  # pragma: no cover - only the runtime sends system messages
        cell.log.error("unknown system message", message=repr(message))


# -- restarting -----------------------------------------------------------------------------------
def _restart(cell: ActorCell, message: Restart) -> None:
    if cell._terminating or cell._terminated:
        return
    _timers.cancel_all(cell)
    actor = cell._actor
    if actor is None:
        wait_for_stopping_children(cell, lambda: _recreate(cell, message.error))
        return

    def after_pre_restart(error: BaseException | None) -> None:
        if error is not None:
            cell.log.error("pre_restart failed", exc_info=error)
        wait_for_stopping_children(cell, lambda: _recreate(cell, message.error))

    run_hook(cell, actor.pre_restart, (message.error, message.message), after_pre_restart)


def _recreate(cell: ActorCell, error: BaseException) -> None:
    """Fresh instance, fresh mailbox; queued messages move over, stashed ones in front."""
    system = cell._system
    old = cell._mailbox
    stash = cell._stash or []
    cell._stash = None
    cell._actor = None
    system_msgs = old.drain_system()
    try:
        mailbox = cell._options.make_mailbox()
    except Exception:
        cell.log.exception("mailbox factory failed on restart; keeping the old mailbox")
        mailbox = old
    if mailbox is not old and type(mailbox) is Mailbox and type(old) is Mailbox:
        # The queue itself moves over: tells from other threads may be appending to it.
        mailbox._user, old._user = old._user, mailbox._user
    cell._mailbox = mailbox
    cell._attach_mailbox(mailbox)
    for env in system_msgs:
        mailbox.enqueue_system(env.message)
    if mailbox is not old:
        for env in old.drain_user():
            _requeue(cell, mailbox, unwrap(env))
    if stash:
        mailbox.prepend_user(stash)
    try:
        actor = _create_instance(cell)
    except ActorInitializationError as init_error:
        _start_failed(cell, init_error)
        return

    def after_post_restart(hook_error: BaseException | None) -> None:
        if hook_error is not None:
            init_error = ActorInitializationError(f"post_restart of {cell.path} failed")
            init_error.__cause__ = hook_error
            _start_failed(cell, init_error)
            return
        cell._suspended = False
        stats = cell._stats
        if stats is not None:
            stats.restarts += 1
        system._publish_lifecycle(ActorRestarted, cell, error)

    run_hook(cell, actor.post_restart, (error,), after_post_restart)


def _requeue(cell: ActorCell, mailbox: Mailbox, item: Any) -> None:
    """Queue a drained item again: a runtime envelope as it is, anything else as a bare
    message (an Envelope told as a message travels in a runtime envelope here)."""
    try:
        if is_runtime_envelope(item):
            mailbox.enqueue(item)
        elif isinstance(item, Envelope):
            mailbox.enqueue(Posted(item))
        else:
            mailbox.post(item)
    except MailboxFullError:
        cell._system._lose(item, cell, DeadLetterReason.QUEUED_AT_STOP)


def adopt_orphans(cell: ActorCell, queue: Any) -> None:
    """Requeue (or dead-letter, once stopped) what tells from another thread left in a
    queue that a stop or restart had swapped out (see ``ActorRef.tell``)."""
    system = cell._system
    while queue:
        item = unwrap(queue.popleft())
        if cell._terminated:
            system._lose(item, cell, DeadLetterReason.RECIPIENT_STOPPED)
        else:
            _requeue(cell, cell._mailbox, item)
    if not cell._scheduled:
        cell._scheduled = True
        system._schedule(cell)
