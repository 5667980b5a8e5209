"""ActorContext: what an actor can see and do about itself, from inside its handlers."""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from dovecote.actors._actor import Actor
    from dovecote.actors._options import ActorOptions
    from dovecote.actors._ref import ActorRef
    from dovecote.actors._system import ActorSystem
    from dovecote.actors._timers import Cancellable
    from dovecote.actors._type_params import M, R

__all__ = ["ActorContext"]


class ActorContext(abc.ABC):
    """An actor's view of the runtime (``self.context`` inside an Actor).

    Use it only from the actor's own handlers and hooks: it is not thread-safe and
    not meant to be handed to other actors (hand out ``context.self`` instead).
    """

    __slots__ = ()

    @property
    @abc.abstractmethod
    def self(self) -> ActorRef:
        """This actor's ref."""

    @property
    @abc.abstractmethod
    def parent(self) -> ActorRef | None:
        """The parent's ref (the ``/user`` guardian for top-level actors)."""

    @property
    @abc.abstractmethod
    def children(self) -> tuple[ActorRef, ...]:
        """Refs of the live children, in spawn order."""

    @property
    @abc.abstractmethod
    def system(self) -> ActorSystem:
        """The actor system this actor belongs to."""

    @property
    @abc.abstractmethod
    def sender(self) -> ActorRef | None:
        """Sender of the message being handled: the ``sender=`` of tell, a reply ref for
        ask, or None."""

    @abc.abstractmethod
    def spawn(
        self,
        factory: Callable[[], Actor[M, R]],
        name: str | None = None,
        options: ActorOptions | None = None,
    ) -> ActorRef[M, R]:
        """Start a child actor (see ``ActorSystem.spawn``)."""

    @abc.abstractmethod
    def stop(self, ref: ActorRef) -> asyncio.Future[None]:
        """Stop ``ref`` (this actor or another) now: the message in progress finishes, the
        rest of its queue goes to dead letters. Returns a future that completes once it
        has terminated (awaiting it is optional; never await your own)."""

    @abc.abstractmethod
    def watch(self, ref: ActorRef) -> ActorRef:
        """Receive ``Terminated(ref)`` exactly once when ``ref`` stops (at once if dead)."""

    @abc.abstractmethod
    def unwatch(self, ref: ActorRef) -> ActorRef:
        """Stop watching ``ref``; a ``Terminated`` not yet handled is not delivered."""

    @abc.abstractmethod
    def stash(self) -> None:
        """Set the current message aside until :meth:`unstash_all`."""

    @abc.abstractmethod
    def unstash_all(self) -> None:
        """Put every stashed message back at the front of the mailbox, in stash order."""

    @abc.abstractmethod
    def become(self, handler: Callable[[Any], Any], *, discard_old: bool = True) -> None:
        """Handle the next messages with ``handler`` (``on_receive``'s signature).

        ``discard_old=True`` replaces the current behaviour; False pushes on top of it.
        """

    @abc.abstractmethod
    def unbecome(self) -> None:
        """Go back to the previous behaviour (``on_receive`` at the bottom)."""

    @abc.abstractmethod
    def schedule_once(
        self, delay: float, message: Any, target: ActorRef | None = None
    ) -> Cancellable:
        """Tell ``message`` to ``target`` (default: self) after ``delay`` seconds."""

    @abc.abstractmethod
    def schedule_repeatedly(
        self, initial_delay: float, interval: float, message: Any, target: ActorRef | None = None
    ) -> Cancellable:
        """Tell ``message`` after ``initial_delay``, then every ``interval`` seconds."""

    @abc.abstractmethod
    def forward(self, ref: ActorRef) -> None:
        """Pass the current message on to ``ref`` with its original sender and asker.

        ``ref`` then answers the ask (its return value or ``context.reply``); this
        actor's own return value no longer does. Routers are built on it.
        """

    @abc.abstractmethod
    def reply(self, message: Any) -> None:
        """Answer the current message: completes an ask, else tells the sender."""
