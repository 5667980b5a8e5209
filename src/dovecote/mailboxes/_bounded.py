"""A FIFO mailbox with a capacity and an overflow policy."""

from __future__ import annotations

from typing import Any

from ._drops import DROP_HEAD, DROP_NEW, MailboxDropReason, OverflowMailbox, OverflowPolicy
from ._drops import validate_capacity as _validate_capacity
from ._drops import validate_overflow as _validate_overflow
from ._envelope import Envelope, is_exempt

__all__ = ["BoundedMailbox"]


class BoundedMailbox(OverflowMailbox):
    """FIFO mailbox holding at most ``capacity`` user messages; ``overflow`` says what gives.

    When a non-exempt message arrives and the user queue is full:

    - ``"reject"`` (the default) raises :class:`~dovecote.MailboxFullError`; nothing changes.
    - ``"drop-new"`` discards the incoming message.
    - ``"drop-head"`` discards the oldest queued non-exempt message, then queues the new one.
      If every queued message is exempt, the incoming message is discarded instead (still
      reported as ``drop-head``, the policy that fired).

    Exempt envelopes (:class:`ExemptEnvelope`) are always admitted: they count towards the
    size but are never dropped or rejected, so the queue can exceed ``capacity``. So can
    :meth:`prepend_user`. System messages are never bounded. Every discarded message is
    counted in :attr:`dropped_count` and reported once to each drop observer; rejections are
    not drops (the sender gets the exception).

    Raises :class:`~dovecote.OptionsError` for a capacity that is not an int >= 1 or an
    unknown policy.
    """

    __slots__ = ()

    def __init__(self, capacity: int, overflow: OverflowPolicy = "reject") -> None:
        capacity = _validate_capacity(capacity)
        overflow = _validate_overflow(overflow)
        super().__init__()
        self._init_overflow(capacity, overflow)

    @property
    def capacity(self) -> int:
        """The most user messages admitted without applying the overflow policy."""
        return self._capacity

    def enqueue(self, envelope: Envelope) -> None:
        """Queue ``envelope``, applying the overflow policy if the mailbox is full."""
        user = self._user
        if len(user) >= self._capacity and not envelope.exempt:
            self._enqueue_full(envelope)
            return
        user.append(envelope)
        if len(user) >= self._next_warn:
            self._grew(len(user))

    def post(self, message: Any) -> None:
        """Queue a bare message (see :meth:`Mailbox.post`), applying the policy if full."""
        user = self._user
        if len(user) >= self._capacity:
            self._enqueue_full(message)
            return
        user.append(message)
        if len(user) >= self._next_warn:
            self._grew(len(user))

    def _enqueue_full(self, envelope: Any) -> None:
        """Apply the overflow policy. The size never grows here, so no growth check."""
        overflow = self._overflow
        if overflow == DROP_NEW:
            self._count_drop(MailboxDropReason.DROP_NEW)
            return
        if overflow != DROP_HEAD:
            self._reject()
        user = self._user
        if not is_exempt(user[0]):
            user.popleft()
            user.append(envelope)
        else:
            victim = next((i for i, queued in enumerate(user) if not is_exempt(queued)), None)
            if victim is not None:
                del user[victim]
                user.append(envelope)
        self._count_drop(MailboxDropReason.DROP_HEAD)
