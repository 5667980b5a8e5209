"""Exponential backoff with jitter between restarts."""

from __future__ import annotations

import math
import random
from numbers import Real

import attrs

from dovecote._errors import OptionsError

__all__ = ["Backoff"]

# 2.0 ** 1024 overflows a float; past this exponent the cap has long since been reached.
_MAX_EXPONENT = 1023


def _is_number(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


@attrs.frozen(slots=True)
class Backoff:
    """Restart delays that double from ``min_delay`` up to ``max_delay``, plus jitter.

    The delay before a restart is ``min(max_delay, min_delay * 2**n) * (1 + rand *
    random_factor)``, where ``n`` counts the restarts already made in the strategy's window
    and ``rand`` is uniform in ``[0, 1]``, so jitter only ever lengthens a delay.
    ``max_delay`` may be ``math.inf`` for an uncapped backoff. Invalid values raise
    :class:`~dovecote.OptionsError`.
    """

    min_delay: float
    max_delay: float
    random_factor: float = 0.2

    def __attrs_post_init__(self) -> None:
        for name in ("min_delay", "max_delay", "random_factor"):
            value = getattr(self, name)
            if not _is_number(value) or math.isnan(value):
                raise OptionsError(f"Backoff {name} must be a real number, got {value!r}")
        if not (0 < self.min_delay < math.inf):
            raise OptionsError(f"Backoff min_delay must be > 0 and finite, got {self.min_delay!r}")
        if not self.max_delay >= self.min_delay:
            raise OptionsError(
                f"Backoff max_delay ({self.max_delay!r}) must be >= min_delay ({self.min_delay!r})"
            )
        if not (0 <= self.random_factor < math.inf):
            raise OptionsError(
                f"Backoff random_factor must be >= 0 and finite, got {self.random_factor!r}"
            )

    def delay(self, n: int, rand: float | None = None) -> float:
        """Seconds to wait before a restart that has ``n`` restarts before it in the window.

        ``rand`` must lie in ``[0, 1]``; when omitted it is drawn from ``random.random()``.
        """
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be an int >= 0, got {n!r}")
        if rand is None:
            rand = random.random()
        elif not 0.0 <= rand <= 1.0:
            raise ValueError(f"rand must lie in [0, 1], got {rand!r}")
        base = min(self.max_delay, self.min_delay * 2.0 ** min(n, _MAX_EXPONENT))
        return float(base * (1.0 + rand * self.random_factor))
