"""The exception hierarchy shared by every dovecote package.

Every error dovecote raises on purpose subclasses :class:`DovecoteError`, so
``except DovecoteError`` catches them all. Leaf packages import from here and
from nowhere else inside dovecote.
"""

from __future__ import annotations

__all__ = [
    "ActorInitializationError",
    "ActorNotFoundError",
    "ActorStoppedError",
    "AskDeadlockError",
    "AskTimeoutError",
    "DovecoteError",
    "InvalidActorNameError",
    "InvalidFetchOptionsError",
    "InvalidMailboxAddressError",
    "InvalidTimeoutError",
    "MailboxFullError",
    "OptionsError",
    "SerializationError",
    "ShutdownTimeoutError",
    "UnhandledMessageError",
    "UnsupportedCapabilityError",
]


class DovecoteError(Exception):
    """Base class of every error raised by dovecote."""


class OptionsError(DovecoteError, ValueError):
    """Actor or mailbox options are invalid or contradict each other."""


class MailboxFullError(DovecoteError):
    """A bounded mailbox with the ``reject`` policy is full; the message was not queued."""


class AskTimeoutError(DovecoteError, TimeoutError):
    """An ``ask`` got no answer within its timeout."""


class InvalidTimeoutError(DovecoteError, ValueError):
    """A timeout is not a positive real number of seconds (or None, where that is allowed)."""


class ShutdownTimeoutError(DovecoteError, TimeoutError):
    """``shutdown()`` ran out of time; ``actors`` holds the paths of the actors still running.

    The system is shut down anyway: a second ``shutdown()`` returns at once.
    """

    def __init__(self, message: str, actors: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.actors = actors


class ActorStoppedError(DovecoteError):
    """The actor is stopped (or stopped before it answered)."""


class AskDeadlockError(DovecoteError, RuntimeError):
    """An actor asked itself from inside its own handler; that can never be answered."""


class ActorNotFoundError(DovecoteError, LookupError):
    """No live actor has the given path or address."""


class InvalidActorNameError(DovecoteError, ValueError):
    """An actor name is malformed or already taken by a live sibling."""


class InvalidMailboxAddressError(DovecoteError, ValueError):
    """A post-office address could not be parsed; the message names the bad part."""


class InvalidFetchOptionsError(DovecoteError, ValueError):
    """``fetch`` was called with options that contradict each other or are out of range."""


class UnsupportedCapabilityError(DovecoteError):
    """The provider behind an address cannot perform the requested operation."""


class ActorInitializationError(DovecoteError):
    """The actor factory, the constructor or ``pre_start`` raised.

    The original exception is ``__cause__``. ``default_decider`` stops actors
    that fail this way: restarting would most likely fail the same way again.
    """


class SerializationError(DovecoteError, ValueError):
    """A value could not be encoded for the wire (unregistered type) or bytes not decoded."""


class UnhandledMessageError(DovecoteError):
    """The actor did not handle the asked message (the default ``on_receive``, or the
    handler called ``self.unhandled(message)``). Not a failure: the actor keeps running."""
