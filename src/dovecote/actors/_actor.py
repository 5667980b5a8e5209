"""The Actor base class users subclass."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, cast

from dovecote.actors import _unhandled
from dovecote.actors._type_params import M, R
from dovecote.supervision import OneForOneStrategy, SupervisorStrategy

if TYPE_CHECKING:
    import structlog

    from dovecote.actors._cell import ActorCell
    from dovecote.actors._context import ActorContext
    from dovecote.actors._ref import ActorRef

__all__ = ["Actor"]

_DEFAULT_STRATEGY = OneForOneStrategy()

# The cell whose factory is running right now, so Actor.__init__ can reach its context.
_constructing: list[ActorCell] = []


class Actor(Generic[M, R]):
    """Base class for actors: override :meth:`on_receive` and, if needed, the hooks.

    The runtime calls ``on_receive`` with one message at a time; its return value
    answers ``ask``. Every hook and the handler may be plain ``def`` or ``async def``.
    ``Actor[M, R]`` types it: ``M`` the messages it takes, ``R`` its answers, so
    ``spawn`` returns an ``ActorRef[M, R]`` (a plain ``Actor`` is ``Actor[Any, Any]``).
    """

    #: Start ``async def`` handlers inline, giving them a task only once they await.
    #: Set False if a handler needs ``asyncio.current_task()`` before its first await
    #: (``asyncio.timeout`` does): every async handler call then gets its own task.
    inline_async_start: ClassVar[bool] = True

    _cell: ActorCell

    def __init__(self) -> None:
        if _constructing:
            self._cell = _constructing[-1]

    @property
    def context(self) -> ActorContext:
        """This actor's context: children, sender, stash, become, watch, timers..."""
        return self._cell

    @property
    def self_ref(self) -> ActorRef[M, R]:
        """A reference to this actor, safe to hand to others."""
        return self._cell._ref

    @property
    def log(self) -> structlog.typing.FilteringBoundLogger:
        """A structlog logger bound with this actor's path and class."""
        return self._cell.log

    @property
    def supervisor_strategy(self) -> SupervisorStrategy:
        """The strategy applied to this actor's children.

        Override with a class attribute (``supervisor_strategy = OneForOneStrategy(...)``)
        or a property. Default: ``OneForOneStrategy()`` (10 restarts a minute).
        """
        return _DEFAULT_STRATEGY

    def on_receive(self, message: M) -> R | Awaitable[R]:
        """Handle one message; the return value answers ``ask``.

        Default: :meth:`unhandled` (so a misspelt override does not answer ``None``).
        """
        self.unhandled(message)
        return cast(R, None)

    def unhandled(self, message: Any) -> None:
        """Declare ``message`` unhandled: call it from a handler's fall-through branch.

        Publishes :class:`UnhandledMessage` on the event stream, logs a warning
        (rate-limited per actor class and message type) and fails a pending ``ask``
        with :class:`UnhandledMessageError`. Not a failure: the actor keeps its state.
        """
        _unhandled.report(self._cell, message)

    def pre_start(self) -> Any:
        """Called after the instance is created, before its first message."""
        return None

    def post_stop(self) -> Any:
        """Called once the actor has stopped (after its children stopped)."""
        return None

    def pre_restart(self, error: BaseException, message: Any) -> Any:
        """Called on the failing instance before a restart: stops children, then post_stop."""
        cell = self._cell
        for child in cell.children:
            cell.stop(child)
        return self.post_stop()

    def post_restart(self, error: BaseException) -> Any:
        """Called on the fresh instance after a restart. Default: ``pre_start()``."""
        return self.pre_start()
