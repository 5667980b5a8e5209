"""The yardstick: a minimal hand-written asyncio actor, and its variant with no idle task.

`TaskActor` is a deque plus one task that parks on a future when the deque is empty.
`LazyActor` holds no task at all: the first tell to an idle actor schedules one drain
with ``loop.call_soon``. Neither has supervision, names, metrics or any other feature.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from ._local import STOP, Ask, KitRuntime


class TaskActor:
    __slots__ = ("_loop", "_queue", "_receive", "_task", "_waiter")

    def __init__(self, receive: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._queue: deque[Any] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._receive = receive
        self._loop = loop
        self._task = loop.create_task(self._run())

    def tell(self, message: Any) -> None:
        self._queue.append(message)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            waiter.set_result(None)

    def ask(self, message: Any) -> asyncio.Future[Any]:
        future = self._loop.create_future()
        self.tell(Ask(message, future))
        return future

    def stop(self) -> None:
        self.tell(STOP)

    @property
    def is_alive(self) -> bool:
        return not self._task.done()

    async def _run(self) -> None:
        queue = self._queue
        receive = self._receive
        while True:
            while queue:
                message = queue.popleft()
                if type(message) is Ask:
                    message.future.set_result(receive(message.message))
                elif message is STOP:
                    return
                else:
                    receive(message)
            self._waiter = self._loop.create_future()
            await self._waiter


class LazyActor:
    __slots__ = ("_loop", "_queue", "_receive", "_scheduled", "is_alive")

    def __init__(self, receive: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._queue: deque[Any] = deque()
        self._scheduled = False
        self._receive = receive
        self._loop = loop
        self.is_alive = True

    def tell(self, message: Any) -> None:
        self._queue.append(message)
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._drain)

    def ask(self, message: Any) -> asyncio.Future[Any]:
        future = self._loop.create_future()
        self.tell(Ask(message, future))
        return future

    def stop(self) -> None:
        self.tell(STOP)

    def _drain(self) -> None:
        queue = self._queue
        receive = self._receive
        while queue:
            message = queue.popleft()
            if type(message) is Ask:
                message.future.set_result(receive(message.message))
            elif message is STOP:
                self.is_alive = False
                queue.clear()
                break
            else:
                receive(message)
        self._scheduled = False


class HandwrittenRuntime(KitRuntime):
    name = "handwritten"
    actor_cls = TaskActor


class LazyHandwrittenRuntime(KitRuntime):
    name = "handwritten_lazy"
    actor_cls = LazyActor
