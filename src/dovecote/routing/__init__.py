"""Routers: one ref in front of many actors (pools it creates, or groups of existing ones).

>>> # system.spawn(RoundRobinPool(4, Worker), "workers").tell(job)

Policies: round-robin, random, smallest-mailbox, consistent-hashing (by a key function)
and broadcast. ``Broadcast(message)`` reaches every routee whatever the policy.
"""

from __future__ import annotations

from dovecote._errors import OptionsError
from dovecote.actors import ActorRef
from dovecote.routing._logic import (
    BroadcastLogic,
    ConsistentHashingLogic,
    RandomLogic,
    RoundRobinLogic,
    RoutingLogic,
    SmallestMailboxLogic,
)
from dovecote.routing._pools import (
    BroadcastGroup,
    BroadcastPool,
    ConsistentHashingGroup,
    ConsistentHashingPool,
    Group,
    Pool,
    RandomGroup,
    RandomPool,
    RoundRobinGroup,
    RoundRobinPool,
    SmallestMailboxGroup,
    SmallestMailboxPool,
)
from dovecote.routing._router import NO_ROUTEE, Broadcast, GetRoutees, Resize, RouterActor

__all__ = [
    "NO_ROUTEE",
    "Broadcast",
    "BroadcastGroup",
    "BroadcastLogic",
    "BroadcastPool",
    "ConsistentHashingGroup",
    "ConsistentHashingLogic",
    "ConsistentHashingPool",
    "GetRoutees",
    "Group",
    "Pool",
    "RandomGroup",
    "RandomLogic",
    "RandomPool",
    "Resize",
    "RoundRobinGroup",
    "RoundRobinLogic",
    "RoundRobinPool",
    "RouterActor",
    "RoutingLogic",
    "SmallestMailboxGroup",
    "SmallestMailboxLogic",
    "SmallestMailboxPool",
    "resize",
    "routees",
]


async def routees(router: ActorRef, *, timeout: float = 5.0) -> tuple[ActorRef, ...]:
    """The live routees of a pool or group ref, in routing order."""
    result: tuple[ActorRef, ...] = await router.ask(GetRoutees(), timeout=timeout)
    return result


async def resize(router: ActorRef, size: int, *, timeout: float = 5.0) -> tuple[ActorRef, ...]:
    """Grow or shrink a pool to ``size`` routees; returns the routees after the change.

    Shrinking stops the surplus routees gracefully (they finish what they hold).
    Raises :class:`~dovecote.OptionsError` for a group or a size below 1.
    """
    result: tuple[ActorRef, ...] | OptionsError = await router.ask(Resize(size), timeout=timeout)
    if isinstance(result, OptionsError):
        raise result
    return result
