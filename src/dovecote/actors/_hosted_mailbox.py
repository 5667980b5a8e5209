"""The seam for mailboxes that live outside the process (durable mailboxes).

The core never imports an outer layer. A mailbox an outer layer builds (a ``Mailbox``
subclass handed to the runtime through ``ActorOptions.with_mailbox`` or
``with_durable_mailbox``) may define any of these optional hooks, which the runtime calls:

* ``attach_host(host: MailboxHost)`` — at spawn and at every restart (the new
  incarnation's mailbox): the handle through which it delivers what it fetched.
* ``failure_decided(error, directive)`` — the supervisor decided what a failure of its
  actor means (``Directive.STOP`` for a message that must not come back).

Deliveries are runtime envelopes (classes registered with :func:`register_envelope_type`)
whose ``reply`` is an ``asyncio.Future`` the runtime settles like an ask's: a result when
the handler returned, the handler's exception when it raised, ``ActorStoppedError`` when
the actor stopped before handling it. An envelope with a ``letter`` attribute is not
offered as a reply target (``context.sender`` stays its sender).

``ActorOptions.with_durable_mailbox`` builds its mailbox factory through the function an
outer layer installs with :func:`install_durable_mailbox_factory` (``dovecote.durable``
does on import).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dovecote._errors import OptionsError
from dovecote.actors import _envelope_kinds

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell
    from dovecote.actors._ref import ActorRef
    from dovecote.actors._system import ActorSystem
    from dovecote.mailboxes import Envelope, Mailbox
    from dovecote.supervision import Directive

__all__ = [
    "MailboxHost",
    "durable_mailbox_factory",
    "install_durable_mailbox_factory",
    "notify_attached",
    "notify_decision",
    "register_envelope_type",
]


class MailboxHost:
    """What a hosted mailbox gets from the runtime: its actor and a way to deliver."""

    __slots__ = ("_cell",)

    def __init__(self, cell: ActorCell) -> None:
        self._cell = cell

    @property
    def ref(self) -> ActorRef:
        """The actor's ref."""
        return self._cell._ref

    @property
    def path(self) -> str:
        """The actor's path (``/user/...``)."""
        return self._cell.path

    @property
    def system(self) -> ActorSystem:
        """The actor's system."""
        return self._cell._system

    @property
    def is_terminated(self) -> bool:
        """True once the actor has stopped for good."""
        return self._cell._terminated

    def deliver(self, envelope: Envelope) -> None:
        """Queue ``envelope`` in the actor's current mailbox and schedule a turn (loop thread)."""
        cell = self._cell
        if cell._terminated:
            cell._system._lose(envelope, cell, "recipient-stopped")
            return
        cell._enqueue(envelope)

    def dead_letter(self, message: Any, sender: ActorRef | None, reason: str) -> None:
        """Publish ``message`` as a DeadLetter of this actor with ``reason``."""
        self._cell._system._dead_letter(message, sender, self._cell._ref, reason)


def register_envelope_type(kind: type) -> None:
    """Tell the dispatcher that ``kind`` (matched by exact type) is a runtime envelope."""
    _envelope_kinds.register(kind)


def notify_attached(cell: ActorCell, mailbox: Mailbox) -> None:
    """Hand a hosted mailbox its host (called when a mailbox is attached to a cell)."""
    attach = getattr(mailbox, "attach_host", None)
    if attach is not None:
        attach(MailboxHost(cell))


def notify_decision(cell: ActorCell, error: BaseException, directive: Directive) -> None:
    """Tell a hosted mailbox what its actor's supervisor decided about ``error``."""
    decided = getattr(cell._mailbox, "failure_decided", None)
    if decided is not None:
        decided(error, directive)


_durable_factory: Callable[..., Callable[[], Mailbox]] | None = None


def install_durable_mailbox_factory(factory: Callable[..., Callable[[], Mailbox]]) -> None:
    """Install what ``with_durable_mailbox(store, ...)`` calls to make a mailbox factory."""
    global _durable_factory
    _durable_factory = factory


def durable_mailbox_factory(store: Any, **options: Any) -> Callable[[], Mailbox]:
    """The mailbox factory for a durable mailbox over ``store`` (OptionsError if none)."""
    if _durable_factory is None:
        raise OptionsError(
            "durable mailboxes need dovecote.durable: import it (its stores install them)"
        )
    return _durable_factory(store, **options)
