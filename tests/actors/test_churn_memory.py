"""Nothing grows without bound with churn (issue 8, item 7; API.md "Core revisions").

Before: one ask-timeout lane per distinct timeout value, kept until shutdown; a stuck
long ask pinned every later finished ask (and its reply) with the same timeout; every
actor ever spawned left a post-office topic once ``system.post_office`` was used; per-path
drop-counter series were never removed.

The churn test spawns and stops actors in waves with all of those in use and checks that
tracemalloc's traced memory and the ``gc`` object count stay flat. It runs 6,000 actors
by default (~5 s); ``DOVECOTE_CHURN_ACTORS=200000`` runs the issue's full 200k (~2.5 min).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import os
import random
import tracemalloc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from actor_kit import TIMEOUT, Echo, metric_samples, until_terminated, watch

from dovecote import Actor, ActorOptions, ActorStopped, ActorSystem, AskTimeoutError
from dovecote.actors._ask_timeouts import COMPACT_MIN, MAX_LANES


class Silent(Actor):
    """Answers nothing until ``release`` is set (the test sets it when it is done)."""

    def __init__(self, release: asyncio.Event) -> None:
        super().__init__()
        self.release = release

    async def on_receive(self, message: Any) -> Any:
        await self.release.wait()


@pytest.fixture
def release() -> Iterator[asyncio.Event]:
    event = asyncio.Event()
    yield event
    event.set()


class Reply:
    """A reply object that can be watched with a weak reference."""


class Replier(Actor):
    def __init__(self, replies: weakref.WeakSet[Reply]) -> None:
        super().__init__()
        self.replies = replies

    def on_receive(self, message: Any) -> Reply:
        reply = Reply()
        self.replies.add(reply)
        return reply


# -- ask timeouts ---------------------------------------------------------------------------
async def test_distinct_timeout_values_leave_no_lanes_behind(system: ActorSystem) -> None:
    ref = system.spawn(Echo)
    rnd = random.Random(8)
    for i in range(3_000):
        assert await ref.ask(i, timeout=rnd.uniform(1.0, 100.0)) == i
    timeouts = system._ask_timeouts
    assert len(timeouts._lanes) <= MAX_LANES
    assert timeouts.entry_count() <= COMPACT_MIN + 1


async def test_asks_beyond_the_lanes_still_time_out_in_deadline_order(
    system: ActorSystem, release: asyncio.Event
) -> None:
    silent = system.spawn(lambda: Silent(release))
    lanes = [asyncio.ensure_future(silent.ask(i, timeout=30.0 + i)) for i in range(MAX_LANES)]
    slow = asyncio.ensure_future(silent.ask("slow", timeout=20.0))  # past the lanes: the heap
    fast = asyncio.ensure_future(silent.ask("fast", timeout=0.05))  # earlier: re-arms it
    everything = [fast, slow, *lanes]
    done, _ = await asyncio.wait(everything, timeout=TIMEOUT, return_when="FIRST_COMPLETED")
    assert done == {fast}
    assert isinstance(fast.exception(), AskTimeoutError)
    for future in [slow, *lanes]:
        future.cancel()


async def test_a_lane_found_empty_by_its_timer_is_removed(
    system: ActorSystem, release: asyncio.Event
) -> None:
    echo, silent = system.spawn(Echo), system.spawn(lambda: Silent(release))
    assert await echo.ask("answered", timeout=0.05) == "answered"
    assert 0.05 in system._ask_timeouts._lanes
    # this one expires after the 0.05 lane's timer ran (and found nothing pending)
    with contextlib.suppress(AskTimeoutError):
        await silent.ask("expires", timeout=0.1)
    assert 0.05 not in system._ask_timeouts._lanes
    assert 0.1 not in system._ask_timeouts._lanes or not system._ask_timeouts._lanes[0.1].entries


async def test_a_stuck_long_ask_does_not_pin_later_finished_asks(
    system: ActorSystem, release: asyncio.Event
) -> None:
    stuck = asyncio.ensure_future(system.spawn(lambda: Silent(release)).ask("stuck", timeout=60.0))
    replies: weakref.WeakSet[Reply] = weakref.WeakSet()
    ref = system.spawn(lambda: Replier(replies))
    for _ in range(5_000):
        assert isinstance(await ref.ask("x", timeout=60.0), Reply)
    gc.collect()
    assert len(replies) <= COMPACT_MIN + 1  # not 5,000
    assert system._ask_timeouts.entry_count() <= COMPACT_MIN + 2
    assert not stuck.done()
    stuck.cancel()


# -- post office and metrics ----------------------------------------------------------------
async def test_a_stopped_actor_leaves_no_post_office_topic(system: ActorSystem) -> None:
    office = system.post_office
    bus = system._mail_provider.bus  # type: ignore[union-attr]
    ref = system.spawn(Echo, "clerk")
    await office.post(to=ref.address, body="hello")
    await asyncio.wait_for(office.wait_settled(), TIMEOUT)
    terminated = await watch(system, ref)
    ref.stop()
    await until_terminated(terminated, ref)
    assert ref.address not in bus.topics()
    # letters for the stopped actor still wait for fetch: the topic comes back for them
    await office.post(to=ref.address, body="while you were out")
    letter = await office.fetch(ref.address)
    assert letter is not None
    assert letter.body == "while you were out"


def drop_series(system: ActorSystem) -> dict[tuple[str, str, str], float]:
    return {
        (labels["actor_class"], labels["path"], labels["policy"]): value
        for labels, value in metric_samples(system.metrics, "actor_mailbox_dropped_total")
    }


class Gate(Actor):
    def __init__(self, entered: asyncio.Event, gate: asyncio.Event) -> None:
        super().__init__()
        self.entered = entered
        self.gate = gate

    async def on_receive(self, message: Any) -> Any:
        self.entered.set()
        await self.gate.wait()
        return message


async def test_drop_series_of_a_stopped_actor_go_and_the_class_total_stays(
    system: ActorSystem,
) -> None:
    entered, gate = asyncio.Event(), asyncio.Event()
    options = ActorOptions.create().with_mailbox_capacity(1).with_mailbox_overflow("drop-new")
    ref = system.spawn(lambda: Gate(entered, gate), "shedder", options)
    first = asyncio.ensure_future(ref.ask("first", timeout=TIMEOUT))
    await asyncio.wait_for(entered.wait(), TIMEOUT)
    ref.tell("queued")
    ref.tell("dropped")
    ref.tell("dropped too")
    assert drop_series(system) == {("Gate", "/user/shedder", "drop-new"): 2.0}
    gate.set()
    assert await first == "first"
    terminated = await watch(system, ref)
    ref.stop()
    await until_terminated(terminated, ref)
    assert drop_series(system) == {("Gate", "", "drop-new"): 2.0}
    assert system.metrics.drops_total == 2
    assert system.metrics._drop_keys_by_path == {}


# -- the churn test -------------------------------------------------------------------------
class Tally:
    """Counts the tells the workers handled; ``reached`` is set at ``target``."""

    def __init__(self) -> None:
        self.count = 0
        self.target = 0
        self.reached = asyncio.Event()

    def add(self) -> None:
        self.count += 1
        if self.count == self.target:
            self.reached.set()


class Worker(Actor):
    def __init__(self, tally: Tally) -> None:
        super().__init__()
        self.tally = tally

    def on_receive(self, message: Any) -> Any:
        if message == "kept":
            self.tally.add()
        return message


async def test_churn_spawn_stop_in_waves_keeps_memory_and_objects_flat() -> None:
    total = int(os.environ.get("DOVECOTE_CHURN_ACTORS", "6000"))
    wave = 1_000
    waves = max(4, math.ceil(total / wave))
    rnd = random.Random(7)
    options = ActorOptions.create().with_mailbox_capacity(2).with_mailbox_overflow("drop-new")
    tally = Tally()
    async with ActorSystem("churn") as system:
        office = system.post_office  # every actor subscribes to its address from now on
        stopped = 0
        target = 0
        all_stopped = asyncio.Event()

        def on_stopped(_: ActorStopped) -> None:
            nonlocal stopped
            stopped += 1
            if stopped == target:
                all_stopped.set()

        system.event_stream.subscribe(on_stopped, ActorStopped)

        async def one_wave() -> None:
            nonlocal target
            refs = [system.spawn(lambda: Worker(tally), options=options) for _ in range(wave)]
            # three tells before any worker starts: two fit, one is dropped (a path series)
            tally.target += 2 * wave
            tally.reached.clear()
            for r in refs:
                r.tell("kept")
                r.tell("kept")
                r.tell("dropped")
            await asyncio.wait_for(tally.reached.wait(), 30)
            # then an ask each, with random timeouts (distinct values), each answered
            asks = [r.ask(i, timeout=rnd.uniform(1.0, 100.0)) for i, r in enumerate(refs)]
            assert await asyncio.wait_for(asyncio.gather(*asks), 30) == list(range(wave))
            await office.post(to=refs[0].address, body="a letter")  # delivered: no queue left
            await asyncio.wait_for(office.wait_settled(), 30)
            target += wave
            all_stopped.clear()
            for r in refs:
                r.stop()
            await asyncio.wait_for(all_stopped.wait(), 60)

        def measure() -> tuple[int, int]:
            # The finished asks the timeout bookkeeping keeps until its next compaction
            # (bounded: checked below) would make the numbers jump by up to ~2 MiB.
            bound = 2 * wave + COMPACT_MIN
            assert system._ask_timeouts.entry_count() <= bound
            system._ask_timeouts.sweep()
            gc.collect()
            return tracemalloc.get_traced_memory()[0], len(gc.get_objects())

        tracemalloc.start()
        try:
            for _ in range(2):  # warm-up: caches, lanes, interned strings
                await one_wave()
            memory_before, objects_before = measure()
            for _ in range(waves - 2):
                await one_wave()
            memory_after, objects_after = measure()
        finally:
            tracemalloc.stop()

        grew = memory_after - memory_before
        # before the fix: ~3.8 KiB per actor (lane, topic, drop series), ~15 MiB for 4,000
        assert grew < 1024 * 1024, f"traced memory grew by {grew / 1024:.0f} KiB"
        assert objects_after - objects_before < 2_000, (objects_before, objects_after)
        assert len(system._ask_timeouts._lanes) <= MAX_LANES
        assert system._ask_timeouts.entry_count() <= 2 * wave + COMPACT_MIN
        assert system._mail_provider.bus.topics() == []  # type: ignore[union-attr]
        assert {path for _, path, _ in drop_series(system)} == {""}
        assert system.metrics.drops_total == waves * wave
