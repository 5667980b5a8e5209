"""In-process wake-ups for ``claim_stream``: a send wakes the streams of its mailbox.

Each waiting stream holds the mailbox's current :class:`asyncio.Event`; any change that can
make a message claimable (a send, a release, a commit that unblocks a FIFO sender, a
sweep) sets and replaces it. A stream that found nothing to claim waits for that event or
for a timer to the mailbox's next ``visible_at`` / lease expiry, never polling the table.
The event is taken *before* the claim, so a send that lands while the claim is in flight
is not missed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable

from dovecote._clock import Clock
from dovecote.durable._model import Claim

__all__ = ["MailboxSignals", "now_ms", "stream_claims"]


def now_ms(clock: Clock) -> int:
    """The clock's wall time in integer epoch milliseconds (the store's time base)."""
    return int(clock.wall() * 1000)


class MailboxSignals:
    """One replaceable event per mailbox with someone waiting on it."""

    __slots__ = ("_events", "closed")

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}
        self.closed = False

    def event(self, agent_id: str) -> asyncio.Event:
        """The event the next change to ``agent_id`` will set."""
        event = self._events.get(agent_id)
        if event is None:
            event = self._events[agent_id] = asyncio.Event()
        return event

    def notify(self, agent_id: str) -> None:
        """Something in ``agent_id`` changed: wake its waiters."""
        event = self._events.pop(agent_id, None)
        if event is not None:
            event.set()

    def notify_many(self, agent_ids: Iterable[str]) -> None:
        """:meth:`notify` each mailbox."""
        for agent_id in agent_ids:
            self.notify(agent_id)

    def notify_all(self) -> None:
        """Wake every waiter (a sweep that touched unknown mailboxes, or closing)."""
        events, self._events = self._events, {}
        for event in events.values():
            event.set()

    def close(self) -> None:
        """Wake every waiter for the last time; streams then end."""
        self.closed = True
        self.notify_all()


async def _wait(event: asyncio.Event, delay_s: float | None, clock: Clock) -> None:
    if delay_s is None:
        await event.wait()
        return
    waiter = asyncio.ensure_future(event.wait())
    timer = asyncio.ensure_future(clock.sleep(delay_s))
    try:
        await asyncio.wait((waiter, timer), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (waiter, timer):
            task.cancel()
        for task in (waiter, timer):
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def stream_claims(
    agent_id: str,
    *,
    claim: Callable[[], Awaitable[Claim | None]],
    next_change_ms: Callable[[], Awaitable[int | None]],
    signals: MailboxSignals,
    clock: Clock,
    max_messages: int | None,
) -> AsyncIterator[Claim]:
    """Yield claims as messages become claimable; the body of every ``claim_stream``.

    ``claim`` claims one message (or returns ``None``); ``next_change_ms`` returns the
    earliest time something in the mailbox becomes claimable without a send (a delayed
    message's ``visible_at``, a lease's expiry), or ``None``.
    """
    delivered = 0
    while not signals.closed and (max_messages is None or delivered < max_messages):
        event = signals.event(agent_id)
        found = await claim()
        if found is not None:
            delivered += 1
            yield found
            continue
        wake_at = await next_change_ms()
        if event.is_set() or signals.closed:
            continue
        # backends return times strictly after now; the floor keeps a stale reading from
        # turning into a busy loop
        delay = None if wake_at is None else max(0.001, (wake_at - now_ms(clock)) / 1000)
        await _wait(event, delay, clock)
