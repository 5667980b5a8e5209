"""``ActorOptions.with_durable_mailbox``: checks its arguments and builds the mailbox factory."""

from __future__ import annotations

import unicodedata
from typing import Any

from dovecote._errors import OptionsError
from dovecote.actors._hosted_mailbox import install_durable_mailbox_factory
from dovecote.codec import Codec, default_codec
from dovecote.durable._actor_mailbox import DurableMailbox
from dovecote.durable._lane_spec import LaneSpec
from dovecote.durable._protocol import MailboxStore
from dovecote.durable._retriable import RetriablePredicate, is_retriable

__all__ = ["DEFAULT_CLAIM_AHEAD", "DurableMailboxFactory", "durable_mailbox_factory"]

DEFAULT_CLAIM_AHEAD = 16
"""Most messages a durable actor claims together by default (an adaptive window)."""


class DurableMailboxFactory:
    """The ``mailbox`` factory of durable options: a fresh view per incarnation."""

    __slots__ = ("spec",)

    def __init__(self, spec: LaneSpec) -> None:
        self.spec = spec

    def __call__(self) -> DurableMailbox:
        return DurableMailbox(self.spec)

    def __repr__(self) -> str:
        name = self.spec.mailbox or "<actor path>"
        return f"DurableMailboxFactory({type(self.spec.store).__name__}, mailbox={name!r})"


def _check_mailbox_name(name: object) -> str | None:
    if name is None:
        return None
    if not isinstance(name, str) or not 1 <= len(name.encode()) <= 256:
        raise OptionsError(f"a durable mailbox name is a str of 1-256 bytes, got {name!r}")
    if any(ch.isspace() or unicodedata.category(ch) == "Cc" for ch in name):
        raise OptionsError(
            f"a durable mailbox name has no whitespace or control characters: {name!r}"
        )
    return name


def durable_mailbox_factory(
    store: Any,
    *,
    mailbox: str | None = None,
    codec: Codec | None = None,
    lease_duration_ms: int | None = None,
    retriable: RetriablePredicate | None = None,
    claim_ahead: int = DEFAULT_CLAIM_AHEAD,
) -> DurableMailboxFactory:
    """Validate ``with_durable_mailbox``'s arguments (OptionsError) and make the factory.

    ``retriable(error) -> bool`` decides which handler errors send the message back
    (default: all but those with ``is_retriable = False``, e.g. ``NonRetriableError``).
    Up to ``claim_ahead`` messages are claimed together (one store transaction; fewer
    while the actor's pace says it would not handle them in a quarter of a lease); the
    next round starts once the actor has taken them all. Their leases run from the
    claim. Those behind a failed message are given back with ``unclaim``: their attempts
    are not spent.
    """
    if not isinstance(store, MailboxStore):
        raise OptionsError(f"with_durable_mailbox needs a MailboxStore, got {store!r}")
    if codec is None:
        codec = default_codec
    elif not (
        callable(getattr(codec, "encode", None)) and callable(getattr(codec, "decode", None))
    ):
        raise OptionsError(f"codec must have encode() and decode(), got {codec!r}")
    if lease_duration_ms is not None and (
        not isinstance(lease_duration_ms, int)
        or isinstance(lease_duration_ms, bool)
        or lease_duration_ms < 1
    ):
        raise OptionsError(f"lease_duration_ms must be an int >= 1, got {lease_duration_ms!r}")
    if not isinstance(claim_ahead, int) or isinstance(claim_ahead, bool) or claim_ahead < 1:
        raise OptionsError(f"claim_ahead must be an int >= 1, got {claim_ahead!r}")
    if retriable is not None and not callable(retriable):
        raise OptionsError("retriable must be a callable taking the handler's exception")
    spec = LaneSpec(
        store=store,
        mailbox=_check_mailbox_name(mailbox),
        codec=codec,
        lease_duration_ms=lease_duration_ms,
        retriable=retriable or is_retriable,
        claim_ahead=claim_ahead,
    )
    return DurableMailboxFactory(spec)


install_durable_mailbox_factory(durable_mailbox_factory)
