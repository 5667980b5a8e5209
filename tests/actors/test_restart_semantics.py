"""What a restart keeps and loses, lifecycle hook order, and the restart budget boundaries."""

from __future__ import annotations

import asyncio
from typing import Any

from actor_kit import (
    TIMEOUT,
    Boom,
    DeadLetterLog,
    Echo,
    Hold,
    Journal,
    Worker,
    spawn_supervised,
    terminations,
    until_terminated,
    watch,
)

from dovecote import Actor, ActorOptions, ActorSystem, Mailbox, ManualClock, OneForOneStrategy


class StashThenFail(Actor):
    """Incarnation 1 stashes "s*" messages and fails on "boom"; later ones record all."""

    def __init__(self, journal: Journal) -> None:
        super().__init__()
        journal.created += 1
        self.incarnation = journal.created
        self.journal = journal

    async def on_receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            await message.run()
            return None
        self.journal.inbox.add((self.incarnation, message))
        if self.incarnation == 1 and isinstance(message, str) and message.startswith("s"):
            self.context.stash()
            return None
        if message == "boom":
            raise Boom("restart me")
        return message


async def test_a_restart_keeps_queued_messages_in_order_with_stashed_ones_in_front(system):
    journal = Journal()
    ref = system.spawn(lambda: StashThenFail(journal), "keeper")
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    for message in ["s1", "s2", "boom", "m1", "m2", "s3", "m3"]:
        ref.tell(message)
    hold.release.set()
    await journal.inbox.wait_for(lambda items: (2, "m3") in items)
    assert journal.seen(1) == ["s1", "s2", "boom"]
    # stashed first (in stash order), then what was queued at the restart, in order;
    # the failing message is not redelivered
    assert journal.seen(2) == ["s1", "s2", "m1", "m2", "s3", "m3"]


async def test_the_failing_message_is_neither_redelivered_nor_a_dead_letter(system):
    journal = Journal()
    ref = system.spawn(lambda: Worker(journal), "w")
    dead = DeadLetterLog(system)
    before = system.dead_letters_count
    ref.tell("boom")
    ref.tell("after")
    assert await ref.ask("whoami", timeout=TIMEOUT) == 2
    assert journal.seen() == ["boom", "after", "whoami"]
    assert journal.seen(2) == ["after", "whoami"]
    assert dead.letters == []
    assert system.dead_letters_count == before


class Hooked(Actor):
    """Overrides every hook and records calls as (incarnation, hook, details)."""

    def __init__(self, journal: Journal) -> None:
        super().__init__()
        journal.created += 1
        self.incarnation = journal.created
        self.journal = journal
        journal.events.append((self.incarnation, "__init__"))

    def pre_start(self) -> None:
        self.journal.events.append((self.incarnation, "pre_start"))

    def post_stop(self) -> None:
        self.journal.events.append((self.incarnation, "post_stop"))

    def pre_restart(self, error: BaseException, message: Any) -> None:
        self.journal.events.append((self.incarnation, "pre_restart", error, message))

    def post_restart(self, error: BaseException) -> None:
        self.journal.events.append((self.incarnation, "post_restart", error))

    def on_receive(self, message: Any) -> Any:
        if message == "boom":
            raise Boom("hooked")
        return message


class AsyncHooked(Hooked):
    async def pre_start(self) -> None:
        await asyncio.sleep(0)
        super().pre_start()

    async def post_stop(self) -> None:
        await asyncio.sleep(0)
        super().post_stop()

    async def pre_restart(self, error: BaseException, message: Any) -> None:
        await asyncio.sleep(0)
        super().pre_restart(error, message)

    async def post_restart(self, error: BaseException) -> None:
        await asyncio.sleep(0)
        super().post_restart(error)


async def _run_hook_scenario(system: Any, factory: Any) -> list[Any]:
    journal = Journal()
    ref = system.spawn(lambda: factory(journal), "hooked")
    terminated = await watch(system, ref)
    ref.tell("boom")
    assert await ref.ask("after", timeout=TIMEOUT) == "after"
    ref.stop()
    await until_terminated(terminated, ref)
    return journal.events


async def test_overridden_hooks_run_in_order_pre_restart_old_then_post_restart_new(system):
    for factory in (Hooked, AsyncHooked):
        events = await _run_hook_scenario(system, factory)
        names = [event[:2] for event in events]
        assert names == [
            (1, "__init__"),
            (1, "pre_start"),
            (1, "pre_restart"),
            (2, "__init__"),
            (2, "post_restart"),
            (2, "post_stop"),
        ], factory
        _, _, error, message = events[2]
        assert isinstance(error, Boom)
        assert message == "boom"
        _, _, restart_error = events[4]
        assert restart_error is error


class DefaultHooks(Actor):
    """Overrides only pre_start and post_stop, so the default restart hooks call them."""

    def __init__(self, journal: Journal) -> None:
        super().__init__()
        journal.created += 1
        self.incarnation = journal.created
        self.journal = journal

    def pre_start(self) -> None:
        self.journal.events.append((self.incarnation, "pre_start"))

    def post_stop(self) -> None:
        self.journal.events.append((self.incarnation, "post_stop"))

    def on_receive(self, message: Any) -> Any:
        if message == "boom":
            raise Boom("default hooks")
        return message


async def test_default_restart_hooks_call_post_stop_on_the_old_and_pre_start_on_the_new(system):
    journal = Journal()
    ref = system.spawn(lambda: DefaultHooks(journal))
    terminated = await watch(system, ref)
    ref.tell("boom")
    assert await ref.ask("after", timeout=TIMEOUT) == "after"
    ref.stop()
    await until_terminated(terminated, ref)
    assert journal.events == [
        (1, "pre_start"),
        (1, "post_stop"),
        (2, "pre_start"),
        (2, "post_stop"),
    ]


class ParentWithChild(Actor):
    def __init__(self, journal: Journal, keep_children: bool = False) -> None:
        super().__init__()
        journal.created += 1
        self.incarnation = journal.created
        self.journal = journal
        self.keep_children = keep_children

    def pre_start(self) -> None:
        self.context.spawn(Echo, "child")

    def pre_restart(self, error: BaseException, message: Any) -> Any:
        if self.keep_children:
            return None  # keep them: neither stop the children nor spawn new ones
        return super().pre_restart(error, message)

    def post_restart(self, error: BaseException) -> Any:
        if self.keep_children:
            return None
        return super().post_restart(error)

    def on_receive(self, message: Any) -> Any:
        if message == "boom":
            raise Boom("parent failed")
        if message == "children":
            return self.context.children
        return None


async def test_a_restart_first_stops_the_old_instances_children(system):
    journal = Journal()
    parent = system.spawn(lambda: ParentWithChild(journal), "parent")
    (old_child,) = await parent.ask("children", timeout=TIMEOUT)
    terminated = await watch(system, old_child)
    parent.tell("boom")
    (new_child,) = await parent.ask("children", timeout=TIMEOUT)
    # the old child was stopped (and waited for) before the new instance spawned its own
    assert terminations(terminated.items, old_child)
    assert not old_child.is_alive
    assert new_child != old_child
    assert new_child.path == "/user/parent/child"
    assert await new_child.ask("hi", timeout=TIMEOUT) == "hi"


async def test_overriding_pre_restart_keeps_the_children_alive(system):
    journal = Journal()
    parent = system.spawn(lambda: ParentWithChild(journal, keep_children=True), "parent")
    (child,) = await parent.ask("children", timeout=TIMEOUT)
    parent.tell("boom")
    assert await parent.ask("children", timeout=TIMEOUT) == (child,)
    assert journal.created == 2
    assert child.is_alive
    assert await child.ask("still here", timeout=TIMEOUT) == "still here"


async def test_max_restarts_zero_stops_on_the_first_failure(system):
    journal = Journal()
    strategy = OneForOneStrategy(max_restarts=0)
    _, kids = await spawn_supervised(system, strategy, {"w": lambda: Worker(journal)})
    terminated = await watch(system, kids["w"])
    kids["w"].tell("boom")
    await until_terminated(terminated, kids["w"])
    assert journal.created == 1


async def test_max_restarts_one_allows_exactly_one_restart_in_the_window(system):
    journal = Journal()
    strategy = OneForOneStrategy(max_restarts=1, within=60.0)
    _, kids = await spawn_supervised(system, strategy, {"w": lambda: Worker(journal)})
    w = kids["w"]
    terminated = await watch(system, w)
    w.tell("boom")
    assert await w.ask("whoami", timeout=TIMEOUT) == 2
    w.tell("boom")
    await until_terminated(terminated, w)
    assert journal.created == 2


async def test_the_restart_window_slides():
    # On a ManualClock: the window is exact, whatever the load on the machine.
    clock = ManualClock()
    async with ActorSystem("t-window", clock=clock) as system:
        journal = Journal()
        strategy = OneForOneStrategy(max_restarts=1, within=0.1)
        _, kids = await spawn_supervised(system, strategy, {"w": lambda: Worker(journal)})
        w = kids["w"]
        terminated = await watch(system, w)
        w.tell("boom")
        assert await w.ask("whoami", timeout=TIMEOUT) == 2
        clock.advance(0.15)  # the first restart leaves the window
        w.tell("boom")
        assert await w.ask("whoami", timeout=TIMEOUT) == 3
        w.tell("boom")  # second restart within 0.1 s: over budget
        await until_terminated(terminated, w)
        assert journal.created == 3
        await system.shutdown()


async def test_each_incarnation_gets_a_fresh_mailbox_from_the_factory(system):
    made: list[Mailbox] = []

    def mailbox_factory() -> Mailbox:
        mailbox = Mailbox()
        made.append(mailbox)
        return mailbox

    journal = Journal()
    options = ActorOptions.create().with_mailbox(mailbox_factory)
    ref = system.spawn(lambda: Worker(journal), "w", options)
    assert await ref.ask("whoami", timeout=TIMEOUT) == 1
    assert len(made) == 1
    ref.tell("boom")
    assert await ref.ask("whoami", timeout=TIMEOUT) == 2
    assert len(made) == 2
    assert made[0] is not made[1]


async def test_a_restarted_bounded_mailbox_keeps_its_policy(system):
    journal = Journal()
    options = ActorOptions.create().with_mailbox_capacity(2).with_mailbox_overflow("drop-new")
    ref = system.spawn(lambda: Worker(journal), "w", options)
    ref.tell("boom")
    assert await ref.ask("whoami", timeout=TIMEOUT) == 2
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    for i in range(5):
        ref.tell(i)
    hold.release.set()
    await journal.inbox.wait_for(lambda items: (2, 1) in items)
    await asyncio.sleep(0.05)
    assert journal.seen(2) == ["whoami", 0, 1]
