"""EventRecorder: keeps what the event stream published, for a test to look at."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from dovecote.actors import DeadLetter
from dovecote.testkit._probe import _check_timeout

if TYPE_CHECKING:
    from dovecote.actors import ActorSystem

__all__ = ["EventRecorder"]


class EventRecorder:
    """Subscribes to ``system.event_stream`` and records every event of ``event_type``.

    Use it as a context manager (or call :meth:`close`) to unsubscribe. ``events`` is
    everything so far; ``dead_letters`` the ``DeadLetter`` events among them;
    ``await expect(...)`` waits for the next matching event.
    """

    def __init__(self, system: ActorSystem, event_type: type = object) -> None:
        self.events: list[Any] = []
        self._changed = asyncio.Event()
        self._subscription = system.event_stream.subscribe(self._record, event_type)

    def _record(self, event: Any) -> None:
        self.events.append(event)
        self._changed.set()

    @property
    def dead_letters(self) -> list[DeadLetter]:
        """The ``DeadLetter`` events recorded so far."""
        return [e for e in self.events if isinstance(e, DeadLetter)]

    def of_type(self, event_type: type) -> list[Any]:
        """The recorded events that are instances of ``event_type``."""
        return [e for e in self.events if isinstance(e, event_type)]

    async def expect(
        self, match: type | Callable[[Any], bool], *, timeout: float = 3.0
    ) -> Any:
        """The first recorded event (past or future) that is a ``match`` instance or
        satisfies the predicate ``match``; ``AssertionError`` after ``timeout`` seconds."""
        timeout = _check_timeout("timeout", timeout)

        def hit(event: Any) -> bool:
            return isinstance(event, match) if isinstance(match, type) else bool(match(event))

        async def wait() -> Any:
            seen = 0
            while True:
                for event in self.events[seen:]:
                    if hit(event):
                        return event
                seen = len(self.events)
                self._changed.clear()
                await self._changed.wait()

        try:
            return await asyncio.wait_for(wait(), timeout)
        except TimeoutError:
            raise AssertionError(
                f"no matching event within {timeout}s; recorded: {self.events!r}"
            ) from None

    def close(self) -> None:
        """Stop recording."""
        self._subscription.unsubscribe()

    def __enter__(self) -> EventRecorder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
