"""Supervisor strategies: which directive to apply to a failed child, and to whom."""

from __future__ import annotations

import abc
import random
from numbers import Real
from typing import Any, ClassVar

import attrs

from dovecote._errors import OptionsError

from ._backoff import Backoff
from ._budget import RestartStats
from ._directive import Decider, Decision, Directive, default_decider

__all__ = ["AllForOneStrategy", "OneForOneStrategy", "SupervisorStrategy"]


def _check_max_restarts(_instance: Any, _attribute: Any, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise OptionsError(f"max_restarts must be an int >= 0, got {value!r}")


def _check_within(_instance: Any, _attribute: Any, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, Real) or not float(value) > 0:
        raise OptionsError(f"within must be a number of seconds > 0, got {value!r}")


def _check_decider(_instance: Any, _attribute: Any, value: object) -> None:
    if not callable(value):
        raise OptionsError(f"decider must be callable, got {value!r}")


def _check_backoff(_instance: Any, _attribute: Any, value: object) -> None:
    if value is not None and not isinstance(value, Backoff):
        raise OptionsError(f"backoff must be a Backoff or None, got {value!r}")


def _decider_repr(decider: Decider) -> str:
    name = getattr(decider, "__qualname__", None)
    return name if isinstance(name, str) else repr(decider)


@attrs.frozen(slots=True)
class SupervisorStrategy(abc.ABC):
    """How a parent treats a failing child; immutable, shareable between parents.

    ``max_restarts`` restarts are allowed per child within any sliding window of ``within``
    seconds (``math.inf`` counts them forever); one more failure that asks for a restart
    stops the child instead, so ``max_restarts=0`` stops on the first failure. The
    ``decider`` maps each error to a :class:`Directive`; ``backoff`` optionally delays
    restarts. Invalid arguments raise :class:`~dovecote.OptionsError`.
    """

    max_restarts: int = attrs.field(default=10, validator=_check_max_restarts)
    within: float = attrs.field(default=60.0, validator=_check_within)
    decider: Decider = attrs.field(
        default=default_decider, validator=_check_decider, repr=_decider_repr
    )
    backoff: Backoff | None = attrs.field(default=None, validator=_check_backoff)

    @property
    @abc.abstractmethod
    def applies_to_all(self) -> bool:
        """Whether a directive applies to every child of the parent or only the failing one."""

    def decide(self, error: BaseException) -> Directive:
        """Ask the decider what to do about ``error``.

        Exceptions from the decider propagate: they are the supervisor's own failure.
        """
        directive = self.decider(error)
        if not isinstance(directive, Directive):
            raise TypeError(
                f"decider {_decider_repr(self.decider)} returned {directive!r}, not a Directive"
            )
        return directive

    def handle_failure(
        self,
        stats: RestartStats,
        error: BaseException,
        now: float,
        rand: float | None = None,
    ) -> Decision:
        """Decide what happens to a child that raised ``error`` at time ``now``.

        The decider goes first; only a RESTART touches ``stats`` (the failing child's restart
        allowance). A restart that would exceed the allowance becomes STOP. An allowed restart
        under a backoff waits ``backoff.delay(n, rand)`` where ``n`` is the number of restarts
        already in the window; ``rand`` defaults to ``random.random()``.
        """
        directive = self.decide(error)
        if directive is not Directive.RESTART:
            return Decision(directive)
        n = stats.request_restart(now, self.max_restarts, self.within)
        if n is None:
            return Decision(Directive.STOP)
        if self.backoff is None:
            return Decision(Directive.RESTART)
        if rand is None:
            rand = random.random()
        return Decision(Directive.RESTART, self.backoff.delay(n, rand))


@attrs.frozen(slots=True)
class OneForOneStrategy(SupervisorStrategy):
    """Apply the directive to the failing child only (the usual choice)."""

    applies_to_all: ClassVar[bool] = False


@attrs.frozen(slots=True)
class AllForOneStrategy(SupervisorStrategy):
    """Apply the directive to every child of the parent, e.g. restart them all together.

    The restart allowance counted is the failing child's.
    """

    applies_to_all: ClassVar[bool] = True
