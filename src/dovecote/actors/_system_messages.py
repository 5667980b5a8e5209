"""Internal system messages; they travel in the system lane, ahead of user messages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell


class Terminate:
    """Stop now: finish nothing more from the user queue."""

    __slots__ = ()


TERMINATE = Terminate()


class Resume:
    """The supervisor decided RESUME: go on with the next message, state kept."""

    __slots__ = ()


RESUME = Resume()


class Restart:
    """The supervisor decided RESTART after ``error`` (raised while handling ``message``)."""

    __slots__ = ("error", "message")

    def __init__(self, error: BaseException, message: Any) -> None:
        self.error = error
        self.message = message


class Failed:
    """Child → parent: ``child`` failed with ``error`` and waits for a decision."""

    __slots__ = ("child", "error", "message")

    def __init__(self, child: ActorCell, error: BaseException, message: Any) -> None:
        self.child = child
        self.error = error
        self.message = message


class DrainBarrier:
    """Shutdown with ``drain=True``: marks the end of what was queued at that moment."""

    __slots__ = ("callback",)

    def __init__(self, callback: Any) -> None:
        self.callback = callback
