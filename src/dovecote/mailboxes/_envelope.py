"""Envelopes: a message plus what the runtime needs to deliver it."""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "EMPTY",
    "BareEnvelope",
    "Envelope",
    "ExemptEnvelope",
    "SystemEnvelope",
    "as_envelope",
    "is_exempt",
    "message_of",
]


class Envelope:
    """One queued message with its sender and an opaque reply handle.

    ``reply`` belongs to the runtime (an ask future); mailboxes never look at it.
    The two flags are class attributes, so choosing a subclass costs no memory:
    ``exempt`` envelopes are never dropped or rejected by an overflow policy and
    ``system`` envelopes are runtime signals. Envelopes compare by identity.
    """

    __slots__ = ("message", "reply", "sender")

    exempt: ClassVar[bool] = False
    system: ClassVar[bool] = False
    keeps_priority: ClassVar[bool] = False
    """For exempt envelopes: keep ``priority_for``'s tier instead of going to the tail."""

    message: Any
    sender: Any
    reply: Any

    def __init__(self, message: Any, sender: Any = None, reply: Any = None) -> None:
        self.message = message
        self.sender = sender
        self.reply = reply

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, sender={self.sender!r})"


class ExemptEnvelope(Envelope):
    """A user message that overflow policies must never drop or reject (PoisonPill, Terminated)."""

    __slots__ = ()

    exempt: ClassVar[bool] = True


class SystemEnvelope(Envelope):
    """A runtime signal; it travels in the system queue, ahead of every user message."""

    __slots__ = ()

    exempt: ClassVar[bool] = True
    system: ClassVar[bool] = True


class BareEnvelope(Envelope):
    """A bare message (no sender, no reply) in envelope form: what :func:`as_envelope`
    hands out for one, and what ``Mailbox.post`` passes to an overriding ``enqueue``.

    A distinct class, so the runtime can unwrap exactly these and keep any other object,
    an Envelope told as a message included, as it was. Not a message type: do not tell one.
    """

    __slots__ = ()


class _Empty:
    __slots__ = ()

    def __repr__(self) -> str:
        return "EMPTY"


#: Returned by ``Mailbox.take()`` when the user queue is empty (``None`` is a valid message).
#: Private to the mailboxes: it is not exported, and neither a mailbox nor the runtime
#: takes it to mean "empty" while the queue holds messages, so even this object, told as
#: a message, is delivered like any other.
EMPTY: Any = _Empty()


# A user queue holds *items*: an Envelope, or a bare message that was posted with no
# sender and no reply (``Mailbox.post``), which saves an allocation per message.
def is_exempt(item: Any) -> bool:
    """True if ``item`` is an envelope exempt from overflow policies."""
    return isinstance(item, Envelope) and item.exempt


def message_of(item: Any) -> Any:
    """The message an item carries."""
    return item.message if isinstance(item, Envelope) else item


def as_envelope(item: Any) -> Envelope:
    """``item`` as an Envelope (a bare message gets one, with no sender)."""
    return item if isinstance(item, Envelope) else BareEnvelope(item)
