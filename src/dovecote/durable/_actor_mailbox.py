"""The durable actor mailbox: one incarnation's view of the actor's durable lane.

The runtime sees an ordinary :class:`~dovecote.mailboxes.Mailbox`. ``tell`` (``post``, and
``enqueue`` of a tell with a sender) encodes the message and hands it to the lane, which
writes it to the store; the local queue only ever holds what the lane claimed
(:class:`DurableDelivery`), asks (they wait in memory: a future cannot be stored) and the
runtime's exempt envelopes (``PoisonPill``, ``Terminated``, post-office letters).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from dovecote.actors._hosted_mailbox import MailboxHost, register_envelope_type
from dovecote.mailboxes import Envelope, Mailbox

if TYPE_CHECKING:
    from dovecote.actors import ActorRef
    from dovecote.durable._actor_lane import DurableLane
    from dovecote.durable._lane_spec import LaneSpec
    from dovecote.durable._model import Claim
    from dovecote.supervision import Directive

__all__ = ["DurableDelivery", "DurableMailbox", "Settlement"]


class Settlement(asyncio.Future[Any]):
    """The ``reply`` of a delivery: the runtime settles it as it would an ask's future.

    Its lane hears of the outcome at once (synchronously), so a failure is known before
    the supervisor's decision arrives.
    """

    def __init__(self, lane: DurableLane, delivery: DurableDelivery) -> None:
        super().__init__(loop=lane.loop)
        self._lane = lane
        self._delivery = delivery

    def set_result(self, result: Any) -> None:
        super().set_result(result)
        self._lane.handled(self._delivery)

    def set_exception(self, exception: type | BaseException) -> None:
        super().set_exception(exception)
        error = self.exception()  # also marks it retrieved: nobody awaits this future
        assert error is not None
        self._lane.failed(self._delivery, error)


class DurableDelivery(Envelope):
    """A claimed store message on its way to ``on_receive``; ``letter`` is the claim."""

    __slots__ = ("letter", "taken_at")

    letter: Claim
    taken_at: float

    def __init__(self, message: Any, sender: ActorRef | None, lane: DurableLane, claim: Claim):
        super().__init__(message, sender, None)
        self.letter = claim
        self.taken_at = 0.0
        self.reply = Settlement(lane, self)

    def __repr__(self) -> str:
        return f"DurableDelivery({self.message!r}, id={self.letter.message.message_id})"


register_envelope_type(DurableDelivery)


class DurableMailbox(Mailbox):
    """A mailbox whose user messages live in a store; made fresh for each incarnation."""

    __slots__ = ("_lane", "_spec")

    def __init__(self, spec: LaneSpec) -> None:
        super().__init__()
        self._spec = spec
        self._lane: DurableLane | None = None

    # -- hooks the runtime calls ----------------------------------------------------------
    def attach_host(self, host: MailboxHost) -> None:
        """Join (or open) the durable lane of the actor behind ``host``."""
        from dovecote.durable._actor_lanes import lane_for

        self._lane = lane = lane_for(host, self._spec)
        lane.mailbox = self

    def failure_decided(self, error: BaseException, directive: Directive) -> None:
        """The supervisor's decision settles a failed delivery (STOP: permanent)."""
        if self._lane is not None:
            self._lane.decided(error, directive)

    # -- the user queue -------------------------------------------------------------------
    def post(self, message: Any) -> None:
        """``tell`` without a sender: encode now (SerializationError here), write soon."""
        self._require_lane().write(message, None)

    def enqueue(self, envelope: Envelope) -> None:
        """Deliveries, asks and exempt envelopes queue here; a tell with a sender is written."""
        if type(envelope) is DurableDelivery or envelope.exempt or envelope.reply is not None:
            Mailbox.enqueue(self, envelope)
        else:
            self._require_lane().write(envelope.message, envelope.sender)

    def take(self) -> Any:
        """The next local item; taking a delivery lets the lane claim the next message."""
        item = Mailbox.take(self)
        if type(item) is DurableDelivery and self._lane is not None:
            self._lane.taken(item)
        return item

    def write_durable(self, message: Any, sender: ActorRef | None) -> asyncio.Future[None]:
        """``ref.tell_durable``: a future that completes once the store has the message."""
        lane = self._require_lane()
        done: asyncio.Future[None] = lane.loop.create_future()
        lane.write(message, sender, done)
        return done

    def _require_lane(self) -> DurableLane:
        lane = self._lane
        if lane is None:
            raise RuntimeError("a durable mailbox is used before the runtime attached it")
        return lane
