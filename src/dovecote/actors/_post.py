"""The system's post office: every live actor subscribes to its own address.

A letter posted to ``mem://<system>@<host>/user/...`` while that actor is alive goes
into its mailbox; the delivery settles when ``on_receive`` returns (handled) or
raises (a retriable error puts the letter back in the address's queue; any other
error gives it up, dead-lettered if the provider's DLQ is on, and the failure still
goes to the actor's supervisor). A letter for an actor that has stopped, or whose
bounded mailbox is full, waits in the address's queue for ``fetch``: never dropped.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

from dovecote._errors import ActorNotFoundError, ActorStoppedError, MailboxFullError
from dovecote.actors import _envelope_kinds
from dovecote.addressing import (
    MailAddress,
    MailMessage,
    MemoryBus,
    MemoryProvider,
    PostOffice,
    Subscription,
)
from dovecote.mailboxes import ExemptEnvelope

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell
    from dovecote.actors._ref import ActorRef
    from dovecote.actors._system import ActorSystem

__all__ = ["ActorMailProvider", "LetterEnvelope", "RecipientUnavailableError", "make_post_office"]


class RecipientUnavailableError(ActorStoppedError):
    """The actor behind an address stopped or is full; the letter goes back to the queue."""

    is_retriable = True


class LetterEnvelope(ExemptEnvelope):
    """A letter from the post office in an actor's mailbox; ``reply`` settles the delivery.

    Exempt from overflow policies (a letter is admitted only when there is room, and a
    later tell must not evict it: its delivery would never settle), but it keeps its
    priority in a PriorityMailbox. ``withdrawn`` is set when the post office gave up on
    the delivery before the actor started it; the actor then skips it.
    """

    __slots__ = ("letter", "withdrawn")

    keeps_priority = True

    def __init__(self, message: Any, sender: Any, reply: Any, letter: MailMessage) -> None:
        super().__init__(message, sender, reply)
        self.letter = letter
        self.withdrawn = False


_envelope_kinds.register(LetterEnvelope)


class _DeliverToActor:
    """Subscription callback: hand the letter's body to the actor, wait until handled."""

    __slots__ = ("_cell",)

    def __init__(self, cell: ActorCell) -> None:
        self._cell = cell

    async def __call__(self, letter: MailMessage) -> None:
        cell = self._cell
        if cell._terminated:
            raise RecipientUnavailableError(f"{cell.path} has stopped")
        mailbox = cell._mailbox
        capacity = getattr(mailbox, "capacity", None)
        if capacity is not None and mailbox.user_count >= capacity:
            # an overflow policy would drop or reject it; back to the queue instead
            raise RecipientUnavailableError(f"{cell.path} has a full mailbox")
        system = cell._system
        sender = _local_sender(system, letter)
        done = system._loop.create_future()
        envelope = LetterEnvelope(letter.body, sender, done, letter)
        try:
            cell._enqueue(envelope)
        except MailboxFullError as full:
            raise RecipientUnavailableError(f"{cell.path} has a full mailbox") from full
        try:
            await done
        except ActorStoppedError as stopped:
            raise RecipientUnavailableError(str(stopped)) from stopped
        except asyncio.CancelledError:
            # The post office gave up on this delivery (settle watchdog, unsubscribe):
            # it requeues the letter itself, so the actor must not handle it as well.
            envelope.reply = None
            if cell._current is not envelope:
                envelope.withdrawn = True
            raise


def _local_sender(system: ActorSystem, letter: MailMessage) -> ActorRef | None:
    origin = letter.from_
    if origin is None:
        return None
    try:
        return system.resolve(str(origin))
    except (ActorNotFoundError, ValueError):
        return None


class ActorMailProvider(MemoryProvider):
    """The ``mem`` provider of one actor system (a private bus per system)."""

    def __init__(self, system: ActorSystem) -> None:
        super().__init__(MemoryBus(), clock=system.clock)
        self._system = system
        self._actor_subscriptions: dict[ActorCell, Subscription] = {}

    def attach(self, cell: ActorCell) -> None:
        """Subscribe ``cell`` to its own address (synchronously: nothing to wait for)."""
        if cell._terminated or cell in self._actor_subscriptions:
            return
        address = MailAddress.parse(cell.address)
        subscription = Subscription(self, address, _DeliverToActor(cell), uuid.uuid4().hex)
        self.bus.topic(str(address)).subscriptions[subscription.id] = subscription
        self._register_subscription(subscription)
        self._actor_subscriptions[cell] = subscription

    def detach(self, cell: ActorCell) -> None:
        """The actor stopped: later letters to its address queue for ``fetch``."""
        subscription = self._actor_subscriptions.pop(cell, None)
        if subscription is None:
            return
        subscription._active = False
        self._unregister_subscription(subscription)
        for task in list(subscription._backoffs):
            task.cancel()
        topic = str(subscription.address)
        state = self.bus.find(topic)
        if state is not None:
            state.subscriptions.pop(subscription.id, None)
            self.bus.forget_if_idle(topic)  # unless letters wait there for ``fetch``


def make_post_office(system: ActorSystem) -> tuple[PostOffice, ActorMailProvider]:
    """A post office whose ``mem`` provider knows the system's actors."""
    provider = ActorMailProvider(system)
    office = PostOffice([provider])
    for cell in system._walk():
        provider.attach(cell)
    return office, provider
