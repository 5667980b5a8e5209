"""The seam through which an outer layer (``dovecote.remote``) reaches other processes.

The core never imports a transport. ``ActorSystem(remote=...)`` takes either a URL,
whose scheme names a transport registered here (``dovecote.remote`` registers ``nats``
when it is imported, and the system imports the module named in ``_PROVIDERS`` by name
if nobody has yet), or a config object with ``open_transport(system)``.

A remote actor is represented in this process by a :class:`RemoteCell` stand-in: it
carries the attributes death watch reads (``_terminated``, ``_watchers``, ``_ref``) so
``context.watch(remote_ref)`` uses the same bookkeeping as a local watch, and tells the
transport when it gains or loses a watcher, or is stopped with ``context.stop``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from dovecote._errors import DovecoteError, OptionsError
from dovecote.actors._envelope_kinds import Posted

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell
    from dovecote.actors._ref import ActorRef
    from dovecote.actors._system import ActorSystem

__all__ = [
    "RemoteCell",
    "RemoteConfig",
    "RemoteTransport",
    "cluster_of",
    "queue_ask",
    "register_remote_scheme",
    "remote_config",
]


class RemoteTransport(Protocol):
    """What an actor system needs from the layer that links it to other processes."""

    scheme: str

    @property
    def cluster(self) -> Any:
        """The membership view (``members``, ...)."""

    async def start(self) -> None:
        """Connect and join; raises if the transport cannot be reached."""

    async def close(self) -> None:
        """Leave and disconnect, delivering what is in flight."""

    def resolve(self, address: str) -> ActorRef:
        """A ref to an actor of another node (no round trip); ActorNotFoundError if the
        address is not one this transport serves."""


class RemoteConfig(Protocol):
    """A transport's configuration: it opens the transport for one system."""

    def open_transport(self, system: ActorSystem) -> RemoteTransport:
        """Make (not yet start) the transport of ``system``."""


_FACTORIES: dict[str, Callable[[str], RemoteConfig]] = {}
#: the module that registers each known scheme, imported by name on first use
_PROVIDERS = {"nats": "dovecote.remote"}


def register_remote_scheme(scheme: str, factory: Callable[[str], RemoteConfig]) -> None:
    """Let ``ActorSystem(remote="<scheme>://...")`` build its config with ``factory(url)``."""
    _FACTORIES[scheme] = factory


def remote_config(remote: object) -> RemoteConfig:
    """The config behind ``ActorSystem(remote=...)``: a URL or a config object."""
    if not isinstance(remote, str):
        if not callable(getattr(remote, "open_transport", None)):
            raise OptionsError(
                f"remote must be a URL such as 'nats://127.0.0.1:4222' or a remote config "
                f"object, not {remote!r}"
            )
        return remote  # type: ignore[return-value]
    scheme = remote.partition("://")[0].lower() if "://" in remote else ""
    if scheme not in _FACTORIES and scheme in _PROVIDERS:
        importlib.import_module(_PROVIDERS[scheme])  # registers the scheme
    factory = _FACTORIES.get(scheme)
    if factory is None:
        known = ", ".join(sorted({*_FACTORIES, *_PROVIDERS}))
        raise OptionsError(f"unknown remote scheme in {remote!r} (known: {known})")
    return factory(remote)


def queue_ask(ref: ActorRef, message: Any, reply: Any) -> bool:
    """Queue ``message`` for a local actor as an ask whose answer settles ``reply`` (a
    future the transport made, e.g. one that sends the answer the moment it is set).

    True if queued, in lane order, exactly as ``ref.ask`` would queue it. False when the
    actor has stopped or its mailbox is not a plain one: then use ``ref.ask``.
    """
    if ref._cell._queue is None:
        return False
    ref.tell(Posted(message, None, reply))  # a runtime envelope travels bare onto the queue
    return True


def cluster_of(system: ActorSystem) -> Any:
    """``system.cluster``: its transport's cluster, or a clear error without one."""
    if system._remote is None:
        raise DovecoteError(f"system {system.name!r} has no remote transport (remote=...)")
    return system._remote.cluster


class _Done:
    """An awaitable that is already complete (the base stand-in knows no more)."""

    def __await__(self) -> Any:
        return iter(())


_DONE = _Done()


class RemoteCell:
    """This process's stand-in for an actor that lives in another process.

    Death watch treats it like a cell: watchers are kept in ``_watchers`` and told
    ``Terminated(_ref)`` once :meth:`terminated` is called. Subclasses (the transport's)
    override the ``on_*`` hooks.
    """

    __slots__ = ("__weakref__", "_ref", "_terminated", "_watchers", "_watching", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self._terminated = False
        self._watchers: set[ActorCell] | None = None
        self._watching: set[Any] | None = None  # a stand-in watches nobody
        self._ref: ActorRef = None  # type: ignore[assignment]  # set by the ref's creator

    def on_watched(self) -> None:
        """A local actor started watching this one."""

    def on_unwatched(self) -> None:
        """A local actor stopped watching this one."""

    def on_stop_requested(self) -> None:
        """``context.stop(ref)`` / ``system.stop(ref)`` of the remote actor."""

    def stop_now(self) -> Any:
        """Request an immediate stop; an awaitable done once the actor is gone."""
        self.on_stop_requested()
        return _DONE


    def terminated(self) -> None:
        """The remote actor is gone: every local watcher gets ``Terminated`` once."""
        if self._terminated:
            return
        self._terminated = True
        from dovecote.actors._death_watch import on_terminated

        on_terminated(self)  # type: ignore[arg-type]  # duck-typed: watchers and _ref
