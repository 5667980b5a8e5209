"""Supervision in the running system: directives, strategies, escalation, backoff."""

from __future__ import annotations

import time
from typing import Any

import pytest
from actor_kit import (
    TIMEOUT,
    Boom,
    Echo,
    Hold,
    Journal,
    Worker,
    recording,
    spawn_recorder,
    spawn_supervised,
    until_terminated,
    watch,
)

from dovecote import (
    Actor,
    ActorStoppedError,
    AllForOneStrategy,
    Backoff,
    Directive,
    OneForOneStrategy,
    default_decider,
)


async def test_resume_keeps_the_instance_and_its_state(system):
    journal = Journal()
    seen: list[BaseException] = []
    strategy = OneForOneStrategy(decider=recording(lambda e: Directive.RESUME, seen))
    _, kids = await spawn_supervised(system, strategy, {"w": lambda: Worker(journal)})
    w = kids["w"]
    assert await w.ask("count", timeout=TIMEOUT) == (1, 1)
    w.tell("boom")
    assert await w.ask("count", timeout=TIMEOUT) == (1, 2)
    assert journal.created == 1
    assert len(seen) == 1
    assert isinstance(seen[0], Boom)


async def test_restart_replaces_the_instance_and_resets_its_state_behind_the_same_ref(system):
    journal = Journal()
    strategy = OneForOneStrategy(decider=lambda e: Directive.RESTART)
    _, kids = await spawn_supervised(system, strategy, {"w": lambda: Worker(journal)})
    w = kids["w"]
    assert await w.ask("count", timeout=TIMEOUT) == (1, 1)
    assert await w.ask("count", timeout=TIMEOUT) == (1, 2)
    w.tell("boom")
    assert await w.ask("count", timeout=TIMEOUT) == (2, 1)
    assert journal.created == 2
    assert w.is_alive


async def test_stop_directive_stops_the_failing_child(system):
    journal = Journal()
    strategy = OneForOneStrategy(decider=lambda e: Directive.STOP)
    parent, kids = await spawn_supervised(system, strategy, {"w": lambda: Worker(journal)})
    w = kids["w"]
    terminated = await watch(system, w)
    w.tell("boom")
    await until_terminated(terminated, w)
    assert not w.is_alive
    assert journal.created == 1
    assert parent.is_alive
    with pytest.raises(ActorStoppedError):
        await w.ask("count", timeout=TIMEOUT)


async def test_one_for_one_restarts_only_the_failing_child(system):
    a, b = Journal(), Journal()
    strategy = OneForOneStrategy()
    _, kids = await spawn_supervised(
        system, strategy, {"a": lambda: Worker(a), "b": lambda: Worker(b)}
    )
    assert await kids["b"].ask("count", timeout=TIMEOUT) == (1, 1)
    kids["a"].tell("boom")
    assert await kids["a"].ask("whoami", timeout=TIMEOUT) == 2
    assert await kids["b"].ask("count", timeout=TIMEOUT) == (1, 2)
    assert b.created == 1


async def test_all_for_one_restarts_every_sibling_of_the_failing_child(system):
    a, b, c = Journal(), Journal(), Journal()
    strategy = AllForOneStrategy()
    _, kids = await spawn_supervised(
        system,
        strategy,
        {"a": lambda: Worker(a), "b": lambda: Worker(b), "c": lambda: Worker(c)},
    )
    for ref in kids.values():
        await ref.ask("count", timeout=TIMEOUT)
    kids["a"].tell("boom")
    assert await kids["a"].ask("count", timeout=TIMEOUT) == (2, 1)
    assert await kids["b"].ask("count", timeout=TIMEOUT) == (2, 1)
    assert await kids["c"].ask("count", timeout=TIMEOUT) == (2, 1)
    assert (a.created, b.created, c.created) == (2, 2, 2)


async def test_all_for_one_stop_stops_every_sibling(system):
    a, b = Journal(), Journal()
    strategy = AllForOneStrategy(decider=lambda e: Directive.STOP)
    _, kids = await spawn_supervised(
        system, strategy, {"a": lambda: Worker(a), "b": lambda: Worker(b)}
    )
    inboxes = [await watch(system, ref) for ref in kids.values()]
    kids["a"].tell("boom")
    for inbox, ref in zip(inboxes, kids.values(), strict=True):
        await until_terminated(inbox, ref)


class Middle(Actor):
    """A supervisor that escalates its child's failures to its own parent."""

    def __init__(self, journal: Journal, middle_journal: Journal) -> None:
        super().__init__()
        middle_journal.created += 1
        self.journal = journal
        self.child: Any = None

    supervisor_strategy = OneForOneStrategy(decider=lambda e: Directive.ESCALATE)

    def pre_start(self) -> None:
        self.child = self.context.spawn(lambda: Worker(self.journal), "leaf")

    def on_receive(self, message: Any) -> Any:
        if message == "leaf":
            return self.child
        return None


async def test_escalate_hands_the_failure_to_the_grandparent(system):
    leaf_journal, middle_journal = Journal(), Journal()
    seen: list[BaseException] = []
    top_strategy = OneForOneStrategy(decider=recording(lambda e: Directive.RESTART, seen))
    _, kids = await spawn_supervised(
        system, top_strategy, {"middle": lambda: Middle(leaf_journal, middle_journal)}
    )
    middle = kids["middle"]
    old_leaf = await middle.ask("leaf", timeout=TIMEOUT)
    leaf_terminated = await watch(system, old_leaf)
    old_leaf.tell("boom")
    await until_terminated(leaf_terminated, old_leaf)  # the middle restarted, its child stopped
    assert len(seen) == 1
    # spec-gap: the grandparent sees the original exception, as in Akka.
    assert isinstance(seen[0], Boom)
    new_leaf = await middle.ask("leaf", timeout=TIMEOUT)
    assert middle_journal.created == 2
    assert new_leaf != old_leaf
    assert await new_leaf.ask("whoami", timeout=TIMEOUT) == 2


async def test_escalate_to_a_stopping_grandparent_stops_the_whole_subtree(system):
    leaf_journal, middle_journal = Journal(), Journal()
    top_strategy = OneForOneStrategy(decider=lambda e: Directive.STOP)
    parent, kids = await spawn_supervised(
        system, top_strategy, {"middle": lambda: Middle(leaf_journal, middle_journal)}
    )
    middle = kids["middle"]
    leaf = await middle.ask("leaf", timeout=TIMEOUT)
    middle_terminated = await watch(system, middle)
    leaf.tell("boom")
    await until_terminated(middle_terminated, middle)
    assert not leaf.is_alive
    assert parent.is_alive


class PreStartFailsOnRestart(Actor):
    def __init__(self, journal: Journal) -> None:
        super().__init__()
        journal.created += 1
        self.incarnation = journal.created

    def pre_start(self) -> None:
        if self.incarnation > 1:
            raise ValueError("cannot start again")

    def on_receive(self, message: Any) -> Any:
        if message == "boom":
            raise Boom("first failure")
        return message


async def test_default_decider_stops_an_actor_whose_pre_start_fails_during_a_restart(system):
    journal = Journal()
    ref = system.spawn(lambda: PreStartFailsOnRestart(journal), "fragile")
    terminated = await watch(system, ref)
    assert await ref.ask("ok", timeout=TIMEOUT) == "ok"
    ref.tell("boom")
    await until_terminated(terminated, ref)
    assert journal.created == 2  # restarted once, then stopped, not restarted in a loop


async def test_a_failure_while_answering_an_ask_reaches_the_asker_and_the_supervisor(system):
    journal = Journal()
    seen: list[BaseException] = []
    strategy = OneForOneStrategy(decider=recording(default_decider, seen))
    parent, kids = await spawn_supervised(system, strategy, {"w": lambda: Worker(journal)})
    with pytest.raises(Boom):
        await kids["w"].ask("boom", timeout=TIMEOUT)
    await parent.ask("kids", timeout=TIMEOUT)  # the supervisor has handled the failure
    assert len(seen) == 1
    assert isinstance(seen[0], Boom)
    assert await kids["w"].ask("whoami", timeout=TIMEOUT) == 2  # and it was restarted


async def test_the_user_guardian_restarts_a_failing_top_level_actor(system):
    journal = Journal()
    ref = system.spawn(lambda: Worker(journal), "top")
    assert await ref.ask("count", timeout=TIMEOUT) == (1, 1)
    with pytest.raises(Boom):
        await ref.ask("boom", timeout=TIMEOUT)
    assert await ref.ask("count", timeout=TIMEOUT) == (2, 1)


async def test_the_user_guardian_stops_a_top_level_actor_after_ten_restarts_in_a_minute(system):
    # default strategy: OneForOneStrategy(max_restarts=10, within=60.0)
    journal = Journal()
    ref = system.spawn(lambda: Worker(journal), "top")
    terminated = await watch(system, ref)
    for _ in range(10):
        ref.tell("boom")
    assert await ref.ask("whoami", timeout=TIMEOUT) == 11
    assert ref.is_alive
    ref.tell("boom")
    await until_terminated(terminated, ref)
    assert journal.created == 11


async def test_each_child_has_its_own_restart_allowance(system):
    a, b = Journal(), Journal()
    strategy = OneForOneStrategy(max_restarts=1, within=60.0)
    _, kids = await spawn_supervised(
        system, strategy, {"a": lambda: Worker(a), "b": lambda: Worker(b)}
    )
    kids["a"].tell("boom")
    kids["b"].tell("boom")
    assert await kids["a"].ask("whoami", timeout=TIMEOUT) == 2
    assert await kids["b"].ask("whoami", timeout=TIMEOUT) == 2


async def test_a_failure_in_a_sync_handler_is_supervised_like_an_async_one(system):
    seen: list[BaseException] = []

    class SyncFailing(Actor):
        def on_receive(self, message: Any) -> Any:
            raise Boom("sync")

    strategy = OneForOneStrategy(decider=recording(lambda e: Directive.RESUME, seen))
    parent, kids = await spawn_supervised(system, strategy, {"s": SyncFailing})
    with pytest.raises(Boom):
        await kids["s"].ask("x", timeout=TIMEOUT)
    kids["s"].tell("y")
    with pytest.raises(Boom):
        await kids["s"].ask("z", timeout=TIMEOUT)
    await parent.ask("kids", timeout=TIMEOUT)  # the supervisor has handled the failures
    assert len(seen) == 3


class TimedWorker(Worker):
    def __init__(self, journal: Journal) -> None:
        super().__init__(journal)
        journal.events.append(("created", time.monotonic()))

    async def on_receive(self, message: Any) -> Any:
        if message == "boom":
            self.journal.events.append(("failed", time.monotonic()))
        return await super().on_receive(message)


async def test_backoff_delays_each_consecutive_restart_exponentially(system):
    journal = Journal()
    strategy = OneForOneStrategy(backoff=Backoff(min_delay=0.05, max_delay=1.0, random_factor=0.0))
    _, kids = await spawn_supervised(system, strategy, {"w": lambda: TimedWorker(journal)})
    w = kids["w"]
    w.tell("boom")
    w.tell("queued during the backoff")
    assert await w.ask("whoami", timeout=TIMEOUT) == 2
    w.tell("boom")
    assert await w.ask("whoami", timeout=TIMEOUT) == 3
    kinds = [kind for kind, _ in journal.events]
    assert kinds == ["created", "failed", "created", "failed", "created"]
    times = [at for _, at in journal.events]
    first_delay = times[2] - times[1]
    second_delay = times[4] - times[3]
    assert first_delay >= 0.045  # min_delay * 2**0
    assert second_delay >= 0.095  # min_delay * 2**1
    assert "queued during the backoff" in journal.seen(2)


async def test_without_backoff_a_restart_is_prompt(system):
    journal = Journal()
    _, kids = await spawn_supervised(
        system, OneForOneStrategy(), {"w": lambda: TimedWorker(journal)}
    )
    kids["w"].tell("boom")
    assert await kids["w"].ask("whoami", timeout=TIMEOUT) == 2
    (_, failed), (_, created) = journal.events[1:3]
    assert created - failed < 0.2  # no hidden default delay


async def test_a_supervised_failure_does_not_disturb_unrelated_actors(system):
    journal = Journal()
    bystander, inbox = spawn_recorder(system, "bystander")
    strategy = OneForOneStrategy(decider=lambda e: Directive.STOP)
    parent, kids = await spawn_supervised(system, strategy, {"w": lambda: Worker(journal)})
    kids["w"].tell("boom")
    bystander.tell("hello")
    assert await bystander.ask("barrier", timeout=TIMEOUT) == "barrier"
    assert inbox.items == ["hello", "barrier"]
    assert parent.is_alive
    echo = system.spawn(Echo)
    assert await echo.ask("fine", timeout=TIMEOUT) == "fine"


async def test_an_ask_queued_behind_a_failure_that_stops_the_actor_raises_actor_stopped_error(
    system,
):
    journal = Journal()
    strategy = OneForOneStrategy(decider=lambda e: Directive.STOP)
    _, kids = await spawn_supervised(system, strategy, {"w": lambda: Worker(journal)})
    w = kids["w"]
    hold = Hold()
    w.tell(hold)
    await hold.wait_started()
    w.tell("boom")
    started = time.monotonic()
    hold.release.set()
    with pytest.raises(ActorStoppedError):
        await w.ask("queued behind the failure", timeout=5.0)
    assert time.monotonic() - started < 1.0
    assert journal.seen() == ["boom"]
