"""Checking the keywords of ``ActorSystem(...)`` before anything is built."""

from __future__ import annotations

import math
import re

from dovecote._clock import Clock
from dovecote._errors import InvalidActorNameError, InvalidTimeoutError, OptionsError
from dovecote.actors._names import NAME_PATTERN
from dovecote.actors._ref import check_timeout
from dovecote.supervision import SupervisorStrategy

__all__ = ["check_system_options"]

_HOST = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252}[A-Za-z0-9])?")


def check_system_options(
    name: object,
    host: object,
    throughput: object,
    dispatch_slice: object,
    guardian_strategy: object,
    blocking_workers: object,
    dead_letter_log_limit: object,
    clock: object,
    interrupt_timeout: float | None,
) -> float:
    """Raise for the first invalid keyword, in this order; return the interrupt timeout.

    A bad name is an :class:`InvalidActorNameError`, anything else an :class:`OptionsError`.
    """
    if not isinstance(name, str) or NAME_PATTERN.fullmatch(name) is None:
        raise InvalidActorNameError(
            f"invalid system name {name!r}: use 1-255 characters from [A-Za-z0-9_.~-], "
            "starting with a letter or digit"
        )
    if not isinstance(host, str) or _HOST.fullmatch(host) is None:
        raise OptionsError(f"invalid host {host!r}")
    if not _is_int_at_least(throughput, 1):
        raise OptionsError(f"throughput must be an int >= 1, got {throughput!r}")
    if (
        isinstance(dispatch_slice, bool)
        or not isinstance(dispatch_slice, (int, float))
        or not dispatch_slice >= 0
        or dispatch_slice == math.inf
    ):
        raise OptionsError(
            f"dispatch_slice must be a finite number of seconds >= 0, got {dispatch_slice!r}"
        )
    if guardian_strategy is not None and not isinstance(guardian_strategy, SupervisorStrategy):
        raise OptionsError("guardian_strategy must be a SupervisorStrategy")
    if blocking_workers is not None and not _is_int_at_least(blocking_workers, 1):
        raise OptionsError(
            f"blocking_workers must be an int >= 1 or None, got {blocking_workers!r}"
        )
    if not _is_int_at_least(dead_letter_log_limit, 0):
        raise OptionsError(
            f"dead_letter_log_limit must be an int >= 0, got {dead_letter_log_limit!r}"
        )
    if clock is not None and not isinstance(clock, Clock):
        raise OptionsError(
            f"clock must implement dovecote.Clock (now, wall, sleep, call_later), got {clock!r}"
        )
    try:
        return check_timeout(interrupt_timeout, "interrupt_timeout")
    except InvalidTimeoutError as error:  # an option: the same error as every other one
        raise OptionsError(str(error)) from None


def _is_int_at_least(value: object, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least
