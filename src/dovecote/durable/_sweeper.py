"""The store's owned background sweeper: one task, one tick every ``interval`` seconds.

A tick is exactly ``store.sweep()``: expired leases back to pending, TTL-expired
messages to the dead letters, dead letters past ``dlq_retention_ms`` purged. The task is
owned (started by the store, cancelled and awaited by ``close()``); a failing tick is
logged with its traceback, counted in :attr:`Sweeper.failures` and kept in
:attr:`Sweeper.last_error`, and the next tick runs as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Awaitable, Callable

from dovecote._clock import Clock
from dovecote.durable._errors import InvalidRequestError
from dovecote.durable._model import SweepResult
from dovecote.observability import get_logger

__all__ = ["Sweeper", "check_sweep_interval"]

_log = get_logger("dovecote.durable.sweeper")


def check_sweep_interval(value: object) -> float | None:
    """``None`` (no background sweeper) or a positive, finite number of seconds."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InvalidRequestError(
            f"sweep_interval must be a positive number of seconds or None, not {value!r}"
        )
    return float(value)


class Sweeper:
    """Runs ``sweep`` every ``interval`` seconds of ``clock`` time until stopped."""

    __slots__ = ("_clock", "_interval", "_sweep", "_task", "failures", "last_error", "ticks")

    def __init__(
        self, sweep: Callable[[], Awaitable[SweepResult]], interval: float, clock: Clock
    ) -> None:
        self._sweep = sweep
        self._interval = interval
        self._clock = clock
        self._task: asyncio.Task[None] | None = None
        self.ticks = 0
        self.failures = 0
        self.last_error: BaseException | None = None

    @property
    def running(self) -> bool:
        """Whether the task is alive."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the task on the running loop (once)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="dovecote-store-sweeper"
            )

    async def _run(self) -> None:
        while True:
            await self._clock.sleep(self._interval)
            try:
                await self._sweep()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # a failed tick must not end the sweeper
                self.failures += 1
                self.last_error = error
                _log.exception("store sweep failed; retrying next tick", failures=self.failures)
            else:
                self.ticks += 1

    async def stop(self) -> None:
        """Cancel the task and wait for it to finish (idempotent)."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
