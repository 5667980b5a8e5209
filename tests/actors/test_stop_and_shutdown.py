"""stop() (PoisonPill, graceful), context.stop (immediate), post_stop and system shutdown."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from actor_kit import (
    TIMEOUT,
    DeadLetterLog,
    Echo,
    Hold,
    Inbox,
    Recorder,
    spawn_recorder,
    until_terminated,
    watch,
)

from dovecote import Actor, ActorOptions, ActorStoppedError, ActorSystem, PoisonPill


async def test_stop_processes_the_messages_queued_ahead_of_the_poison_pill_first(system):
    ref, inbox = spawn_recorder(system)
    terminated = await watch(system, ref)
    for i in range(5):
        ref.tell(i)
    ref.stop()
    await until_terminated(terminated, ref)
    assert inbox.items == [0, 1, 2, 3, 4]
    assert not ref.is_alive


async def test_telling_the_poison_pill_singleton_is_the_same_as_stop(system):
    ref, inbox = spawn_recorder(system)
    terminated = await watch(system, ref)
    ref.tell("first")
    ref.tell(PoisonPill)
    await until_terminated(terminated, ref)
    assert inbox.items == ["first"]


async def test_messages_queued_behind_a_poison_pill_become_dead_letters(system):
    ref, inbox = spawn_recorder(system)
    dead = DeadLetterLog(system)
    terminated = await watch(system, ref)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    ref.tell("ahead")
    ref.stop()
    ref.tell("behind-1")
    ref.tell("behind-2")
    hold.release.set()
    await until_terminated(terminated, ref)
    await dead.wait_count(2)
    assert inbox.items == ["ahead"]
    assert dead.messages(ref) == ["behind-1", "behind-2"]
    assert all(d.recipient == ref for d in dead.letters)


@pytest.mark.parametrize("policy", ["drop-new", "reject", "drop-head"])
async def test_stop_is_never_dropped_or_rejected_by_a_full_bounded_mailbox(system, policy):
    options = ActorOptions.create().with_mailbox_capacity(2).with_mailbox_overflow(policy)
    ref, inbox = spawn_recorder(system, options=options)
    terminated = await watch(system, ref)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    ref.tell("q1")
    ref.tell("q2")  # the mailbox is now full
    ref.stop()  # never raises
    if policy == "drop-head":
        # later tells may push out ordinary messages, never the pill
        for i in range(5):
            ref.tell(f"late-{i}")
    hold.release.set()
    await until_terminated(terminated, ref)
    if policy != "drop-head":
        assert inbox.items == ["q1", "q2"]
    assert not ref.is_alive


class StopsItself(Actor):
    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox

    async def on_receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            await message.run()
            return None
        if message == "stop now":
            self.context.stop(self.self_ref)
            await asyncio.sleep(0)
            self.inbox.add("finished the message in progress")
            return None
        self.inbox.add(message)
        return None


async def test_context_stop_lets_the_current_message_finish_and_dead_letters_the_rest(system):
    inbox = Inbox()
    ref = system.spawn(lambda: StopsItself(inbox))
    dead = DeadLetterLog(system)
    terminated = await watch(system, ref)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    ref.tell("before")
    ref.tell("stop now")
    for i in range(3):
        ref.tell(i)
    hold.release.set()
    await until_terminated(terminated, ref)
    await dead.wait_count(3)
    assert inbox.items == ["before", "finished the message in progress"]
    assert dead.messages(ref) == [0, 1, 2]


class Parent(Actor):
    def __init__(self, child_inbox: Inbox, stops: list[str] | None = None) -> None:
        super().__init__()
        self.child_inbox = child_inbox
        self.stops = stops
        self.child: Any = None

    def pre_start(self) -> None:
        self.child = self.context.spawn(lambda: Child(self.child_inbox, self.stops), "child")

    def post_stop(self) -> None:
        if self.stops is not None:
            self.stops.append(("parent", self.child.is_alive))

    def on_receive(self, message: Any) -> Any:
        if message == "child":
            return self.child
        if message == "stop child":
            self.context.stop(self.child)
        return None


class Child(Actor):
    def __init__(self, inbox: Inbox, stops: list[Any] | None) -> None:
        super().__init__()
        self.inbox = inbox
        self.stops = stops

    async def on_receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            await message.run()
            return None
        self.inbox.add(message)
        return message

    def post_stop(self) -> None:
        if self.stops is not None:
            self.stops.append(("child", None))


async def test_a_parent_can_stop_its_child_immediately(system):
    child_inbox = Inbox()
    parent = system.spawn(lambda: Parent(child_inbox), "parent")
    child = await parent.ask("child", timeout=TIMEOUT)
    dead = DeadLetterLog(system)
    terminated = await watch(system, child)
    hold = Hold()
    child.tell(hold)
    await hold.wait_started()
    child.tell("queued")
    parent.tell("stop child")
    await parent.ask("barrier", timeout=TIMEOUT)
    hold.release.set()
    await until_terminated(terminated, child)
    await dead.wait_count(1)
    assert child_inbox.items == []
    assert dead.messages(child) == ["queued"]
    assert parent.is_alive


class Hooks(Actor):
    def __init__(self, events: list[str]) -> None:
        super().__init__()
        self.events = events

    def pre_start(self) -> None:
        self.events.append("pre_start")

    def post_stop(self) -> None:
        self.events.append("post_stop")

    def on_receive(self, message: Any) -> Any:
        self.events.append(message)
        return message


class AsyncHooks(Hooks):
    async def pre_start(self) -> None:
        await asyncio.sleep(0)
        self.events.append("pre_start")

    async def post_stop(self) -> None:
        await asyncio.sleep(0)
        self.events.append("post_stop")


@pytest.mark.parametrize("factory", [Hooks, AsyncHooks])
async def test_pre_start_runs_before_the_first_message_and_post_stop_after_the_last(
    system, factory
):
    events: list[str] = []
    ref = system.spawn(lambda: factory(events))
    terminated = await watch(system, ref)
    ref.tell("m1")
    ref.tell("m2")
    ref.stop()
    await until_terminated(terminated, ref)
    assert events == ["pre_start", "m1", "m2", "post_stop"]


async def test_stopping_a_parent_stops_its_children_first(system):
    stops: list[Any] = []
    parent = system.spawn(lambda: Parent(Inbox(), stops), "parent")
    child = await parent.ask("child", timeout=TIMEOUT)
    terminated = await watch(system, parent)
    parent.stop()
    await until_terminated(terminated, parent)
    assert not child.is_alive
    # the child had stopped before the parent's post_stop ran
    assert stops == [("child", None), ("parent", False)]


async def test_shutdown_stops_children_before_parents():
    stops: list[Any] = []
    async with ActorSystem("t") as system:
        parent = system.spawn(lambda: Parent(Inbox(), stops), "parent")
        child = await parent.ask("child", timeout=TIMEOUT)
        await system.shutdown()
        assert stops == [("child", None), ("parent", False)]
        assert not parent.is_alive
        assert not child.is_alive


async def test_shutdown_without_drain_finishes_the_current_message_and_dead_letters_the_queue():
    async with ActorSystem("t") as system:
        ref, inbox = spawn_recorder(system, "worker")
        dead = DeadLetterLog(system)
        hold = Hold()
        ref.tell(hold)
        await hold.wait_started()
        for i in range(3):
            ref.tell(i)
        shutdown = asyncio.ensure_future(system.shutdown(drain=False))
        await asyncio.sleep(0.05)
        assert not shutdown.done()  # it waits for the message in progress
        hold.release.set()
        await asyncio.wait_for(shutdown, TIMEOUT)
        assert inbox.items == []
        assert dead.messages(ref) == [0, 1, 2]
        assert not ref.is_alive


async def test_shutdown_with_drain_processes_what_was_already_queued():
    async with ActorSystem("t") as system:
        ref, inbox = spawn_recorder(system, "worker")
        dead = DeadLetterLog(system)
        hold = Hold()
        ref.tell(hold)
        await hold.wait_started()
        for i in range(3):
            ref.tell(i)
        shutdown = asyncio.ensure_future(system.shutdown(drain=True))
        await asyncio.sleep(0.05)
        assert not shutdown.done()
        hold.release.set()
        await asyncio.wait_for(shutdown, TIMEOUT)
        assert inbox.items == [0, 1, 2]
        assert dead.messages(ref) == []
        assert not ref.is_alive


async def test_shutdown_drains_children_and_parents_alike():
    async with ActorSystem("t") as system:
        child_inbox = Inbox()
        parent = system.spawn(lambda: Parent(child_inbox), "parent")
        child = await parent.ask("child", timeout=TIMEOUT)
        for i in range(100):
            child.tell(i)
        await system.shutdown(drain=True)
        assert child_inbox.items == list(range(100))


async def test_after_shutdown_tell_is_a_dead_letter_and_ask_raises_actor_stopped_error():
    async with ActorSystem("t") as system:
        ref = system.spawn(Echo, "echo")
        dead = DeadLetterLog(system)
        await system.shutdown()
        before = system.dead_letters_count
        ref.tell("after shutdown")
        await dead.wait_count(1)
        assert dead.messages(ref) == ["after shutdown"]
        assert system.dead_letters_count == before + 1
        with pytest.raises(ActorStoppedError):
            await ref.ask("after shutdown", timeout=TIMEOUT)


async def test_spawn_after_shutdown_yields_no_live_actor():
    # spec-gap: API.md does not say what spawn does after shutdown. We accept an
    # ActorStoppedError from spawn, or a ref that is not alive and answers no ask.
    async with ActorSystem("t") as system:
        await system.shutdown()
        try:
            ref = system.spawn(Echo, "late")
        except ActorStoppedError:
            return
        with pytest.raises(ActorStoppedError):
            await ref.ask("x", timeout=TIMEOUT)


async def test_shutdown_is_idempotent():
    async with ActorSystem("t") as system:
        ref = system.spawn(Echo)
        await asyncio.gather(system.shutdown(), system.shutdown())
        await system.shutdown()
        await system.shutdown(drain=True)
        assert not ref.is_alive
    # leaving `async with` after an explicit shutdown is fine too


async def test_async_with_shuts_the_system_down_on_exit():
    async with ActorSystem("t") as system:
        ref, _inbox = spawn_recorder(system)
        ref.tell("x")
    assert not ref.is_alive


async def test_post_stop_runs_for_every_actor_on_shutdown():
    events: list[str] = []
    async with ActorSystem("t") as system:
        for _ in range(3):
            system.spawn(lambda: Hooks(events))
        await system.shutdown()
    assert events.count("pre_start") == 3
    assert events.count("post_stop") == 3


async def test_an_actor_stopped_by_stop_never_sees_later_messages(system):
    inbox = Inbox()
    ref = system.spawn(lambda: Recorder(inbox))
    terminated = await watch(system, ref)
    ref.stop()
    await until_terminated(terminated, ref)
    ref.tell("too late")
    with pytest.raises(ActorStoppedError):
        await ref.ask("too late", timeout=TIMEOUT)
    assert inbox.items == []


async def test_asks_still_queued_at_shutdown_without_drain_raise_actor_stopped_error():
    async with ActorSystem("t") as system:
        ref, _ = spawn_recorder(system, "worker")
        hold = Hold()
        ref.tell(hold)
        await hold.wait_started()
        pending = asyncio.ensure_future(ref.ask("queued question", timeout=5.0))
        await asyncio.sleep(0)
        shutdown = asyncio.ensure_future(system.shutdown(drain=False))
        await asyncio.sleep(0)
        hold.release.set()
        with pytest.raises(ActorStoppedError):
            await asyncio.wait_for(pending, TIMEOUT)
        await asyncio.wait_for(shutdown, TIMEOUT)


class FailingPostStop(Actor):
    def on_receive(self, message: Any) -> Any:
        return message

    def post_stop(self) -> None:
        raise RuntimeError("post_stop failed")


async def test_an_actor_whose_post_stop_raises_still_terminates(system):
    # spec-gap: an error in post_stop is logged; the actor is stopped all the same.
    ref = system.spawn(FailingPostStop, "bad-exit")
    terminated = await watch(system, ref)
    ref.stop()
    await until_terminated(terminated, ref)
    assert not ref.is_alive
    assert system.spawn(Echo, "bad-exit").is_alive  # and the name is free again


async def test_shutdown_with_a_failing_post_stop_completes():
    async with ActorSystem("t") as system:
        system.spawn(FailingPostStop)
        await asyncio.wait_for(system.shutdown(), TIMEOUT)


class Stuck(Actor):
    async def on_receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            await message.run()
        return None


async def test_shutdown_does_not_hang_past_its_timeout_on_a_stuck_handler():
    # spec-gap: API.md gives shutdown a timeout but not what happens when it expires; we
    # only require that it comes back (returning or raising TimeoutError) and that the stuck
    # actor is not left alive.
    async with ActorSystem("t") as system:
        ref = system.spawn(Stuck, "stuck")
        hold = Hold()
        ref.tell(hold)
        await hold.wait_started()
        loop = asyncio.get_running_loop()
        started = loop.time()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(system.shutdown(timeout=0.1), TIMEOUT)
        assert loop.time() - started < 1.0
        assert not ref.is_alive
        hold.release.set()
