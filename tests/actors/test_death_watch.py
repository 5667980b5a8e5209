"""watch / unwatch and Terminated delivery."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from actor_kit import (
    TIMEOUT,
    Echo,
    Hold,
    Inbox,
    Unwatch,
    Watch,
    Watcher,
    terminations,
    until_terminated,
    watch,
)

from dovecote import Actor, ActorOptions, PriorityMailbox, Terminated


def spawn_watcher(system: Any, options: Any = None) -> tuple[Any, Inbox]:
    inbox = Inbox()
    return system.spawn(lambda: Watcher(inbox), None, options), inbox


async def test_a_watcher_receives_terminated_with_the_dead_ref_exactly_once(system):
    target = system.spawn(Echo, "target")
    watcher, inbox = spawn_watcher(system)
    assert await watcher.ask(Watch(target), timeout=TIMEOUT) == "watching"
    assert await watcher.ask(Watch(target), timeout=TIMEOUT) == "watching"  # twice on purpose
    target.stop()
    await until_terminated(inbox, target)
    await asyncio.sleep(0.1)  # nothing else arrives
    await watcher.ask("barrier", timeout=TIMEOUT)
    found = terminations(inbox.items)
    assert found == [Terminated(target)]
    assert found[0].ref == target
    assert found[0].ref.path == "/user/target"


async def test_every_watcher_gets_its_own_terminated(system):
    target = system.spawn(Echo)
    inboxes = [await watch(system, target) for _ in range(3)]
    target.stop()
    for inbox in inboxes:
        await until_terminated(inbox, target)
        assert len(terminations(inbox.items, target)) == 1


async def test_watching_a_dead_ref_delivers_terminated_at_once(system):
    target = system.spawn(Echo)
    first = await watch(system, target)
    target.stop()
    await until_terminated(first, target)
    late = await watch(system, target)
    await until_terminated(late, target, timeout=0.5)
    assert len(terminations(late.items, target)) == 1


async def test_unwatch_prevents_terminated(system):
    target = system.spawn(Echo)
    watcher, inbox = spawn_watcher(system)
    control = await watch(system, target)
    await watcher.ask(Watch(target), timeout=TIMEOUT)
    await watcher.ask(Unwatch(target), timeout=TIMEOUT)
    target.stop()
    await until_terminated(control, target)
    await asyncio.sleep(0.1)
    await watcher.ask("barrier", timeout=TIMEOUT)
    assert terminations(inbox.items) == []


async def test_terminated_arrives_after_tells_sent_before_the_death(system):
    target = system.spawn(Echo)
    watcher, inbox = spawn_watcher(system)
    await watcher.ask(Watch(target), timeout=TIMEOUT)
    control = await watch(system, target)
    hold = Hold()
    watcher.tell(hold)
    await hold.wait_started()
    for i in range(3):
        watcher.tell(i)
    target.stop()
    await until_terminated(control, target)  # the death has happened and been announced
    hold.release.set()
    await until_terminated(inbox, target)
    assert inbox.items == [0, 1, 2, Terminated(target)]


@pytest.mark.parametrize("policy", ["drop-head", "drop-new", "reject"])
async def test_terminated_is_never_dropped_by_an_overflow_policy(system, policy):
    options = ActorOptions.create().with_mailbox_capacity(2).with_mailbox_overflow(policy)
    target = system.spawn(Echo)
    watcher, inbox = spawn_watcher(system, options)
    await watcher.ask(Watch(target), timeout=TIMEOUT)
    control = await watch(system, target)
    hold = Hold()
    watcher.tell(hold)
    await hold.wait_started()
    watcher.tell("a")
    watcher.tell("b")  # full
    target.stop()
    await until_terminated(control, target)
    hold.release.set()
    await until_terminated(inbox, target)
    assert len(terminations(inbox.items, target)) == 1
    assert inbox.items[-1] == Terminated(target)
    if policy != "drop-head":
        assert inbox.items == ["a", "b", Terminated(target)]


async def test_terminated_is_never_dropped_by_a_bounded_priority_mailbox(system):
    options = ActorOptions.create().with_mailbox(
        lambda: PriorityMailbox(priority_for=lambda m: 0, capacity=1, overflow="drop-new")
    )
    target = system.spawn(Echo)
    watcher, inbox = spawn_watcher(system, options)
    await watcher.ask(Watch(target), timeout=TIMEOUT)
    control = await watch(system, target)
    hold = Hold()
    watcher.tell(hold)
    await hold.wait_started()
    watcher.tell("fills it")
    target.stop()
    await until_terminated(control, target)
    hold.release.set()
    await until_terminated(inbox, target)
    assert inbox.items == ["fills it", Terminated(target)]


class Parent(Actor):
    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox

    def pre_start(self) -> None:
        self.child = self.context.spawn(Echo, "child")
        self.context.watch(self.child)

    def on_receive(self, message: Any) -> Any:
        if message == "child":
            return self.child
        if message == "stop child":
            self.context.stop(self.child)
            return None
        self.inbox.add(message)
        return None


async def test_a_parent_watching_its_child_learns_of_its_stop(system):
    inbox = Inbox()
    parent = system.spawn(lambda: Parent(inbox), "parent")
    child = await parent.ask("child", timeout=TIMEOUT)
    parent.tell("stop child")
    await until_terminated(inbox, child)
    assert inbox.items == [Terminated(child)]
    assert await parent.ask("child", timeout=TIMEOUT) == child


async def test_a_watcher_learns_of_a_crash_that_stopped_the_actor(system):
    class Fragile(Actor):
        def pre_start(self) -> None:
            raise RuntimeError("cannot start")

        def on_receive(self, message: Any) -> Any:
            return message

    target = system.spawn(Fragile)
    inbox = await watch(system, target)
    await until_terminated(inbox, target)


async def test_stopping_an_actor_several_ways_still_delivers_one_terminated(system):
    class SelfStopper(Actor):
        def on_receive(self, message: Any) -> Any:
            self.context.stop(self.self_ref)
            return None

    target = system.spawn(SelfStopper)
    watcher, inbox = spawn_watcher(system)
    await watcher.ask(Watch(target), timeout=TIMEOUT)
    target.tell("stop yourself")
    target.stop()
    target.stop()
    await until_terminated(inbox, target)
    await asyncio.sleep(0.05)
    await watcher.ask("barrier", timeout=TIMEOUT)
    assert len(terminations(inbox.items, target)) == 1


async def test_watch_again_after_unwatch_delivers_terminated(system):
    target = system.spawn(Echo)
    watcher, inbox = spawn_watcher(system)
    await watcher.ask(Watch(target), timeout=TIMEOUT)
    await watcher.ask(Unwatch(target), timeout=TIMEOUT)
    await watcher.ask(Watch(target), timeout=TIMEOUT)
    target.stop()
    await until_terminated(inbox, target)


async def test_a_watcher_that_dies_first_causes_no_trouble(system):
    target = system.spawn(Echo)
    watcher, _ = spawn_watcher(system)
    await watcher.ask(Watch(target), timeout=TIMEOUT)
    control = await watch(system, watcher)
    watcher.stop()
    await until_terminated(control, watcher)
    target_control = await watch(system, target)
    target.stop()
    await until_terminated(target_control, target)
