"""Every durable lane of one actor system, and their shutdown.

A lane opens when its actor's first mailbox is attached and closes when the actor
stops (``ActorStopped`` on the event stream). The system's shutdown waits for the
closing lanes through a provider registered on its post office (the post office is
stopped at the end of every shutdown), so a tell accepted before shutdown reaches the
store before ``async with ActorSystem(...)`` exits.
"""

from __future__ import annotations

import asyncio
import os
import uuid
import weakref
from typing import TYPE_CHECKING

from dovecote.actors import ActorStopped
from dovecote.addressing import AddressStatus, MailAddress, MailMessage, Provider
from dovecote.durable._actor_lane import DurableLane
from dovecote.durable._lane_spec import LaneSpec

if TYPE_CHECKING:
    from dovecote.actors import ActorRef, ActorSystem
    from dovecote.actors._hosted_mailbox import MailboxHost

__all__ = ["SystemLanes", "lane_for", "lanes_of"]

_CLAIMER = f"dovecote-{os.getpid()}-{uuid.uuid4().hex[:12]}"
"""Claimer id of this process (leases are fenced by token, so one id per process will do)."""

_by_system: weakref.WeakKeyDictionary[ActorSystem, SystemLanes] = weakref.WeakKeyDictionary()


class _LaneCloser(Provider):
    """A provider with no transport: its ``close`` (at shutdown) waits for the lanes."""

    scheme = "dovecote+durable-lanes"

    def __init__(self, lanes: SystemLanes) -> None:
        super().__init__()
        self._lanes = lanes

    @property
    def supports(self) -> frozenset[str]:
        # it has no addresses and no leases: say so, rather than look degraded
        return frozenset({"enumerate", "recover"})

    async def list_statuses(self) -> list[AddressStatus]:
        return []

    async def recover(self, address: MailAddress | None = None) -> dict[str, int]:
        return {}

    async def _send(self, message: MailMessage) -> None:  # pragma: no cover - never routed
        raise NotImplementedError("durable lanes take no post")

    async def _close(self) -> None:
        await self._lanes.close_all()


class SystemLanes:
    """The durable lanes of one system, keyed by actor ref."""

    def __init__(self, system: ActorSystem) -> None:
        self._lanes: dict[ActorRef, DurableLane] = {}
        self._closing: set[asyncio.Task[None]] = set()
        system.event_stream.subscribe(self._stopped, ActorStopped)
        system.post_office.register_provider(_LaneCloser(self))

    def lane(self, host: MailboxHost, spec: LaneSpec) -> DurableLane:
        """The actor's lane, opened on its first attach."""
        ref = host.ref
        lane = self._lanes.get(ref)
        if lane is None:
            lane = self._lanes[ref] = DurableLane(host, spec, _CLAIMER)
        return lane

    def _stopped(self, event: ActorStopped) -> None:
        lane = self._lanes.pop(event.ref, None)
        if lane is not None:
            task = asyncio.get_running_loop().create_task(lane.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def close_all(self) -> None:
        """Close every lane (their actors have stopped) and wait for their writes."""
        for ref in list(self._lanes):
            self._stopped(ActorStopped(ref))
        while self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    async def flush(self) -> None:
        """Wait until every queued write and settlement of the open lanes is stored."""
        await asyncio.gather(*(lane.flush() for lane in list(self._lanes.values())))


def lanes_of(system: ActorSystem) -> SystemLanes:
    """The system's lane registry (made on first use)."""
    lanes = _by_system.get(system)
    if lanes is None:
        lanes = _by_system[system] = SystemLanes(system)
    return lanes


def lane_for(host: MailboxHost, spec: LaneSpec) -> DurableLane:
    """The lane of the actor behind ``host`` (opened on first use)."""
    return lanes_of(host.system).lane(host, spec)
