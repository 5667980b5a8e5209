"""Tells to one node within one event-loop iteration travel as one NATS message.

NATS and nats-py cost about the same per message whatever its size, so tells made
back to back to the same node are collected per node and published once the current
callback is done (one ``call_soon`` per burst, not per tell). A lone tell is published
as itself on its actor's subject; a burst goes to ``<node>._b`` as one BATCH frame
(split below the server's max payload). An ask or stop to a node first flushes that
node's tells, so one sender's tells, asks and stops keep their order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dovecote.remote import _wire as w

if TYPE_CHECKING:
    import asyncio

__all__ = ["Outbox"]

_ENTRY_OVERHEAD = 16  # msgpack array and string headers of one batch entry (generous)
_FRAME_OVERHEAD = 64


class Outbox:
    """Per-node queues of encoded tells, flushed at the end of the loop iteration."""

    __slots__ = ("_limit", "_loop", "_pending", "_publish", "_scheduled")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, publish: Callable[[str, bytes], None]
    ) -> None:
        self._loop = loop
        self._publish = publish
        # node prefix -> (tells as (subject, path, sender, body), their size)
        self._pending: dict[str, tuple[list[tuple[str, str, str | None, bytes]], list[int]]] = {}
        self._scheduled = False
        self._limit = 1_048_576

    def set_limit(self, max_payload: int) -> None:
        """The server's max payload: no batch is larger."""
        self._limit = max_payload

    def add(self, node: str, subject: str, path: str, sender: str | None, body: bytes) -> None:
        """Queue one tell (already encoded and size-checked) for ``node``."""
        queued = self._pending.get(node)
        if queued is None:
            queued = self._pending[node] = ([], [0])
        entries, size = queued
        entries.append((subject, path, sender, body))
        size[0] += len(body) + len(path) + (len(sender) if sender else 0) + _ENTRY_OVERHEAD
        if size[0] > self._limit - _FRAME_OVERHEAD:
            self.flush(node)
        elif not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush_all)

    def holds_any(self) -> bool:
        """True while some tell waits for the end of this iteration."""
        return bool(self._pending)

    def flush(self, node: str) -> None:
        """Publish what is queued for ``node`` now (before an ask or stop to it)."""
        queued = self._pending.pop(node, None)
        if queued is None:
            return
        entries = queued[0]
        if len(entries) == 1:
            subject, _, sender, body = entries[0]
            self._publish(subject, w.encode_frame(w.TELL, sender, body))
            return
        batch: list[Any] = []
        size = _FRAME_OVERHEAD
        for _, path, sender, body in entries:
            entry_size = len(body) + len(path) + (len(sender) if sender else 0) + _ENTRY_OVERHEAD
            if batch and size + entry_size > self._limit:
                self._publish(node + "._b", w.encode_frame(w.BATCH, batch))
                batch, size = [], _FRAME_OVERHEAD
            batch.append((path, sender, body))
            size += entry_size
        self._publish(node + "._b", w.encode_frame(w.BATCH, batch))

    def flush_all(self) -> None:
        """Publish everything queued (the end-of-iteration callback)."""
        self._scheduled = False
        for node in list(self._pending):
            self.flush(node)
