"""Pools and groups: router factories handed to ``spawn``.

``system.spawn(RoundRobinPool(4, Worker), "workers")`` spawns a router actor whose ref
routes each message to one of four ``Worker`` children; a ``...Group(refs)`` routes to
actors that already exist. The factory is called again when the router restarts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from dovecote._errors import OptionsError
from dovecote.actors import Actor, ActorOptions, ActorRef
from dovecote.routing._logic import (
    BroadcastLogic,
    ConsistentHashingLogic,
    RandomLogic,
    RoundRobinLogic,
    RoutingLogic,
    SmallestMailboxLogic,
)
from dovecote.routing._router import RouterActor
from dovecote.supervision import SupervisorStrategy

__all__ = [
    "BroadcastGroup",
    "BroadcastPool",
    "ConsistentHashingGroup",
    "ConsistentHashingPool",
    "Pool",
    "RandomGroup",
    "RandomPool",
    "RoundRobinGroup",
    "RoundRobinPool",
    "SmallestMailboxGroup",
    "SmallestMailboxPool",
]


class Pool:
    """A router that creates and supervises ``n`` routees from ``factory``.

    ``routee_options`` apply to every routee; ``strategy`` supervises them (default
    ``OneForOneStrategy()``: a failing routee restarts; one that stops is replaced).
    """

    def __init__(
        self,
        n: int,
        factory: Callable[[], Actor],
        *,
        routee_options: ActorOptions | None = None,
        strategy: SupervisorStrategy | None = None,
    ) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise OptionsError(f"a pool needs at least one routee, got n={n!r}")
        if not callable(factory):
            raise OptionsError("a pool needs a routee factory (an Actor subclass or callable)")
        if routee_options is not None:
            routee_options = routee_options.validate()
        self.n = n
        self.factory = factory
        self.routee_options = routee_options
        self.strategy = strategy

    def make_logic(self) -> RoutingLogic:
        """A fresh routing logic for one router incarnation."""
        raise NotImplementedError

    def __call__(self) -> RouterActor:
        return RouterActor(
            self.make_logic(),
            size=self.n,
            factory=self.factory,
            routee_options=self.routee_options,
            strategy=self.strategy,
        )


class Group:
    """A router over existing actors; stopping the group does not stop them."""

    def __init__(self, refs: Iterable[ActorRef]) -> None:
        routees = tuple(refs)
        if not routees:
            raise OptionsError("a group needs at least one routee ref")
        if not all(isinstance(r, ActorRef) for r in routees):
            raise OptionsError("a group's routees must be ActorRefs")
        self.refs = routees

    def make_logic(self) -> RoutingLogic:
        """A fresh routing logic for one router incarnation."""
        raise NotImplementedError

    def __call__(self) -> RouterActor:
        return RouterActor(self.make_logic(), refs=self.refs)


class RoundRobinPool(Pool):
    """Each routee in turn."""

    def make_logic(self) -> RoutingLogic:
        return RoundRobinLogic()


class RandomPool(Pool):
    """A routee chosen at random for each message."""

    def make_logic(self) -> RoutingLogic:
        return RandomLogic()


class SmallestMailboxPool(Pool):
    """The routee with the fewest queued messages."""

    def make_logic(self) -> RoutingLogic:
        return SmallestMailboxLogic()


class BroadcastPool(Pool):
    """Every message to every routee."""

    def make_logic(self) -> RoutingLogic:
        return BroadcastLogic()


class ConsistentHashingPool(Pool):
    """Messages with equal ``key(message)`` always go to the same routee."""

    def __init__(
        self,
        n: int,
        factory: Callable[[], Actor],
        *,
        key: Callable[[Any], object],
        routee_options: ActorOptions | None = None,
        strategy: SupervisorStrategy | None = None,
    ) -> None:
        if not callable(key):
            raise OptionsError("ConsistentHashingPool needs key=callable(message)")
        super().__init__(n, factory, routee_options=routee_options, strategy=strategy)
        self.key = key

    def make_logic(self) -> RoutingLogic:
        return ConsistentHashingLogic(self.key)


class RoundRobinGroup(Group):
    """Each member in turn."""

    def make_logic(self) -> RoutingLogic:
        return RoundRobinLogic()


class RandomGroup(Group):
    """A member chosen at random for each message."""

    def make_logic(self) -> RoutingLogic:
        return RandomLogic()


class SmallestMailboxGroup(Group):
    """The member with the fewest queued messages."""

    def make_logic(self) -> RoutingLogic:
        return SmallestMailboxLogic()


class BroadcastGroup(Group):
    """Every message to every member."""

    def make_logic(self) -> RoutingLogic:
        return BroadcastLogic()


class ConsistentHashingGroup(Group):
    """Messages with equal ``key(message)`` always go to the same member."""

    def __init__(self, refs: Iterable[ActorRef], *, key: Callable[[Any], object]) -> None:
        if not callable(key):
            raise OptionsError("ConsistentHashingGroup needs key=callable(message)")
        super().__init__(refs)
        self.key = key

    def make_logic(self) -> RoutingLogic:
        return ConsistentHashingLogic(self.key)
