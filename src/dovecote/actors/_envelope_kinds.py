"""Which objects in a user queue are the runtime's envelopes (the rest are bare messages).

A ``tell`` with no sender queues the message itself. Everything else travels in one of
the runtime's envelope classes, recognised by *exact* type, so a message that happens to
be an Envelope (or a subclass) is never mistaken for one of ours.
"""

from __future__ import annotations

from typing import Any

from dovecote.mailboxes import Envelope, ExemptEnvelope

__all__ = ["RUNTIME_TYPES", "is_runtime_envelope", "register"]

#: The exact envelope classes the runtime queues (read it through the module: it grows).
RUNTIME_TYPES: frozenset[type] = frozenset({Envelope, ExemptEnvelope})


def register(kind: type) -> None:
    """Add a runtime envelope class (the post office's letters)."""
    global RUNTIME_TYPES
    RUNTIME_TYPES = RUNTIME_TYPES | {kind}


def is_runtime_envelope(item: Any) -> bool:
    """True if ``item`` is one of the runtime's envelopes rather than a bare message."""
    return type(item) in RUNTIME_TYPES
