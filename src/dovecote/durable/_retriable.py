"""Which handler failures send a durable message back, and which give it up."""

from __future__ import annotations

from collections.abc import Callable

from dovecote._errors import DovecoteError

__all__ = ["NonRetriableError", "RetriablePredicate", "is_retriable"]

RetriablePredicate = Callable[[BaseException], bool]


class NonRetriableError(DovecoteError):
    """Raise it (or subclass it) from a durable actor's handler: the message is given up.

    The store releases it permanently (a ``permanent_failure`` dead letter) instead of
    redelivering it. Any exception with ``is_retriable = False`` counts the same.
    """

    is_retriable = False


def is_retriable(error: BaseException) -> bool:
    """The default predicate: retriable unless ``error.is_retriable`` is ``False``."""
    return getattr(error, "is_retriable", True) is not False
