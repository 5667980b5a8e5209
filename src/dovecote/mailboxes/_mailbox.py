"""The default mailbox: an unbounded FIFO user queue plus a system queue that goes first."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, TypeVar

from dovecote._logs import get_logger

from ._envelope import EMPTY, BareEnvelope, Envelope, SystemEnvelope, as_envelope

__all__ = ["Mailbox"]

log = get_logger("dovecote.mailbox")

_T = TypeVar("_T")


def notify(
    observers: Iterable[Callable[[_T], None]], value: _T, owner: str | None, kind: str
) -> None:
    """Call every observer with ``value``; one that raises is logged and the rest still run.

    Observers are telemetry: their failure must not change what the mailbox did.
    """
    for observer in observers:
        try:
            observer(value)
        except Exception:
            log.exception("mailbox observer failed", kind=kind, owner=owner, observer=observer)


class Mailbox:
    """Unbounded FIFO mailbox with two queues; system messages are always dequeued first.

    The user queue is a :class:`collections.deque`; the system queue exists only while it
    holds messages, so an idle actor's mailbox stays small. Nothing is ever discarded.

    When the user queue reaches :attr:`warn_threshold` messages, a warning is logged
    (logger ``"dovecote.mailbox"``, fields ``size`` and ``owner``) and every growth observer
    is called with the size; this repeats at each doubling (20_000, 40_000, ...). The
    warnings re-arm from the start once the user queue has been found empty (a dequeue that
    returns ``None``, or :meth:`drain_user`). To change the threshold, subclass and override
    the class attribute.

    Not thread-safe: one actor's runtime uses it from one thread (event loop) at a time.
    """

    __slots__ = ("_growth_observers", "_next_warn", "_system", "_user", "owner")

    warn_threshold: ClassVar[int] = 10_000
    """User-queue size that triggers the first growth warning."""

    owner: str | None
    """The owning actor's path, set by the runtime; only used in logs and errors."""

    _user: deque[Envelope]
    _system: deque[Envelope] | None  # None whenever the system queue is empty
    _next_warn: int
    _growth_observers: tuple[Callable[[int], None], ...]

    def __init__(self) -> None:
        self._user = deque()
        self._init_common()

    def _init_common(self) -> None:
        """Set up everything except the user queue (subclasses may store theirs differently)."""
        self.owner = None
        self._system = None
        self._next_warn = self.warn_threshold
        self._growth_observers = ()

    # -- user queue ------------------------------------------------------------------------

    def enqueue(self, envelope: Envelope) -> None:
        """Append ``envelope`` to the user queue (always the user queue, whatever its type)."""
        user = self._user
        user.append(envelope)
        if len(user) >= self._next_warn:
            self._grew(len(user))

    def post(self, message: Any) -> None:
        """Queue a bare ``message`` (no sender, no reply) without wrapping it in an Envelope.

        The runtime's fast path for ``tell``: no allocation per message. ``message`` must
        not itself be an :class:`Envelope` (wrap such a message first). Same overflow and
        growth rules as :meth:`enqueue`. A subclass that overrides :meth:`enqueue` but
        not this method gets every bare message there too, wrapped in a
        :class:`BareEnvelope`, so a filter written in ``enqueue`` sees all user messages.
        """
        if type(self).enqueue is not Mailbox.enqueue:
            self.enqueue(BareEnvelope(message))
            return
        user = self._user
        user.append(message)
        if len(user) >= self._next_warn:
            self._grew(len(user))

    def take(self) -> Any:
        """Remove and return the next user *item* (an Envelope or a bare posted message),
        or a private marker when there is none (look at :attr:`user_count` first: the
        marker is only "empty" when the count is 0). The runtime's fast path;
        :meth:`dequeue_user` wraps the result."""
        user = self._user
        if user:
            return user.popleft()
        self._next_warn = self.warn_threshold
        return EMPTY

    def dequeue_user(self) -> Envelope | None:
        """Remove and return the next user message, or ``None`` if there is none."""
        if not self.user_count:
            self.take()  # re-arms the growth warning
            return None
        return as_envelope(self.take())

    def prepend_user(self, envelopes: Iterable[Envelope]) -> None:
        """Put ``envelopes`` back at the front of the user queue, keeping their order (unstash).

        Never drops or rejects, whatever the capacity: these messages were admitted once.
        """
        before = len(self._user)
        self._user.extendleft(reversed(list(envelopes)))
        size = len(self._user)
        if size > before and size >= self._next_warn:
            self._grew(size)

    def drain_user(self) -> list[Envelope]:
        """Remove and return every user message, in the order they would be dequeued."""
        drained = [as_envelope(item) for item in self._user]
        self._user.clear()
        self._next_warn = self.warn_threshold
        return drained

    @property
    def user_count(self) -> int:
        """Number of queued user messages."""
        return len(self._user)

    @property
    def has_messages(self) -> bool:
        """Whether :meth:`dequeue` would return a message."""
        return bool(self._user) or self._system is not None

    # -- system queue ----------------------------------------------------------------------

    def enqueue_system(self, message: Any, sender: Any = None) -> None:
        """Wrap ``message`` in a :class:`SystemEnvelope` and queue it ahead of all user messages.

        The system queue is never bounded, dropped or counted towards growth warnings.
        """
        system = self._system
        if system is None:
            system = self._system = deque()
        system.append(SystemEnvelope(message, sender))

    def dequeue_system(self) -> Envelope | None:
        """Remove and return the next system message, or ``None`` if there is none."""
        system = self._system
        if system is None:
            return None
        envelope = system.popleft()
        if not system:
            self._system = None
        return envelope

    def drain_system(self) -> list[Envelope]:
        """Remove and return every system message, oldest first."""
        system = self._system
        self._system = None
        return [] if system is None else list(system)

    @property
    def system_count(self) -> int:
        """Number of queued system messages."""
        system = self._system
        return 0 if system is None else len(system)

    # -- both ------------------------------------------------------------------------------

    def dequeue(self) -> Envelope | None:
        """Remove and return the next message: a system message if any, else a user one."""
        if self._system is not None:
            return self.dequeue_system()
        return self.dequeue_user()

    def __len__(self) -> int:
        """Number of queued messages, system and user."""
        return self.user_count + self.system_count

    def observe_growth(self, observer: Callable[[int], None]) -> None:
        """Register ``observer(size)``, called with each growth warning; observers add up."""
        self._growth_observers = (*self._growth_observers, observer)

    def _grew(self, size: int) -> None:
        """The user queue reached the next warning size: log, move the mark, tell observers."""
        mark = max(self._next_warn, 1)
        while mark <= size:
            mark *= 2
        self._next_warn = mark
        log.warning(
            "mailbox user queue is growing",
            size=size,
            owner=self.owner,
            next_warning_at=mark,
        )
        if self._growth_observers:
            notify(self._growth_observers, size, self.owner, "growth")

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} owner={self.owner!r} "
            f"user={self.user_count} system={self.system_count}>"
        )
