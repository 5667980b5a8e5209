"""Drop reasons, the drop-reporting protocol and the overflow bookkeeping shared by
:class:`~dovecote.mailboxes.BoundedMailbox` and :class:`~dovecote.mailboxes.PriorityMailbox`."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Literal, NoReturn, Protocol, cast, runtime_checkable

from dovecote._errors import MailboxFullError, OptionsError

from ._mailbox import Mailbox, notify

__all__ = ["DropReportingMailbox", "MailboxDropReason", "OverflowMailbox", "OverflowPolicy"]

#: What a full bounded mailbox does with a new message (checked at run time as well).
OverflowPolicy = Literal["reject", "drop-head", "drop-new"]

REJECT = "reject"
DROP_HEAD = "drop-head"
DROP_NEW = "drop-new"
_POLICIES = (REJECT, DROP_HEAD, DROP_NEW)


class MailboxDropReason(enum.StrEnum):
    """Which overflow policy discarded a message (the values are the policy names)."""

    DROP_HEAD = DROP_HEAD
    DROP_NEW = DROP_NEW


@runtime_checkable
class DropReportingMailbox(Protocol):
    """A mailbox that reports each message it discards; the runtime counts them.

    Implement it on a custom mailbox to get its drops into ``actor_mailbox_dropped_total``.
    """

    def observe_drops(self, observer: Callable[[MailboxDropReason], None]) -> None:
        """Call ``observer(reason)`` once for every message this mailbox discards."""


def validate_capacity(capacity: object) -> int:
    """Return ``capacity`` if it is an int >= 1, else raise :class:`OptionsError`."""
    if type(capacity) is bool or not isinstance(capacity, int) or capacity < 1:
        raise OptionsError(f"mailbox capacity must be an int >= 1, got {capacity!r}")
    return capacity


def validate_overflow(overflow: object) -> OverflowPolicy:
    """Return ``overflow`` as a plain str if it names a policy, else raise :class:`OptionsError`."""
    if not isinstance(overflow, str) or overflow not in _POLICIES:
        raise OptionsError(
            f"unknown mailbox overflow policy {overflow!r}; expected one of {', '.join(_POLICIES)}"
        )
    return cast(OverflowPolicy, str(overflow))


class OverflowMailbox(Mailbox):
    """Internal base: a capacity, an overflow policy, the drop counter and its observers.

    Subclasses decide what "full" means and which message a policy discards; this class
    only keeps the books. Not exported: subclass ``BoundedMailbox`` or ``Mailbox`` instead.
    """

    __slots__ = ("_capacity", "_drop_observers", "_dropped", "_overflow")

    _capacity: int
    _overflow: OverflowPolicy
    _dropped: int
    _drop_observers: tuple[Callable[[MailboxDropReason], None], ...]

    def _init_overflow(self, capacity: int, overflow: OverflowPolicy) -> None:
        self._capacity = capacity
        self._overflow = overflow
        self._dropped = 0
        self._drop_observers = ()

    @property
    def overflow(self) -> OverflowPolicy:
        """The policy applied when the mailbox is full: "reject", "drop-head" or "drop-new"."""
        return self._overflow

    @property
    def dropped_count(self) -> int:
        """How many messages an overflow policy has discarded so far (rejections excluded)."""
        return self._dropped

    def observe_drops(self, observer: Callable[[MailboxDropReason], None]) -> None:
        """Register ``observer(reason)``, called once per discarded message; observers add up."""
        self._drop_observers = (*self._drop_observers, observer)

    def _count_drop(self, reason: MailboxDropReason) -> None:
        """Book one discarded message and tell the observers (after the queue is consistent)."""
        self._dropped += 1
        if self._drop_observers:
            notify(self._drop_observers, reason, self.owner, "drop")

    def _reject(self) -> NoReturn:
        owner = f" of {self.owner}" if self.owner else ""
        raise MailboxFullError(
            f"mailbox{owner} is full (capacity {self._capacity}); the message was not queued"
        )
