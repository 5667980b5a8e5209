"""Retry policy maths and per-delivery results, shared by every provider.

Exported so that another transport (an RPC layer, say) can reuse the same retriable
check and backoff instead of writing its own.
"""

from __future__ import annotations

import enum
import errno
import math
from collections.abc import Sequence

import attrs

from dovecote._errors import OptionsError

__all__ = [
    "BroadcastVerdict",
    "DeliveryOutcome",
    "DeliveryResult",
    "RetriableError",
    "RetryPolicy",
    "is_retriable_error",
    "next_retry_delay",
    "settle_broadcast",
    "should_requeue_after_broadcast",
]

_RETRIABLE_CODES = frozenset({503, 504, "503", "504", "ECONNRESET", "ETIMEDOUT"})
_RETRIABLE_ERRNOS = frozenset({errno.ECONNRESET, errno.ETIMEDOUT})


class RetriableError(Exception):
    """Raise this (or any error with ``is_retriable = True``) to have a delivery requeued."""

    is_retriable = True


def is_retriable_error(error: BaseException) -> bool:
    """Whether a failed delivery should go back to the queue rather than be given up.

    Retriable means ``error.is_retriable is True``, or ``error.code`` is one of 503, 504,
    ``"ECONNRESET"``, ``"ETIMEDOUT"``, or an :class:`OSError` whose ``errno`` is
    ``ECONNRESET`` / ``ETIMEDOUT``, or a :class:`TimeoutError`. Everything else is fatal.
    """
    if getattr(error, "is_retriable", False) is True:
        return True
    code = getattr(error, "code", None)
    if isinstance(code, (int, str)) and code in _RETRIABLE_CODES:
        return True
    if isinstance(error, TimeoutError):
        return True
    return isinstance(error, OSError) and error.errno in _RETRIABLE_ERRNOS


def _check_attempts(_: object, __: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionsError(f"max_attempts must be an int >= 1, got {value!r}")


def _check_delay(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OptionsError(f"{attribute.name} must be a number of seconds, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise OptionsError(f"{attribute.name} must be finite and >= 0, got {value!r}")


@attrs.frozen(slots=True)
class RetryPolicy:
    """Opt-in redelivery of a failing subscriber with exponential backoff.

    ``max_attempts`` counts the first try. The wait before attempt ``n + 1`` is
    ``base_delay * 2 ** (n - 1)`` seconds. Only the failing subscriber is retried.
    """

    max_attempts: int = attrs.field(validator=_check_attempts)
    base_delay: float = attrs.field(default=1.0, validator=_check_delay)

    def delay_after(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        return next_retry_delay(self.base_delay, attempt)


def next_retry_delay(base_delay: float, attempt: int) -> float:
    """Exponential backoff: ``base_delay * 2 ** (attempt - 1)``."""
    return float(base_delay * 2 ** max(0, attempt - 1))


class DeliveryOutcome(enum.StrEnum):
    """How one delivery (one subscriber, one copy, its whole retry chain) ended."""

    HANDLED = "handled"
    RETRIABLE = "retriable"
    FATAL = "fatal"
    CANCELLED = "cancelled"


@attrs.frozen(slots=True)
class DeliveryResult:
    """The settled result of one delivery; ``delivery_id`` is subscription id + copy key."""

    delivery_id: str
    subscription_id: str
    outcome: DeliveryOutcome
    attempts: int
    error: str | None = None

    @property
    def succeeded(self) -> bool:
        """True when the callback returned normally."""
        return self.outcome is DeliveryOutcome.HANDLED


class BroadcastVerdict(enum.StrEnum):
    """What happens to a message once every delivery of its broadcast has settled."""

    HANDLED = "handled"
    REQUEUE = "requeue"
    GIVE_UP = "give-up"


def settle_broadcast(results: Sequence[DeliveryResult]) -> BroadcastVerdict:
    """Apply the settlement table.

    Some delivery succeeded -> handled (failures go to the dead-letter hook); every
    delivery failed retriably (or was cancelled) -> requeue once; every delivery failed
    fatally -> give up. A broadcast with no deliveries at all is requeued.
    """
    if any(result.succeeded for result in results):
        return BroadcastVerdict.HANDLED
    if results and all(result.outcome is DeliveryOutcome.FATAL for result in results):
        return BroadcastVerdict.GIVE_UP
    return BroadcastVerdict.REQUEUE


def should_requeue_after_broadcast(results: Sequence[DeliveryResult]) -> bool:
    """True when the message must go back to the queue (nobody handled it, not all fatal)."""
    return settle_broadcast(results) is BroadcastVerdict.REQUEUE
