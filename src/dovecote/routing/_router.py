"""The router actor: the ref a pool or group spawns as, handing each message to routees."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from dovecote._errors import OptionsError
from dovecote.actors import Actor, ActorOptions, ActorRef, Terminated
from dovecote.actors._envelope_kinds import is_runtime_envelope
from dovecote.routing._logic import RoutingLogic
from dovecote.supervision import OneForOneStrategy, SupervisorStrategy

__all__ = ["NO_ROUTEE", "Broadcast", "GetRoutees", "Resize", "RouterActor", "mailbox_size"]


@attrs.frozen(slots=True)
class Broadcast:
    """Wrap a message to send it to every routee of a router (each gets ``message``)."""

    message: Any


@attrs.frozen(slots=True)
class GetRoutees:
    """Ask a router for its live routees (``await routees(ref)`` sends it)."""


@attrs.frozen(slots=True)
class Resize:
    """Ask a pool to grow or shrink to ``size`` routees (``await resize(ref, n)``)."""

    size: int


def mailbox_size(ref: ActorRef) -> int:
    """How many user messages wait in ``ref``'s mailbox (0 for a stopped actor)."""
    cell = ref._cell
    if cell._terminated:
        return 0
    return int(cell._mailbox.user_count)


_DEFAULT_POOL_STRATEGY = OneForOneStrategy()

#: Dead-letter reason for a message that reached a router with no live routee.
NO_ROUTEE = "no-routee"


class RouterActor(Actor):
    """Routes every message to routees picked by a :class:`RoutingLogic`.

    A pool (``factory`` given) spawns its routees as children named ``routee-<i>``,
    supervises them with ``strategy`` and replaces one that stops; a group routes to
    existing refs, watches them and drops the ones that stop (it never stops them).
    Messages that arrive while no routee is alive become dead letters.
    """

    def __init__(
        self,
        logic: RoutingLogic,
        *,
        size: int = 0,
        factory: Callable[[], Actor] | None = None,
        refs: tuple[ActorRef, ...] = (),
        routee_options: ActorOptions | None = None,
        strategy: SupervisorStrategy | None = None,
    ) -> None:
        super().__init__()
        self._logic = logic
        self._size = size
        self._factory = factory
        self._refs = refs
        self._routee_options = routee_options
        self._strategy = strategy or _DEFAULT_POOL_STRATEGY
        self._routees: list[ActorRef] = []
        self._stopping: set[ActorRef] = set()

    @property
    def supervisor_strategy(self) -> SupervisorStrategy:
        return self._strategy

    def pre_start(self) -> None:
        if self._factory is None:
            for ref in self._refs:
                if ref.is_alive:
                    self._routees.append(self.context.watch(ref))
        else:
            self._grow(self._size)

    def pre_restart(self, error: BaseException, message: Any) -> Any:
        # A group must never stop its members; a pool's children are replaced anyway.
        if self._factory is None:
            return self.post_stop()
        return super().pre_restart(error, message)

    # -- pool size ---------------------------------------------------------------------------
    def _grow(self, size: int) -> None:
        assert self._factory is not None
        taken = {r.name for r in self._routees} | {r.name for r in self._stopping}
        index = 0
        while len(self._routees) < size:
            name = f"routee-{index}"
            index += 1
            if name in taken:
                continue
            child = self.context.spawn(self._factory, name, self._routee_options)
            self._routees.append(self.context.watch(child))

    def _resize(self, size: int) -> tuple[ActorRef, ...] | OptionsError:
        # A bad request is answered with the error, not raised: raising would count as
        # the router failing, and its supervisor would restart the whole pool.
        if self._factory is None:
            return OptionsError("only a pool can be resized; a group keeps the refs it was given")
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            return OptionsError(f"a pool needs at least one routee, got size={size!r}")
        self._size = size
        while len(self._routees) > size:
            surplus = self._routees.pop()
            self._stopping.add(surplus)
            surplus.stop()  # graceful: what it already holds is still processed
        self._grow(size)
        return tuple(self._routees)

    # -- routing -----------------------------------------------------------------------------
    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Terminated):
            return self._routee_terminated(message.ref)
        if isinstance(message, GetRoutees):
            return tuple(self._routees)
        if isinstance(message, Resize):
            return self._resize(message.size)
        routees = self._routees
        if not routees:
            self._no_routee()
            return None
        if isinstance(message, Broadcast):
            return self._broadcast(message.message, routees)
        chosen = self._logic.select(message, routees, mailbox_size)
        if len(chosen) != 1:
            return self._broadcast(message, chosen)
        self.context.forward(chosen[0])
        return None

    def _broadcast(self, message: Any, targets: list[ActorRef]) -> tuple[ActorRef, ...]:
        """Tell ``message`` to every target with the original sender. An ask of a
        broadcast is answered by the router with the refs it went to."""
        sender = None if self._is_ask() else self.context.sender
        for routee in targets:
            routee.tell(message, sender)
        return tuple(targets)

    def _is_ask(self) -> bool:
        env = self._cell._current
        return is_runtime_envelope(env) and env.reply is not None

    def _no_routee(self) -> None:
        """Nobody to route to: a dead letter (reason ``no-routee``); an ask fails at once."""
        cell = self._cell
        env = cell._current
        if is_runtime_envelope(env) and env.reply is not None:
            cell._replied = True  # _lose answers the ask; our return value must not
        cell._system._lose(env, cell, NO_ROUTEE)

    def _routee_terminated(self, ref: ActorRef) -> None:
        if ref in self._stopping:
            self._stopping.discard(ref)
            return
        if ref in self._routees:
            self._routees.remove(ref)
            if self._factory is not None and not self.context.system.is_shut_down:
                self._grow(self._size)  # a pool replaces a routee that stopped
