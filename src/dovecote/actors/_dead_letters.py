"""The mailbox a stopped actor keeps: everything sent to it becomes a dead letter."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from dovecote.actors._messages import DeadLetterReason
from dovecote.mailboxes import Envelope, Mailbox

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell

__all__ = ["DeadLetterMailbox"]

_NOTHING: deque[Any] = deque(maxlen=0)  # shared, always empty


class DeadLetterMailbox(Mailbox):
    """Never queues: user messages are published as dead letters, system ones ignored."""

    __slots__ = ("_cell",)

    def __init__(self, cell: ActorCell) -> None:
        self._init_common()  # no deque of its own: nothing is ever queued here
        self._user = _NOTHING
        self._cell = cell

    def enqueue(self, envelope: Envelope) -> None:
        cell = self._cell
        cell._system._lose(envelope, cell, DeadLetterReason.RECIPIENT_STOPPED)

    def post(self, message: Any) -> None:
        cell = self._cell
        cell._system._lose(message, cell, DeadLetterReason.RECIPIENT_STOPPED)

    def enqueue_system(self, message: Any, sender: Any = None) -> None:
        return None

    def prepend_user(self, envelopes: Iterable[Envelope]) -> None:
        for env in envelopes:
            self.enqueue(env)
