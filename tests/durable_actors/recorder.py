"""A durable test actor that records what it handled and signals after N messages."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from dovecote import Actor, ActorOptions


class Seen:
    """What the actors of one test handled, in order, and a way to wait for it."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.senders: list[Any] = []
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []

    def add(self, message: Any, sender: Any = None) -> None:
        self.messages.append(message)
        self.senders.append(sender)
        for check, future in list(self._waiters):
            if not future.done() and check():
                future.set_result(None)

    async def wait_for(self, check: Callable[[], bool], timeout: float = 5.0) -> None:
        """Wait until ``check()`` holds (checked after each handled message)."""
        if check():
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((check, future))
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise AssertionError(f"timed out; handled so far: {self.messages!r}") from None

    async def count(self, n: int, timeout: float = 5.0) -> None:
        """Wait until ``n`` messages were handled."""
        await self.wait_for(lambda: len(self.messages) >= n, timeout)


class Recorder(Actor):
    """Records every message; ``("fail", x)`` raises ValueError after recording it."""

    def __init__(self, seen: Seen) -> None:
        super().__init__()
        self.seen = seen

    def on_receive(self, message: Any) -> Any:
        self.seen.add(message, self.context.sender)
        if isinstance(message, list) and message and message[0] == "fail":
            raise ValueError(f"failing on {message!r}")
        return message


def durable(store: Any, **kwargs: Any) -> ActorOptions:
    """Options with a durable mailbox in ``store``."""
    return ActorOptions.create().with_durable_mailbox(store, **kwargs)
