"""Which objects in a user queue are the runtime's envelopes (the rest are bare messages).

A ``tell`` with no sender queues the message itself. Everything else travels in one of
the runtime's envelope classes, recognised by *exact* type. They are private subclasses,
so a message that happens to be an Envelope (the public class or a subclass) is never
mistaken for one of ours, and ``tell`` can queue any message without looking at its type.
"""

from __future__ import annotations

from typing import Any

from dovecote.mailboxes import BareEnvelope, Envelope, ExemptEnvelope

__all__ = [
    "IDLE",
    "RUNTIME_TYPES",
    "Posted",
    "PostedExempt",
    "is_runtime_envelope",
    "register",
    "unwrap",
]


class _Idle:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<no message>"


#: A cell's ``_current`` while it handles no message. Private to the runtime, so no user
#: message can be mistaken for it (``None`` and every other object are valid messages).
IDLE: Any = _Idle()


class Posted(Envelope):
    """The runtime's envelope for a user message: a tell with a sender, or an ask."""

    __slots__ = ()


class PostedExempt(ExemptEnvelope):
    """The runtime's exempt envelope: PoisonPill, Terminated, drain barriers."""

    __slots__ = ()


#: The exact envelope classes the runtime queues (read it through the module: it grows).
#: BareEnvelope is there because a custom mailbox may queue what ``post`` wrapped.
RUNTIME_TYPES: frozenset[type] = frozenset({Posted, PostedExempt, BareEnvelope})


def register(kind: type) -> None:
    """Add a runtime envelope class (the post office's letters)."""
    global RUNTIME_TYPES
    RUNTIME_TYPES = RUNTIME_TYPES | {kind}


def is_runtime_envelope(item: Any) -> bool:
    """True if ``item`` is one of the runtime's envelopes rather than a bare message."""
    return type(item) in RUNTIME_TYPES


def unwrap(item: Any) -> Any:
    """A drained item as it was queued: ``as_envelope``'s wrapper gives back its message."""
    return item.message if type(item) is BareEnvelope else item
