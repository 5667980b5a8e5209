"""Timers owned by an actor: they die when it stops or restarts."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from dovecote._clock import TimerHandle
from dovecote._errors import MailboxFullError

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell
    from dovecote.actors._ref import ActorRef

__all__ = ["Cancellable", "cancel_all", "schedule"]


class Cancellable:
    """A scheduled message; :meth:`cancel` prevents further deliveries."""

    __slots__ = ("_cell", "_handle", "_interval", "_message", "_target", "cancelled")

    def __init__(
        self, cell: ActorCell, interval: float | None, message: Any, target: ActorRef
    ) -> None:
        self._cell = cell
        self._interval = interval
        self._message = message
        self._target = target
        self._handle: TimerHandle | None = None
        self.cancelled = False

    @property
    def is_cancelled(self) -> bool:
        """True once cancelled (by you, or because its actor stopped or restarted)."""
        return self.cancelled

    def cancel(self) -> bool:
        """Cancel; returns False if it was already cancelled or (once-only) already fired."""
        if self.cancelled:
            return False
        self.cancelled = True
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        timers = self._cell._timers
        if timers is not None:
            timers.discard(self)
        return True

    def _fire(self) -> None:
        if self.cancelled:
            return
        cell = self._cell
        if self._interval is None:
            self.cancelled = True
            self._handle = None
            if cell._timers is not None:
                cell._timers.discard(self)
        else:
            self._handle = cell._system.clock.call_later(self._interval, self._fire)
        try:
            self._target.tell(self._message, cell._ref)
        except MailboxFullError:
            cell.log.warning(
                "timer message rejected by a full mailbox", target=self._target.path
            )


def _check_delay(name: str, value: object, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError(f"{name} must be a number of seconds, got {value!r}")
    if value < 0 or (positive and value == 0) or math.isinf(value):
        raise ValueError(
            f"{name} must be {'> 0' if positive else '>= 0'} and finite, got {value!r}"
        )
    return float(value)


def schedule(
    cell: ActorCell,
    delay: float,
    interval: float | None,
    message: Any,
    target: ActorRef | None,
) -> Cancellable:
    """Tell ``message`` to ``target`` after ``delay`` (then every ``interval``, if given)."""
    delay = _check_delay("delay", delay, positive=False)
    if interval is not None:
        interval = _check_delay("interval", interval, positive=True)
    if target is not None and not hasattr(target, "tell"):
        raise TypeError("target must be an ActorRef")
    if cell._terminating or cell._terminated:
        raise RuntimeError(f"{cell.path} is stopping; it cannot start timers")
    timer = Cancellable(cell, interval, message, target if target is not None else cell._ref)
    timer._handle = cell._system.clock.call_later(delay, timer._fire)
    if cell._timers is None:
        cell._timers = set()
    cell._timers.add(timer)
    return timer


def cancel_all(cell: ActorCell) -> None:
    """Cancel every timer the actor owns."""
    timers = cell._timers
    if timers:
        cell._timers = None
        for timer in tuple(timers):
            timer.cancel()
