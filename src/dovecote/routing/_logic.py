"""Routing logics: given the live routees and a message, which routee(s) get it.

Pure functions of their inputs plus a little state (a counter, a random source, a hash
ring), so each policy's distribution can be tested without actors.
"""

from __future__ import annotations

import bisect
import hashlib
import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

__all__ = [
    "BroadcastLogic",
    "ConsistentHashingLogic",
    "RandomLogic",
    "RoundRobinLogic",
    "RoutingLogic",
    "SmallestMailboxLogic",
]

R = TypeVar("R")


class RoutingLogic(Protocol):
    """Picks the routees for one message (never called with an empty sequence)."""

    def select(self, message: Any, routees: Sequence[R], sizes: Callable[[R], int]) -> list[R]:
        """The routees that receive ``message``; ``sizes(r)`` is r's queued-message count."""
        ...


class RoundRobinLogic:
    """Each routee in turn."""

    __slots__ = ("_next",)

    def __init__(self) -> None:
        self._next = 0

    def select(self, message: Any, routees: Sequence[R], sizes: Callable[[R], int]) -> list[R]:
        index = self._next % len(routees)
        self._next = index + 1
        return [routees[index]]


class RandomLogic:
    """A routee picked uniformly at random (``seed`` makes it repeatable)."""

    __slots__ = ("_random",)

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    def select(self, message: Any, routees: Sequence[R], sizes: Callable[[R], int]) -> list[R]:
        return [routees[self._random.randrange(len(routees))]]


class SmallestMailboxLogic:
    """The routee with the fewest queued messages; ties go to the earliest routee."""

    __slots__ = ()

    def select(self, message: Any, routees: Sequence[R], sizes: Callable[[R], int]) -> list[R]:
        return [min(routees, key=sizes)]


class BroadcastLogic:
    """Every routee."""

    __slots__ = ()

    def select(self, message: Any, routees: Sequence[R], sizes: Callable[[R], int]) -> list[R]:
        return list(routees)


def _stable_hash(value: object) -> int:
    # Python's hash() of str is salted per process; routing must agree across restarts.
    data = value.encode() if isinstance(value, str) else repr(value).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


class ConsistentHashingLogic:
    """Messages with the same ``key(message)`` go to the same routee.

    A hash ring with ``virtual_nodes`` points per routee: when a routee is added or
    removed, only the keys on its arcs move.
    """

    __slots__ = ("_key", "_ring", "_ring_for", "_virtual_nodes")

    def __init__(self, key: Callable[[Any], object], virtual_nodes: int = 64) -> None:
        if not callable(key):
            raise TypeError("ConsistentHashingLogic needs a key function")
        self._key = key
        self._virtual_nodes = virtual_nodes
        self._ring_for: tuple[object, ...] = ()
        self._ring: list[tuple[int, int]] = []

    def _build(self, routees: Sequence[Any]) -> None:
        ring: list[tuple[int, int]] = []
        for index, routee in enumerate(routees):
            ident = getattr(routee, "path", None) or repr(routee)
            ring.extend(
                (_stable_hash(f"{ident}#{v}"), index) for v in range(self._virtual_nodes)
            )
        ring.sort()
        self._ring = ring
        self._ring_for = tuple(routees)

    def select(self, message: Any, routees: Sequence[R], sizes: Callable[[R], int]) -> list[R]:
        if tuple(routees) != self._ring_for:
            self._build(routees)
        point = _stable_hash(self._key(message))
        at = bisect.bisect_left(self._ring, (point, -1))
        _, index = self._ring[at % len(self._ring)]
        return [routees[index]]
