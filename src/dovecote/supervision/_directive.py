"""What a supervisor does with a failed child, and the default way to choose it."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TypeAlias

import attrs

from dovecote._errors import ActorInitializationError

__all__ = ["Decider", "Decision", "Directive", "default_decider"]


class Directive(enum.Enum):
    """The supervisor's answer to a child failure."""

    RESUME = "resume"
    """Keep the current instance and its state; carry on with the next message."""
    RESTART = "restart"
    """Replace the instance with a fresh one; queued messages are kept."""
    STOP = "stop"
    """Stop the child for good."""
    ESCALATE = "escalate"
    """Fail the supervisor itself with the same error, letting its own parent decide."""


Decider: TypeAlias = Callable[[BaseException], Directive]
"""Maps a child's error to a :class:`Directive`."""


@attrs.frozen(slots=True)
class Decision:
    """The outcome of a failure: a directive and, for a restart, how long to wait first."""

    directive: Directive
    delay: float = 0.0
    """Seconds to wait before restarting; always 0.0 unless the directive is RESTART."""


def default_decider(error: BaseException) -> Directive:
    """Stop on a failed start, restart on any other ``Exception``, escalate anything else.

    An :class:`~dovecote.ActorInitializationError` (the constructor or ``pre_start`` raised)
    stops the child, since a restart would most likely fail the same way. A ``BaseException``
    that is not an ``Exception`` is not the child's business, so it goes up to the parent.
    """
    if isinstance(error, ActorInitializationError):
        return Directive.STOP
    if isinstance(error, Exception):
        return Directive.RESTART
    return Directive.ESCALATE
