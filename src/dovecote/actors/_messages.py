"""Messages and events the runtime itself sends: PoisonPill, Terminated, DeadLetter, lifecycle."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, final

import attrs

if TYPE_CHECKING:
    from dovecote.actors._ref import ActorRef

__all__ = [
    "ActorRestarted",
    "ActorStarted",
    "ActorStopped",
    "DeadLetter",
    "DeadLetterReason",
    "PoisonPill",
    "Terminated",
    "UnhandledMessage",
]


@final
class _PoisonPillType:
    """Stops the receiving actor once the messages queued before it are processed."""

    __slots__ = ()
    _instance: _PoisonPillType | None = None

    def __new__(cls) -> _PoisonPillType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "PoisonPill"

    def __reduce__(self) -> str:
        return "PoisonPill"


#: The graceful-stop message (a singleton): ``ref.tell(PoisonPill)`` equals ``ref.stop()``.
PoisonPill: Final = _PoisonPillType()


@attrs.frozen(slots=True)
class Terminated:
    """Delivered once to each watcher when the watched actor has stopped."""

    ref: ActorRef


class DeadLetterReason:
    """Why a message ended up in dead letters (the ``reason`` of :class:`DeadLetter`)."""

    RECIPIENT_STOPPED: Final = "recipient-stopped"
    """Sent to an actor that had already stopped (or to a system that shut down)."""
    QUEUED_AT_STOP: Final = "queued-at-stop"
    """Still queued (or stashed) when its actor stopped."""
    LATE_REPLY: Final = "late-reply"
    """A reply that arrived after its ``ask`` had timed out or been cancelled."""
    NO_RECIPIENT: Final = "no-recipient"
    """``context.reply`` with neither an asker nor a sender to answer."""
    REJECTED: Final = "rejected"
    """Told from another thread to a full ``reject`` mailbox: no caller left to raise to."""


@attrs.frozen(slots=True)
class DeadLetter:
    """A message that was not processed, published on the event stream and counted."""

    message: Any
    sender: ActorRef | None
    recipient: ActorRef | None
    reason: str


@attrs.frozen(slots=True)
class ActorStarted:
    """Lifecycle event: an actor's first incarnation finished ``pre_start``."""

    ref: ActorRef


@attrs.frozen(slots=True)
class ActorRestarted:
    """Lifecycle event: an actor was replaced by a fresh instance after ``error``."""

    ref: ActorRef
    error: BaseException


@attrs.frozen(slots=True)
class ActorStopped:
    """Lifecycle event: an actor has stopped for good.

    ``error`` is the exception that stopped it (its factory, constructor or ``pre_start``
    raised, or its supervisor decided STOP after a failure), None for a requested stop.
    """

    ref: ActorRef
    error: BaseException | None = None


@attrs.frozen(slots=True)
class UnhandledMessage:
    """Event: ``recipient`` did not handle ``message`` (the default ``on_receive``, or
    ``self.unhandled(message)``). ``sender`` is the message's sender, or None."""

    message: Any
    sender: ActorRef | None
    recipient: ActorRef
