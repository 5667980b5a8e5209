"""dovecote, as shipped: default options, supervision, metrics and drop accounting on.

Handlers are plain ``def on_receive`` (the inline, no-task path). The five common
workloads mirror `_local.KitRuntime` message for message; the four dovecote-only ones
exercise the bounded and priority mailboxes, stash / unstash_all and the post office.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dovecote import Actor, ActorOptions, ActorSystem, BoundedMailbox, PriorityMailbox

from .._measure import perf_counter, time_asks, time_fanout, time_spawn_and_stop
from .._plan import GROUP
from ._base import BaseRuntime, Metrics
from ._local import Latch, settle, wait_all_dead
from .dovecote_durable_actor import DovecoteDurableActorWorkloads
from .dovecote_store import DovecoteStoreWorkloads
from .dovecote_store_pg import DovecotePostgresWorkloads

OPEN: Any = object()
#: a letter address that is not an actor: post + fetch go through the MemoryProvider queue
INBOX = "mem://bench@local/inbox"


class _Counter(Actor):
    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def on_receive(self, message: Any) -> int:
        self.n += 1
        return self.n


class _Countdown(Actor):
    def __init__(self, left: int, latch: Latch) -> None:
        super().__init__()
        self.left = left
        self.latch = latch

    def on_receive(self, message: Any) -> None:
        self.left -= 1
        if not self.left:
            self.latch.count_down()


class _Link:
    __slots__ = ("target",)

    def __init__(self, target: Any) -> None:
        self.target = target


class _RingNode(Actor):
    def __init__(self, done: asyncio.Future[None]) -> None:
        super().__init__()
        self.done = done
        self.next_tell: Any = None

    def on_receive(self, message: Any) -> None:
        if type(message) is int:
            if message:
                self.next_tell(message - 1)
            else:
                self.done.set_result(None)
        else:
            self.next_tell = message.target.tell


class _Stasher(Actor):
    """Stashes everything until OPEN, then unstashes and counts."""

    def __init__(self) -> None:
        super().__init__()
        self.open = False
        self.n = 0

    def on_receive(self, message: Any) -> int | None:
        if self.open:
            self.n += 1
            return self.n
        if message is OPEN:
            self.open = True
            self.context.unstash_all()
            return None
        self.context.stash()
        return None


def _priority(message: Any) -> int:
    return message & 3 if type(message) is int else 9


class DovecoteRuntime(
    DovecoteDurableActorWorkloads, DovecoteStoreWorkloads, DovecotePostgresWorkloads, BaseRuntime
):
    name = "dovecote"
    system: Any = None

    async def open(self) -> None:
        self.system = ActorSystem("bench")
        await self.system.__aenter__()

    async def close(self) -> None:
        if self.system is not None:
            await self.system.__aexit__(None, None, None)
            self.system = None

    async def _tell_burst(self, ref: Any, n: int) -> tuple[float, int]:
        await ref.ask(None)
        tell = ref.tell
        t0 = perf_counter()
        for i in range(n):
            tell(i)
        count: int = await ref.ask(None)
        return perf_counter() - t0, count

    # -- (a)-(e) ---------------------------------------------------------------------------

    async def wl_tell(self, n: int) -> Metrics:
        ref = self.system.spawn(_Counter)
        elapsed, count = await self._tell_burst(ref, n)
        assert count == n + 2, count
        ref.stop()
        return {"msgs_per_s": n / elapsed}

    async def wl_ask(self, n: int) -> Metrics:
        ref = self.system.spawn(_Counter)
        ask = ref.ask
        await ask(None)
        metrics = await time_asks(ask, n)
        ref.stop()
        return metrics

    async def wl_fanout(self, n: int) -> Metrics:
        loop = asyncio.get_running_loop()
        per_actor = max(1, n // GROUP)
        done: asyncio.Future[None] = loop.create_future()
        latch = Latch(GROUP, done)
        spawn = self.system.spawn
        refs = [spawn(lambda: _Countdown(per_actor, latch)) for _ in range(GROUP)]
        tells = [r.tell for r in refs]
        await settle()
        metrics = await time_fanout(tells, per_actor, done)
        for r in refs:
            r.stop()
        return metrics

    async def wl_ring(self, n: int) -> Metrics:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        spawn = self.system.spawn
        refs = [spawn(lambda: _RingNode(done)) for _ in range(GROUP)]
        for i, ref in enumerate(refs):
            await ref.ask(_Link(refs[(i + 1) % GROUP]))
        await settle()
        t0 = perf_counter()
        refs[0].tell(n)
        await done
        elapsed = perf_counter() - t0
        for r in refs:
            r.stop()
        return {"hops_per_s": n / elapsed}

    async def wl_spawn(self, n: int) -> Metrics:
        spawn = self.system.spawn
        refs: list[Any] = []

        async def spawn_all() -> None:
            refs.extend(spawn(_Counter) for _ in range(n))
            await refs[-1].ask(None)

        async def stop_all() -> None:
            for r in refs:
                r.stop()
            await wait_all_dead(refs)

        await asyncio.sleep(0)
        return await time_spawn_and_stop(spawn_all, stop_all, n)

    # -- (f) dovecote only -------------------------------------------------------------------

    async def wl_bounded(self, n: int) -> Metrics:
        options = ActorOptions.create().with_mailbox_capacity(n + 10)
        options = options.with_mailbox_overflow("drop-head")
        ref = self.system.spawn(_Counter, options=options)
        elapsed, count = await self._tell_burst(ref, n)
        assert count == n + 2, count
        ref.stop()

        capacity = 1_000
        made: list[BoundedMailbox] = []

        def mailbox() -> BoundedMailbox:
            made.append(BoundedMailbox(capacity, "drop-head"))
            return made[-1]

        ref = self.system.spawn(_Counter, options=ActorOptions.create().with_mailbox(mailbox))
        overflow_elapsed, count = await self._tell_burst(ref, n)
        dropped = made[-1].dropped_count
        # two asks were answered; every int was either processed or dropped
        assert count - 2 + dropped == n, (count, dropped, n)
        ref.stop()
        return {"msgs_per_s": n / elapsed, "overflow_msgs_per_s": n / overflow_elapsed}

    async def wl_priority(self, n: int) -> Metrics:
        options = ActorOptions.create().with_mailbox(lambda: PriorityMailbox(_priority))
        ref = self.system.spawn(_Counter, options=options)
        elapsed, count = await self._tell_burst(ref, n)
        assert count == n + 2, count
        ref.stop()
        return {"msgs_per_s": n / elapsed}

    async def wl_stash(self, n: int) -> Metrics:
        ref = self.system.spawn(_Stasher)
        tell = ref.tell
        await asyncio.sleep(0)
        t0 = perf_counter()
        for i in range(n):
            tell(i)
        tell(OPEN)
        count = await ref.ask(None)
        elapsed = perf_counter() - t0
        assert count == n + 1, count
        ref.stop()
        return {"msgs_per_s": n / elapsed}

    async def wl_shutdown(self, n: int) -> Metrics:
        metrics: Metrics = {}
        for count, key in ((10_000, "10k"), (100_000, "100k"), (1_000_000, "1m")):
            if count > n:
                break
            system = ActorSystem(f"shutdown-{key}")
            spawn = system.spawn
            refs = [spawn(_Counter) for _ in range(count)]
            await refs[-1].ask(None, timeout=3600.0)  # started in spawn order: all are up
            del refs
            t0 = perf_counter()
            await system.shutdown(timeout=3600.0)
            metrics[f"shutdown_us_{key}"] = (perf_counter() - t0) / count * 1e6
        return metrics

    async def wl_postoffice(self, n: int) -> Metrics:
        office = self.system.post_office
        post = office.post
        fetch = office.fetch
        t0 = perf_counter()
        for i in range(n):
            await post(to=INBOX, body=i)
        for _ in range(n):
            lease = await fetch(INBOX, manual_ack=True)
            if isinstance(lease, list):
                lease = lease[0]
            if lease is None or not await lease.ack():
                raise AssertionError("post office lost a letter")
        elapsed = perf_counter() - t0
        return {"msgs_per_s": n / elapsed}
