"""One clock for the runtime, the post office and the store; ManualClock drives them."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

import dovecote
from dovecote import (
    Actor,
    ActorRestarted,
    ActorSystem,
    Backoff,
    Clock,
    Directive,
    ManualClock,
    OneForOneStrategy,
    SystemClock,
)
from dovecote.testkit import EventRecorder, TestProbe


def test_there_is_one_clock_class() -> None:
    assert dovecote.addressing.Clock is Clock
    assert dovecote.addressing.ManualClock is ManualClock
    assert dovecote.addressing.SystemClock is SystemClock
    assert isinstance(SystemClock(), Clock)
    assert isinstance(ManualClock(), Clock)


def test_advance_runs_due_timers_in_due_time_order_including_new_ones() -> None:
    clock = ManualClock()
    ran: list[tuple[str, float]] = []

    def note(name: str) -> None:
        ran.append((name, clock.now()))
        if name == "b":
            clock.call_later(0.5, note, "b-child")  # due at 2.5, inside this advance

    clock.call_later(3.0, note, "c")
    clock.call_later(2.0, note, "b")
    clock.call_later(1.0, note, "a")
    late = clock.call_later(10.0, note, "late")
    clock.advance(5.0)
    assert ran == [("a", 1.0), ("b", 2.0), ("b-child", 2.5), ("c", 3.0)]
    assert clock.now() == 5.0
    late.cancel()
    clock.advance(10.0)
    assert [name for name, _ in ran] == ["a", "b", "b-child", "c"]


def test_a_repeating_timer_runs_as_often_as_it_falls_due() -> None:
    clock = ManualClock()
    ticks: list[float] = []

    def tick() -> None:
        ticks.append(clock.now())
        clock.call_later(1.0, tick)

    clock.call_later(1.0, tick)
    clock.advance(3.5)
    assert ticks == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("bad", [-0.1, -1, math.nan, math.inf, True, "1"])
def test_advance_rejects_negative_and_non_numbers(bad: Any) -> None:
    clock = ManualClock()
    with pytest.raises(ValueError):
        clock.advance(bad)
    assert clock.now() == 0.0


def test_wall_moves_with_now() -> None:
    clock = ManualClock(wall_start=1_000.0)
    clock.advance(2.5)
    assert clock.wall() == 1_002.5


class Ticker(Actor):
    def __init__(self, probe: Any) -> None:
        super().__init__()
        self.probe = probe

    def pre_start(self) -> None:
        self.context.schedule_once(5.0, "once", self.probe)
        self.context.schedule_repeatedly(1.0, 1.0, "tick", self.probe)


async def test_actor_timers_run_on_the_system_clock_without_sleeping() -> None:
    clock = ManualClock()
    async with ActorSystem("manual-timers", clock=clock) as system:
        probe = TestProbe(system)
        system.spawn(lambda: Ticker(probe.ref), "ticker")
        await clock.wait_for_sleepers(2)
        await probe.expect_no_message(0.02)
        clock.advance(3.0)
        assert await probe.receive_n(3, timeout=0.5) == ["tick", "tick", "tick"]
        clock.advance(2.0)
        assert sorted(await probe.receive_n(3, timeout=0.5)) == ["once", "tick", "tick"]
        await system.shutdown()


async def test_restart_backoff_waits_on_the_system_clock() -> None:
    clock = ManualClock()
    strategy = OneForOneStrategy(
        max_restarts=5,
        within=60.0,
        backoff=Backoff(min_delay=10.0, max_delay=100.0, random_factor=0.0),
        decider=lambda error: Directive.RESTART,
    )

    class Flaky(Actor):
        def on_receive(self, message: Any) -> Any:
            raise RuntimeError("always")

    class Parent(Actor):
        supervisor_strategy = strategy

        def on_receive(self, message: Any) -> Any:
            return self.context.spawn(Flaky, "flaky")

    async with ActorSystem("manual-backoff", clock=clock) as system:
        with EventRecorder(system, ActorRestarted) as restarts:
            parent = system.spawn(Parent, "parent")
            flaky = await parent.ask("spawn")
            flaky.tell("fail")
            # the backoff timer, and the (finished) spawn ask's timeout lane
            await asyncio.wait_for(clock.wait_for_sleepers(2), 3.0)
            clock.advance(9.9)
            await asyncio.sleep(0.02)
            assert restarts.events == []  # not yet: the backoff is on the manual clock
            clock.advance(0.2)
            await restarts.expect(ActorRestarted)
        await system.shutdown()


async def test_supervision_windows_read_the_system_clock() -> None:
    """Failures 61 s apart on the manual clock fall in different 60 s windows."""
    clock = ManualClock()

    class Fails(Actor):
        def on_receive(self, message: Any) -> Any:
            raise RuntimeError("fail")

    class Parent(Actor):
        supervisor_strategy = OneForOneStrategy(max_restarts=1, within=60.0)

        def on_receive(self, message: Any) -> Any:
            return self.context.spawn(Fails, "fails")

    async with ActorSystem("manual-window", clock=clock) as system:
        parent = system.spawn(Parent, "parent")
        child = await parent.ask("spawn")
        probe = TestProbe(system)
        probe.watch(child)
        with EventRecorder(system, ActorRestarted) as restarts:
            child.tell("x")
            await restarts.expect(ActorRestarted)
            clock.advance(61.0)
            child.tell("y")  # a new window: restarted again, not stopped
            await restarts.expect(lambda e: len(restarts.events) == 2)
            assert child.is_alive
            child.tell("z")  # a second failure inside this window: stopped
            await probe.expect_terminated(child)
        await system.shutdown()


async def test_ask_timeouts_run_on_the_system_clock() -> None:
    clock = ManualClock()

    class Silent(Actor):
        def on_receive(self, message: Any) -> Any:
            self.context.stash()  # never answers

    async with ActorSystem("manual-asks", clock=clock) as system:
        silent = system.spawn(Silent, "silent")
        pending = asyncio.ensure_future(silent.ask("hello?", timeout=30.0))
        other = asyncio.ensure_future(silent.ask("and you?", timeout=7.0))
        await asyncio.wait_for(clock.wait_for_sleepers(2), 3.0)
        clock.advance(6.9)
        await asyncio.sleep(0)
        assert not other.done()
        clock.advance(0.2)
        with pytest.raises(dovecote.AskTimeoutError):
            await asyncio.wait_for(other, 1.0)
        assert not pending.done()
        clock.advance(30.0)
        with pytest.raises(dovecote.AskTimeoutError):
            await asyncio.wait_for(pending, 1.0)
        await system.shutdown()


async def test_a_clock_that_is_not_a_clock_is_an_options_error() -> None:
    with pytest.raises(dovecote.OptionsError):
        ActorSystem("bad-clock", clock=object())  # type: ignore[arg-type]
