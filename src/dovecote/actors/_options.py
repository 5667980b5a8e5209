"""ActorOptions: how one actor's mailbox, dispatcher and supervision are set up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import attrs

from dovecote._errors import OptionsError
from dovecote.actors._hosted_mailbox import durable_mailbox_factory
from dovecote.mailboxes import BoundedMailbox, Mailbox, OverflowPolicy
from dovecote.supervision import SupervisorStrategy

__all__ = ["OVERFLOW_POLICIES", "ActorOptions", "DispatcherName"]

#: The overflow policies a bounded mailbox understands.
OVERFLOW_POLICIES = ("drop-head", "drop-new", "reject")
DISPATCHERS = ("default", "blocking")
#: Where an actor's handlers run: the event loop, or a thread pool (checked at run time too).
DispatcherName = Literal["default", "blocking"]


def _check_capacity(_: Any, __: Any, value: object) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise OptionsError(f"mailbox_capacity must be an int >= 1, got {value!r}")


def _check_overflow(_: Any, __: Any, value: object) -> None:
    if value is not None and value not in OVERFLOW_POLICIES:
        raise OptionsError(
            f"unknown mailbox_overflow {value!r}; expected one of {', '.join(OVERFLOW_POLICIES)}"
        )


def _check_mailbox(_: Any, __: Any, value: object) -> None:
    if value is not None and not callable(value):
        raise OptionsError("mailbox must be a zero-argument callable returning a Mailbox")


def _check_dispatcher(_: Any, __: Any, value: object) -> None:
    if value not in DISPATCHERS:
        raise OptionsError(f"unknown dispatcher {value!r}; expected 'default' or 'blocking'")


def _check_strategy(_: Any, __: Any, value: object) -> None:
    if value is not None and not isinstance(value, SupervisorStrategy):
        raise OptionsError("supervisor_strategy must be a SupervisorStrategy")


def _check_throughput(_: Any, __: Any, value: object) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise OptionsError(f"throughput must be an int >= 1, got {value!r}")


@attrs.frozen(slots=True)
class ActorOptions:
    """Immutable per-actor settings, built with keywords or the ``with_*`` builder.

    Each field is checked when set; combinations (a policy without a capacity, a
    custom mailbox together with a capacity or policy) are checked by
    :meth:`validate`, which ``spawn`` calls before it creates anything, so the
    order of ``with_*`` calls never matters.
    """

    mailbox_capacity: int | None = attrs.field(default=None, validator=_check_capacity)
    """Bound for the default FIFO mailbox; ``None`` means unbounded."""
    mailbox_overflow: OverflowPolicy | None = attrs.field(default=None, validator=_check_overflow)
    """What a full bounded mailbox does: drop-head (default with a capacity), drop-new, reject."""
    mailbox: Callable[[], Mailbox] | None = attrs.field(default=None, validator=_check_mailbox)
    """Factory for a mailbox of your own; called once per actor incarnation."""
    dispatcher: DispatcherName = attrs.field(default="default", validator=_check_dispatcher)
    """``"default"`` (the event loop) or ``"blocking"`` (handlers run on a thread pool)."""
    supervisor_strategy: SupervisorStrategy | None = attrs.field(
        default=None, validator=_check_strategy
    )
    """How the parent supervises *this* actor; ``None`` uses the parent's own strategy."""
    throughput: int | None = attrs.field(default=None, validator=_check_throughput)
    """Messages per dispatcher turn for this actor; ``None`` uses the system's setting."""

    @classmethod
    def create(cls) -> ActorOptions:
        """The defaults: unbounded FIFO mailbox, event-loop dispatcher."""
        return _DEFAULT

    def with_mailbox_capacity(self, capacity: int) -> ActorOptions:
        """Bound the default FIFO mailbox at ``capacity`` user messages."""
        return attrs.evolve(self, mailbox_capacity=capacity)

    def with_mailbox_overflow(self, policy: OverflowPolicy) -> ActorOptions:
        """Choose what a full bounded mailbox discards: drop-head, drop-new or reject."""
        return attrs.evolve(self, mailbox_overflow=policy)

    def with_mailbox(self, factory: Callable[[], Mailbox]) -> ActorOptions:
        """Use a mailbox of your own (e.g. a PriorityMailbox), made fresh per incarnation."""
        return attrs.evolve(self, mailbox=factory)

    def with_durable_mailbox(
        self,
        store: Any,
        mailbox: str | None = None,
        *,
        codec: Any = None,
        lease_duration_ms: int | None = None,
        **options: Any,
    ) -> ActorOptions:
        """Keep this actor's messages in a durable ``store`` (see ``dovecote.durable``).

        ``tell`` writes through ``codec`` to the store mailbox ``mailbox`` (default: the
        actor's path); each message is claimed before ``on_receive`` and committed after
        it returns. At-least-once: see docs/durable-actors.md.
        """
        factory = durable_mailbox_factory(
            store, mailbox=mailbox, codec=codec, lease_duration_ms=lease_duration_ms, **options
        )
        return attrs.evolve(self, mailbox=factory)

    def with_dispatcher(self, name: DispatcherName) -> ActorOptions:
        """Run handlers on ``"default"`` (the event loop) or ``"blocking"`` (threads)."""
        return attrs.evolve(self, dispatcher=name)

    def with_supervisor_strategy(self, strategy: SupervisorStrategy) -> ActorOptions:
        """Supervise this actor with ``strategy`` instead of its parent's strategy."""
        return attrs.evolve(self, supervisor_strategy=strategy)

    def with_throughput(self, throughput: int) -> ActorOptions:
        """Process at most ``throughput`` messages per turn before yielding the loop."""
        return attrs.evolve(self, throughput=throughput)

    def validate(self) -> ActorOptions:
        """Raise OptionsError if the fields contradict each other; return self."""
        if self.mailbox_overflow is not None and self.mailbox_capacity is None:
            raise OptionsError(
                f"mailbox_overflow={self.mailbox_overflow!r} needs a mailbox_capacity: "
                "an unbounded mailbox never overflows"
            )
        if self.mailbox is not None and (
            self.mailbox_capacity is not None or self.mailbox_overflow is not None
        ):
            raise OptionsError(
                "with_mailbox replaces the queue; configure the bound on the mailbox you "
                "return instead of combining it with mailbox_capacity/mailbox_overflow"
            )
        return self

    def make_mailbox(self) -> Mailbox:
        """Build a fresh mailbox for one actor incarnation."""
        if self.mailbox is not None:
            mailbox = self.mailbox()
            if not isinstance(mailbox, Mailbox):
                raise OptionsError(
                    f"mailbox factory returned {type(mailbox).__name__}, not a dovecote Mailbox"
                )
            return mailbox
        if self.mailbox_capacity is not None:
            return BoundedMailbox(self.mailbox_capacity, self.mailbox_overflow or "drop-head")
        return Mailbox()


_DEFAULT = ActorOptions()
