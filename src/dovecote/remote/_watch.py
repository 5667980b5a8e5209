"""Death watch across nodes: both halves, on top of the core's own watch bookkeeping.

Watcher side: the first local watcher of a remote actor makes this node send a WATCH
request to the actor's node; ``GONE`` or no responders means it is already dead, so
``Terminated`` comes at once (as it does for a watch made while this node is not
connected to NATS). The actor's stand-in is terminated (each local watcher
told exactly once, by the core) when its node reports TERMINATED or when membership
declares that node down.

Watched side: a WATCH for a live local actor records the watching node; when that
actor stops (the ``ActorStopped`` event), every recorded node gets TERMINATED.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from dovecote._errors import ActorNotFoundError
from dovecote.remote import _wire as w

if TYPE_CHECKING:
    from dovecote.actors import ActorStopped
    from dovecote.remote._node import NatsTransport
    from dovecote.remote._ref import RemoteTarget

__all__ = ["Watches"]

#: how long a WATCH request may go unanswered before membership is left to decide
WATCH_REQUEST_TIMEOUT = 10.0


class Watches:
    """The cross-node death watch of one transport."""

    def __init__(self, transport: NatsTransport) -> None:
        self._t = transport
        self._watched: dict[str, set[RemoteTarget]] = {}  # node prefix -> watched targets
        self._watchers: dict[str, set[str]] = {}  # local path -> watching node prefixes

    # -- watcher side ------------------------------------------------------------------------
    def watch(self, target: RemoteTarget) -> None:
        """A local actor watches ``target``: ask its node to report its death."""
        t = self._t
        watched = self._watched.setdefault(target.node, set())
        if target in watched:
            return
        watched.add(target)
        if not t.connected:  # unreachable now: nobody could tell us of its death later
            t.loop.call_soon(self.gone, target)
            return
        future: asyncio.Future[Any] = t.loop.create_future()
        payload = w.encode_frame(w.WATCH, t.prefix, target.path)
        t.request(target.node + "._c", payload, future, WATCH_REQUEST_TIMEOUT, target.address)

        def answered(f: asyncio.Future[Any]) -> None:
            if f.cancelled():
                return
            error = f.exception()
            if isinstance(error, ActorNotFoundError) or (error is None and f.result() == w.GONE):
                self.gone(target)

        future.add_done_callback(answered)

    def unwatch(self, target: RemoteTarget) -> None:
        """No local actor watches ``target`` any more: tell its node to forget us."""
        watched = self._watched.get(target.node)
        if watched is not None and target in watched:
            watched.discard(target)
            if self._t.connected:
                payload = w.encode_frame(w.UNWATCH, self._t.prefix, target.path)
                self._t.publish(target.node + "._c", payload)

    def gone(self, target: RemoteTarget) -> None:
        """``target`` is dead: its local watchers get Terminated (once, by the core)."""
        watched = self._watched.get(target.node)
        if watched is not None:
            watched.discard(target)
        target.terminated()

    def node_down(self, prefix: str) -> None:
        """Membership declared a node down: all its watched actors are dead to us."""
        for target in self._watched.pop(prefix, ()):
            target.terminated()
        for nodes in self._watchers.values():
            nodes.discard(prefix)

    # -- watched side ----------------------------------------------------------------------------
    def on_control(self, kind: int, frame: list[Any], reply: str) -> None:
        """WATCH / UNWATCH / TERMINATED frames from other nodes."""
        t = self._t
        if kind == w.WATCH:
            node, path = str(frame[1]), str(frame[2])
            try:
                alive = t.system.resolve(path).is_alive
            except (ActorNotFoundError, ValueError):
                alive = False
            if alive:
                self._watchers.setdefault(path, set()).add(node)
            if reply:
                t.answer_now(reply, w.WATCHING if alive else w.GONE)
        elif kind == w.UNWATCH:
            nodes = self._watchers.get(str(frame[2]))
            if nodes is not None:
                nodes.discard(str(frame[1]))
        elif kind == w.TERMINATED:
            target = t.target(f"{frame[1]}{frame[2]}")
            if target is not None:
                self.gone(target)
        else:
            raise ValueError(f"unknown control frame kind {kind!r}")

    def actor_stopped(self, event: ActorStopped) -> None:
        """A local actor stopped: tell the nodes that watch it."""
        nodes = self._watchers.pop(event.ref.path, None)
        t = self._t
        if nodes and t.connected:
            payload = w.encode_frame(w.TERMINATED, t.cluster.self_member.address, event.ref.path)
            for node in nodes:
                t.publish(node + "._c", payload)
