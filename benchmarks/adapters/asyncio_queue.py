"""Baseline: each actor is a plain ``asyncio.Queue`` and one consumer task."""

from __future__ import annotations

import asyncio
from typing import Any

from ._local import STOP, Ask, KitRuntime


class QueueActor:
    __slots__ = ("_loop", "_queue", "_receive", "_task", "tell")

    def __init__(self, receive: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self.tell = self._queue.put_nowait
        self._receive = receive
        self._loop = loop
        self._task = loop.create_task(self._run())

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
        get = self._queue.get
        receive = self._receive
        while True:
            message = await get()
            if type(message) is Ask:
                message.future.set_result(receive(message.message))
            elif message is STOP:
                return
            else:
                receive(message)


class QueueRuntime(KitRuntime):
    name = "asyncio_queue"
    actor_cls = QueueActor
