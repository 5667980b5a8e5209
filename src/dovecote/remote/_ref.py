"""RemoteRef: a ref to an actor on another node, with the ActorRef API."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

from dovecote.actors import ActorRef
from dovecote.actors._ref import check_timeout
from dovecote.actors._remote_seam import RemoteCell

if TYPE_CHECKING:
    from dovecote.remote._node import NatsTransport

__all__ = ["RemoteRef", "RemoteTarget"]

_get_ident = threading.get_ident


class RemoteTarget(RemoteCell):
    """The stand-in of one remote actor (shared by every ref to its address)."""

    __slots__ = ("address", "name", "node", "stopped", "subject", "transport")

    def __init__(
        self, transport: NatsTransport, address: str, node: str, subject: str, path: str
    ) -> None:
        super().__init__(path)
        self.transport = transport
        self.address = address
        self.node = node  # the node's subject prefix
        self.subject = subject
        self.name = path.rsplit("/", 1)[-1]
        self.stopped: asyncio.Future[None] | None = None  # what stop() hands out

    def wait_stopped(self) -> asyncio.Future[None]:
        """A future done once this node learns the actor is gone (watching it remotely)."""
        if self.stopped is None:
            self.stopped = self.transport.loop.create_future()
            if self._terminated:
                self.stopped.set_result(None)
            else:
                self.transport.watches.watch(self)
        return self.stopped

    def terminated(self) -> None:
        super().terminated()
        if self.stopped is not None and not self.stopped.done():
            self.stopped.set_result(None)

    def on_watched(self) -> None:
        self.transport.watches.watch(self)

    def on_unwatched(self) -> None:
        if not self._watchers and self.stopped is None:
            self.transport.watches.unwatch(self)

    def on_stop_requested(self) -> None:
        self.transport.send_stop(self, now=True)

    def stop_now(self) -> asyncio.Future[None]:
        done = self.wait_stopped()
        self.transport.send_stop(self, now=True)
        return done

    def __repr__(self) -> str:
        return f"<RemoteTarget {self.address}>"


class RemoteRef(ActorRef):
    """A ref to an actor of another node: ``tell`` publishes, ``ask`` is a NATS request.

    Made by ``system.resolve(address)`` without a round trip, or by the codec for a ref
    that arrived in a message. Equal (and hashed alike) to any ref with the same address,
    local refs included.
    """

    __slots__ = ()

    _cell: RemoteTarget  # type: ignore[assignment]

    def __init__(self, target: RemoteTarget) -> None:
        self._cell = target

    def tell(self, message: Any, sender: ActorRef | None = None) -> None:
        """Publish ``message`` to the actor; never blocks, never awaits (at most once).

        Raises SerializationError (unregistered type) or MessageTooLargeError before
        anything is sent. While the node is disconnected the message becomes a dead
        letter with reason ``remote-unavailable``.
        """
        target = self._cell
        transport = target.transport
        if _get_ident() != transport.loop_thread:
            transport.loop.call_soon_threadsafe(transport.send_tell, target, message, sender)
            return
        transport.send_tell(target, message, sender)

    def ask(self, message: Any, timeout: float | None = 5.0) -> asyncio.Future[Any]:
        """Send ``message`` now; the future resolves with the remote handler's answer.

        It fails with AskTimeoutError after ``timeout`` seconds (``None``: no deadline),
        ActorNotFoundError when no actor (or no node) is at the address, RemoteError when
        the handler raised, ActorStoppedError when the actor stopped first.
        """
        return self._cell.transport.send_ask(self._cell, message, check_timeout(timeout))

    def stop(self) -> asyncio.Future[None]:
        """Graceful stop: a PoisonPill behind what this node sent before.

        Returns a future done once the actor has terminated (as this node learns it:
        its node reports the stop, or is declared down); not awaiting it is fine. From
        another thread it returns a ``concurrent.futures.Future``.
        """
        target = self._cell
        transport = target.transport
        if _get_ident() != transport.loop_thread:
            return asyncio.run_coroutine_threadsafe(  # type: ignore[return-value]
                _stop_and_wait(self), transport.loop
            )
        done = target.wait_stopped()
        transport.send_stop(target, now=False)
        return done

    @property
    def name(self) -> str:
        """The actor's name (the last path segment)."""
        return self._cell.name

    @property
    def path(self) -> str:
        """The actor's path on its node, e.g. ``/user/orders``."""
        return self._cell.path

    @property
    def address(self) -> str:
        """``nats://<system>@<host><path>``."""
        return self._cell.address

    @property
    def is_alive(self) -> bool:
        """False once this node learned that the actor stopped (or its node went down)."""
        return not self._cell._terminated

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActorRef) and other.address == self._cell.address

    def __hash__(self) -> int:
        return hash(self._cell.path)

    def __repr__(self) -> str:
        return f"RemoteRef({self._cell.address!r})"


async def _stop_and_wait(ref: RemoteRef) -> None:
    await ref.stop()
