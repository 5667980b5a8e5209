"""Untrusted input from the wire: counted as dead letters, logged at a bounded rate."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from dovecote.observability import get_logger

if TYPE_CHECKING:
    from dovecote.actors import ActorSystem

__all__ = ["WireLog"]

_log = get_logger("dovecote.remote.wire")


class WireLog:
    """Records a dropped wire message: a dead letter (counted, published) and a log line,
    at most one line per reason every ``interval`` seconds (with how many were skipped)."""

    def __init__(self, system: ActorSystem, interval: float = 5.0) -> None:
        self._system = system
        self._interval = interval
        self._last: dict[str, float] = {}
        self._skipped: dict[str, int] = {}

    def undecodable(self, subject: str, error: Exception) -> None:
        """A frame or body that does not decode (or names an unknown type)."""
        self._drop("undecodable", None, subject, str(error))

    def unknown_recipient(self, subject: str, message: Any) -> None:
        """A message for a path or system this node does not host."""
        self._drop("unknown-recipient", message, subject, "no such actor here")

    def _drop(self, reason: str, message: Any, subject: str, detail: str) -> None:
        # the core's ledger: counted in dead_letters_count and the metric, published
        self._system._dead_letter(message, None, None, reason)
        now = time.monotonic()
        if now - self._last.get(reason, -self._interval) < self._interval:
            self._skipped[reason] = self._skipped.get(reason, 0) + 1
            return
        self._last[reason] = now
        skipped = self._skipped.pop(reason, 0)
        _log.warning(
            "dropped a message from NATS",
            reason=reason,
            subject=subject[:200],
            detail=detail[:200],
            skipped_since_last=skipped,
        )
