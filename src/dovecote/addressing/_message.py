"""``MailMessage`` and the header names the post office owns."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

from ._address import MailAddress

__all__ = [
    "DEAD_LETTER_HEADER_PREFIX",
    "HEADER_ATTEMPT",
    "HEADER_DEAD_LETTER_ATTEMPTS",
    "HEADER_DEAD_LETTER_DEPTH",
    "HEADER_DEAD_LETTER_ERROR",
    "HEADER_DEAD_LETTER_REASON",
    "HEADER_DEAD_LETTER_ROUND",
    "HEADER_DEAD_LETTER_TERMINAL",
    "HEADER_DEAD_LETTER_TOPIC",
    "HEADER_MAX_ATTEMPTS",
    "HEADER_ROUND",
    "HEADER_SEND_ID",
    "HEADER_SENT_AT",
    "SYSTEM_HEADERS",
    "MailMessage",
    "is_system_header",
]

HEADER_SEND_ID = "mbx-send-id"
"""Identity of one copy of a letter, minted at the send boundary (never the sender's ``id``)."""
HEADER_SENT_AT = "mbx-sent-at"
HEADER_ATTEMPT = "mbx-attempt"
"""Attempt number inside one delivery's retry chain; restarts at ``1`` after a requeue."""
HEADER_ROUND = "mbx-round"
"""Delivery round: bumped by every hand-out, carried by the copy put back into the queue."""
HEADER_MAX_ATTEMPTS = "mbx-max-attempts"
DEAD_LETTER_HEADER_PREFIX = "mbx-dead-letter"
HEADER_DEAD_LETTER_REASON = "mbx-dead-letter-reason"
HEADER_DEAD_LETTER_ATTEMPTS = "mbx-dead-letter-attempts"
HEADER_DEAD_LETTER_ROUND = "mbx-dead-letter-round"
HEADER_DEAD_LETTER_ERROR = "mbx-dead-letter-error"
HEADER_DEAD_LETTER_TOPIC = "mbx-dead-letter-topic"
HEADER_DEAD_LETTER_DEPTH = "mbx-dead-letter-depth"
HEADER_DEAD_LETTER_TERMINAL = "mbx-dead-letter-terminal"

SYSTEM_HEADERS = frozenset(
    {HEADER_SEND_ID, HEADER_SENT_AT, HEADER_ATTEMPT, HEADER_ROUND, HEADER_MAX_ATTEMPTS}
)
"""Headers only the post office may set; a sender's values for them are stripped."""


def is_system_header(name: str) -> bool:
    """True for headers the post office owns (including every ``mbx-dead-letter*`` one)."""
    lowered = name.lower()
    return lowered in SYSTEM_HEADERS or lowered.startswith(DEAD_LETTER_HEADER_PREFIX)


def _freeze_headers(value: Mapping[str, str] | None) -> Mapping[str, str]:
    return MappingProxyType(dict(value or {}))


@attrs.frozen(slots=True)
class MailMessage:
    """A letter: who it is for, who sent it, a body and string headers.

    Messages are immutable; ``headers`` is a read-only mapping. Each delivery attempt sees
    its own shallow copy (fresh headers, shared ``body``), so key any bookkeeping on
    :attr:`key` (the ``mbx-send-id`` header), never on object identity or on ``id``.
    """

    id: str
    to: MailAddress
    body: Any = attrs.field(default=None, hash=False)
    from_: MailAddress | None = None
    headers: Mapping[str, str] = attrs.field(
        factory=dict, converter=_freeze_headers, hash=False
    )

    @property
    def key(self) -> str | None:
        """The copy key (``mbx-send-id``) stamped at the send boundary, if any."""
        return self.headers.get(HEADER_SEND_ID)

    @property
    def round(self) -> int:
        """The ``mbx-round`` header as an int (0 before the first hand-out)."""
        return _int_header(self.headers, HEADER_ROUND)

    @property
    def attempt(self) -> int:
        """The ``mbx-attempt`` header as an int (0 when unstamped)."""
        return _int_header(self.headers, HEADER_ATTEMPT)

    def with_headers(
        self, updates: Mapping[str, str], *, drop: tuple[str, ...] = ()
    ) -> MailMessage:
        """A shallow copy with ``updates`` applied and the ``drop`` headers removed."""
        headers = {k: v for k, v in self.headers.items() if k not in drop}
        headers.update(updates)
        return attrs.evolve(self, headers=headers)

    def snapshot(self) -> MailMessage:
        """A copy whose body is deep-copied when possible (what ``peek`` hands out)."""
        try:
            body = copy.deepcopy(self.body)
        except Exception:
            body = self.body
        return attrs.evolve(self, body=body, headers=dict(self.headers))


def _int_header(headers: Mapping[str, str], name: str) -> int:
    try:
        return int(headers.get(name, "0"))
    except ValueError:
        return 0
