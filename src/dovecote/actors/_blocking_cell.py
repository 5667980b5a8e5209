"""The cell of an actor on the ``"blocking"`` dispatcher: handlers run on worker threads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dovecote.actors import _lifecycle
from dovecote.actors._cell import ActorCell
from dovecote.actors._envelope_kinds import IDLE
from dovecote.dispatch import CoroutineType
from dovecote.mailboxes import Envelope

__all__ = ["BlockingActorCell"]


class BlockingActorCell(ActorCell):
    """A cell on the ``"blocking"`` dispatcher: each handler call runs on a worker thread.

    Every message, bare or enveloped, goes to the pool; the turn ends while the thread
    works and continues when it is done, so it is still one message at a time.
    """

    __slots__ = ()

    def _run(self) -> None:
        """A turn: system messages first, then one user message handed to the pool."""
        system = self._system
        outer = system._running
        system._running = self
        try:
            while True:
                mailbox = self._mailbox
                if mailbox._system is not None:
                    if self._system_step(mailbox):
                        return
                    continue
                if self._suspended:
                    self._scheduled = False  # the supervisor's answer reschedules it
                    return
                if not mailbox.user_count:  # by count: take() may return any message
                    mailbox.take()  # re-arms the growth warning
                    self._scheduled = False
                    return
                item = mailbox.take()
                self._invoke_item(item)  # the thread's completion continues the turn
                if self._stats is not None:
                    self._stats.processed += 1
                if self._awaiting or self._terminated:
                    return
        finally:
            system._running = outer
            if not self._awaiting:
                self._current = IDLE

    def _invoke_bare(self, message: Any) -> None:
        self._current = message
        system = self._system
        loop = system._loop
        self._await(system._blocking.submit(loop, _call_in_thread, self._behavior, message))

    def _invoke(self, env: Envelope) -> None:
        self._current = env
        system = self._system
        loop = system._loop
        self._await(system._blocking.submit(loop, _call_in_thread, self._behavior, env.message))


def _call_in_thread(handler: Callable[[Any], Any], message: Any) -> Any:
    result = handler(message)
    if type(result) is CoroutineType:
        result.close()
        raise TypeError(
            "the 'blocking' dispatcher runs plain functions on threads; make on_receive a "
            "regular def (or use the default dispatcher for async def handlers)"
        )
    return result


_lifecycle._cell_classes[:] = [ActorCell, BlockingActorCell]
