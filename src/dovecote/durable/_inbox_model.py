"""The inbox's value types: what ``handle`` returns and what ``get_stats`` counts."""

from __future__ import annotations

from typing import Generic, TypeVar

import attrs

__all__ = ["InboxOutcome", "InboxStats"]

R = TypeVar("R")


@attrs.frozen(slots=True)
class InboxOutcome(Generic[R]):
    """What ``Inbox.handle`` did: ``fresh`` and the handler's value, or a replay.

    On a first delivery ``fresh`` is True and ``result`` is what the handler returned; on a
    duplicate the handler did not run, ``fresh`` is False and ``result`` is None.
    """

    fresh: bool
    result: R | None = None


@attrs.frozen(slots=True)
class InboxStats:
    """Rows in one inbox table (or one source of it): ``total = processed + unprocessed``."""

    total: int
    processed: int
    unprocessed: int
