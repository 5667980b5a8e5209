"""Exactly-once effects for durable actors: which stored message is being handled.

A durable mailbox delivers at least once: the store commit that acknowledges a message
happens after ``on_receive`` returns, so a crash between the two delivers it again.
``Inbox.handle_delivery(self.context, handler)`` keys an inbox receive on the stored
message being handled (its store mailbox and its message id, the same on every
redelivery): the handler's writes and the receive commit together, and a redelivery
finds the receive and skips the handler. The store commit itself stays where the durable
mailbox puts it (after ``on_receive``); it needs no shared transaction, because the
inbox has already made the redelivery harmless.
"""

from __future__ import annotations

from typing import Any

from dovecote.durable._actor_mailbox import DurableDelivery
from dovecote.durable._model import StoredMessage

__all__ = ["durable_message"]


def durable_message(context: Any) -> StoredMessage | None:
    """The stored message an actor is handling right now, or None.

    Call it with ``self.context`` inside ``on_receive`` (sync or async, before or after
    its awaits). None when the message did not come from a durable mailbox (an ask, a
    tell to an ordinary actor, a timer) or outside a handler. Its ``message_id`` is the
    same on every redelivery: a natural idempotency key for effects outside the
    database as well.
    """
    # The runtime keeps the envelope being handled on the actor's cell (its context).
    current = getattr(context, "_current", None)
    if type(current) is DurableDelivery:
        stored: StoredMessage = current.letter.message
        return stored
    return None
