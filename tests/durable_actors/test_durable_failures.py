"""A failing handler releases its durable message: transient comes back, STOP gives it up."""

from __future__ import annotations

from typing import Any

from dovecote import (
    Actor,
    ActorSystem,
    Directive,
    OneForOneStrategy,
)
from dovecote.codec import default_codec
from dovecote.durable import NonRetriableError

from .recorder import Recorder, Seen, durable


class FailTwice(Actor):
    """Fails on the first two deliveries of each message, then handles it."""

    attempts: dict[Any, int]

    def __init__(self, seen: Seen, attempts: dict[Any, int]) -> None:
        super().__init__()
        self.seen = seen
        self.attempts = attempts

    def on_receive(self, message: Any) -> None:
        self.attempts[message] = self.attempts.get(message, 0) + 1
        if self.attempts[message] <= 2:
            raise ValueError(f"attempt {self.attempts[message]} of {message!r}")
        self.seen.add(message)


async def test_a_restarted_actor_gets_the_failed_message_again(
    system: ActorSystem, store: Any
) -> None:
    seen, attempts = Seen(), {}
    ref = system.spawn(lambda: FailTwice(seen, attempts), "flaky", durable(store))
    ref.tell("a")
    ref.tell("b")
    await seen.count(2)
    assert sorted(seen.messages) == ["a", "b"]
    assert attempts == {"a": 3, "b": 3}
    await system.shutdown()
    stats = await store.stats("/user/flaky")
    assert (stats.committed_count, stats.dead_lettered_count) == (2, 0)


async def test_after_max_attempts_the_message_is_a_store_dead_letter(
    system: ActorSystem, store: Any
) -> None:
    await store.ensure_mailbox("/user/doomed", max_attempts=2)
    seen = Seen()
    ref = system.spawn(lambda: Recorder(seen), "doomed", durable(store))
    ref.tell(["fail", 1])
    ref.tell("after")
    await seen.wait_for(lambda: "after" in seen.messages)
    await system.shutdown()
    assert seen.messages.count(["fail", 1]) == 2
    [record] = await store.dead_letters("/user/doomed")
    assert record.poison_reason == "max_attempts_exceeded"
    assert record.attempt_count == 2


async def test_resume_releases_transiently_too(system: ActorSystem, store: Any) -> None:
    seen = Seen()
    resume = OneForOneStrategy(decider=lambda error: Directive.RESUME)
    options = durable(store).with_supervisor_strategy(resume)
    await store.ensure_mailbox("/user/resumed", max_attempts=3)
    ref = system.spawn(lambda: Recorder(seen), "resumed", options)
    ref.tell(["fail", "x"])
    await seen.count(3)
    ref.tell("after")  # the claim after the third delivery dead-letters it
    await seen.count(4)
    await system.shutdown()
    assert seen.messages == [["fail", "x"]] * 3 + ["after"]
    [record] = await store.dead_letters("/user/resumed")
    assert record.poison_reason == "max_attempts_exceeded"


async def test_a_stop_directive_releases_permanently(system: ActorSystem, store: Any) -> None:
    seen = Seen()
    stop = OneForOneStrategy(decider=lambda error: Directive.STOP)
    ref = system.spawn(
        lambda: Recorder(seen), "stopped", durable(store).with_supervisor_strategy(stop)
    )
    ref.tell(["fail", "once"])
    ref.tell("left in the store")
    await seen.count(1)
    await system.shutdown()
    [record] = await store.dead_letters("/user/stopped")
    assert record.poison_reason == "permanent_failure"
    assert "stopped" in (record.failure_history[-1].note or "")
    stats = await store.stats("/user/stopped")
    assert stats.pending_count + stats.claimed_count == 1  # it stays for the next run


class Picky(Actor):
    def __init__(self, seen: Seen) -> None:
        super().__init__()
        self.seen = seen

    def on_receive(self, message: Any) -> None:
        self.seen.add(message)
        if message == "poison":
            raise NonRetriableError("cannot ever handle this")
        if message == "flagged":
            error = RuntimeError("flagged as non-retriable")
            error.is_retriable = False  # type: ignore[attr-defined]
            raise error


async def test_non_retriable_errors_release_permanently_while_the_actor_restarts(
    system: ActorSystem, store: Any
) -> None:
    seen = Seen()
    ref = system.spawn(lambda: Picky(seen), "picky", durable(store))
    for message in ("poison", "flagged", "fine"):
        ref.tell(message)
    await seen.count(3)
    await system.shutdown()
    assert seen.messages == ["poison", "flagged", "fine"]
    records = await store.dead_letters("/user/picky")
    assert [r.poison_reason for r in records] == ["permanent_failure"] * 2


async def test_a_retriable_predicate_option_decides(system: ActorSystem, store: Any) -> None:
    seen = Seen()
    options = durable(store, retriable=lambda error: not isinstance(error, ValueError))
    ref = system.spawn(lambda: Recorder(seen), "pred", options)
    ref.tell(["fail", 1])
    ref.tell("next")
    await seen.count(2)
    await system.shutdown()
    [record] = await store.dead_letters("/user/pred")
    assert record.poison_reason == "permanent_failure"


class FailOnceAt(Actor):
    """Fails the first delivery of ``bad``; records every delivery."""

    def __init__(self, seen: Seen, bad: int) -> None:
        super().__init__()
        self.seen = seen
        self.bad = bad

    def on_receive(self, message: Any) -> None:
        self.seen.add(message)
        if message == self.bad and self.seen.messages.count(message) == 1:
            raise ValueError("first delivery fails")


async def test_a_failed_message_keeps_its_place_ahead_of_those_claimed_with_it(
    system: ActorSystem, store: Any
) -> None:
    seen = Seen()
    ref = system.spawn(lambda: FailOnceAt(seen, 30), "ordered", durable(store, claim_ahead=16))
    for i in range(40):
        ref.tell(i)
    await seen.count(41)
    assert seen.messages == [*range(31), *range(30, 40)]
    await system.shutdown()
    stats = await store.stats("/user/ordered")
    assert (stats.committed_count, stats.pending_count, stats.claimed_count) == (40, 0, 0)


async def test_messages_claimed_behind_a_failure_keep_their_attempts(
    system: ActorSystem, store: Any
) -> None:
    # max_attempts=1: a message given back with a spent attempt would be dead-lettered
    await store.ensure_mailbox("/user/once", ordering_mode="unordered", max_attempts=1)
    seen = Seen()
    ref = system.spawn(lambda: FailOnceAt(seen, 20), "once", durable(store))
    for i in range(40):
        ref.tell(i)
    await seen.count(40)
    await system.shutdown()
    assert seen.messages == list(range(40))  # the failed one was not delivered again
    [record] = await store.dead_letters("/user/once")
    assert record.poison_reason == "max_attempts_exceeded"
    stats = await store.stats("/user/once")
    assert (stats.committed_count, stats.pending_count, stats.claimed_count) == (39, 0, 0)


class Counting(Actor):
    """Records each message; at ``probe`` it also records how many the store has claimed."""

    def __init__(self, seen: Seen, store: Any, probe: int) -> None:
        super().__init__()
        self.seen, self.store, self.probe = seen, store, probe
        self.claimed: list[int] = []

    async def on_receive(self, message: Any) -> None:
        if message == self.probe:
            self.claimed.append((await self.store.stats("/user/ahead")).claimed_count)
        self.seen.add(message)


async def test_by_default_a_durable_actor_claims_ahead(
    system: ActorSystem, store: Any
) -> None:
    await store.ensure_mailbox("/user/ahead", ordering_mode="unordered")
    codec = default_codec
    for i in range(60):
        await store.send("/user/ahead", codec.encode(i), sender="test")
    seen = Seen()
    actors: list[Counting] = []

    def make() -> Counting:
        actors.append(Counting(seen, store, 40))
        return actors[-1]

    system.spawn(make, "ahead", durable(store))  # claim_ahead: the default
    await seen.count(60)
    await system.shutdown()
    assert seen.messages == list(range(60))
    # the one being handled and more claimed with it (claim_ahead=1 would hold just one)
    assert actors[0].claimed[0] > 1
