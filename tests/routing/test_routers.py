"""Routers: each policy's distribution, Broadcast, supervision of routees, resizing,
groups, and the ledger (nothing lost when a routee stops)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from dovecote import Actor, ActorStoppedError, ActorSystem, OptionsError, Terminated
from dovecote.routing import (
    NO_ROUTEE,
    Broadcast,
    BroadcastGroup,
    BroadcastPool,
    ConsistentHashingGroup,
    ConsistentHashingLogic,
    ConsistentHashingPool,
    RandomPool,
    RoundRobinGroup,
    RoundRobinPool,
    SmallestMailboxLogic,
    SmallestMailboxPool,
    resize,
    routees,
)
from dovecote.testkit import EventRecorder, TestProbe

TIMEOUT = 5.0


class Named(Actor):
    """Answers every message with its own name; 'boom' raises, 'die' stops it."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def on_receive(self, message: Any) -> Any:
        if message == "boom":
            raise RuntimeError("boom")
        if message == "die":
            self.context.stop(self.self_ref)
            return None
        if message == "count":
            return self.count
        self.count += 1
        return self.self_ref.name


class Report(Actor):
    """Tells (its name, message) to the sender of each message."""

    def on_receive(self, message: Any) -> None:
        sender = self.context.sender
        if sender is not None:
            sender.tell((self.self_ref.name, message))


async def test_round_robin_pool_visits_every_routee_in_turn(system: ActorSystem) -> None:
    pool = system.spawn(RoundRobinPool(3, Named), "rr")
    names = [await pool.ask(i, timeout=TIMEOUT) for i in range(9)]
    assert names == ["routee-0", "routee-1", "routee-2"] * 3


async def test_random_pool_spreads_messages_over_all_routees(system: ActorSystem) -> None:
    pool = system.spawn(RandomPool(4, Named), "random")
    names = Counter([await pool.ask(i, timeout=TIMEOUT) for i in range(400)])
    assert set(names) == {f"routee-{i}" for i in range(4)}
    assert min(names.values()) > 50  # uniform: 100 each expected


async def test_smallest_mailbox_picks_the_least_loaded_routee() -> None:
    sizes = {"a": 5, "b": 0, "c": 2}
    logic = SmallestMailboxLogic()
    assert logic.select("m", ["a", "b", "c"], sizes.__getitem__) == ["b"]
    sizes["b"] = 9
    assert logic.select("m", ["a", "b", "c"], sizes.__getitem__) == ["c"]


async def test_smallest_mailbox_pool_avoids_a_busy_routee(system: ActorSystem) -> None:
    gate = asyncio.Event()
    blocked = asyncio.Event()

    class Slow(Actor):
        async def on_receive(self, message: Any) -> Any:
            if message == "block":
                blocked.set()
                await gate.wait()
            return self.self_ref.name

    pool = system.spawn(SmallestMailboxPool(2, Slow), "smallest")
    first = asyncio.ensure_future(pool.ask("block", timeout=TIMEOUT))
    await asyncio.wait_for(blocked.wait(), TIMEOUT)  # routee-0 is now busy
    busy_name = "routee-0"
    (r0, _r1) = await routees(pool)
    for _ in range(3):
        r0.tell("queued")  # routee-0's mailbox fills up behind the blocked message
    names = [await pool.ask(i, timeout=TIMEOUT) for i in range(5)]
    assert busy_name not in names
    gate.set()
    assert await first == busy_name


async def test_consistent_hashing_sends_equal_keys_to_the_same_routee(
    system: ActorSystem,
) -> None:
    pool = system.spawn(ConsistentHashingPool(4, Named, key=lambda m: m[0]), "hash")
    seen: dict[str, set[str]] = {}
    for i in range(200):
        key = f"customer-{i % 20}"
        seen.setdefault(key, set()).add(await pool.ask((key, i), timeout=TIMEOUT))
    assert all(len(names) == 1 for names in seen.values())
    assert len({n for names in seen.values() for n in names}) > 1  # keys spread


def test_consistent_hashing_moves_only_the_keys_of_a_removed_routee() -> None:
    logic = ConsistentHashingLogic(key=lambda m: m)
    before = {k: logic.select(k, ["a", "b", "c", "d"], len)[0] for k in range(1000)}
    after = {k: logic.select(k, ["a", "b", "d"], len)[0] for k in range(1000)}
    moved = [k for k in before if before[k] != after[k]]
    assert all(before[k] == "c" for k in moved)
    assert 100 < len(moved) < 500


async def test_broadcast_pool_and_broadcast_envelope_reach_every_routee(
    system: ActorSystem,
) -> None:
    probe = TestProbe(system)
    pool = system.spawn(BroadcastPool(3, Report), "bcast")
    pool.tell("hello", sender=probe.ref)
    got = await probe.receive_n(3, timeout=TIMEOUT)
    assert sorted(got) == [(f"routee-{i}", "hello") for i in range(3)]

    rr = system.spawn(RoundRobinPool(2, Report), "rr-bcast")
    rr.tell(Broadcast("all"), sender=probe.ref)
    assert sorted(await probe.receive_n(2, timeout=TIMEOUT)) == [
        ("routee-0", "all"),
        ("routee-1", "all"),
    ]
    await probe.expect_no_message(0.05)


async def test_a_failing_routee_is_restarted_and_keeps_routing(system: ActorSystem) -> None:
    pool = system.spawn(RoundRobinPool(2, Named), "restart")
    before = await routees(pool)
    assert await pool.ask("x", timeout=TIMEOUT) == "routee-0"
    pool.tell("boom")  # routee-1 fails and restarts (its state resets)
    assert await pool.ask("y", timeout=TIMEOUT) == "routee-0"
    assert await pool.ask("count", timeout=TIMEOUT) == 0  # routee-1, fresh after restart
    assert await routees(pool) == before  # restarted in place, not replaced


async def test_a_routee_that_stops_is_replaced(system: ActorSystem) -> None:
    pool = system.spawn(RoundRobinPool(2, Named), "replace")
    probe = TestProbe(system)
    first = await routees(pool)
    probe.watch(first[0])
    pool.tell("die")  # routee-0 stops itself
    await probe.expect_terminated(first[0], timeout=TIMEOUT)
    # The router's Terminated was queued before the probe saw its own, so it is handled
    # before this ask: the replacement exists by then.
    now = await routees(pool)
    assert first[0] not in now
    assert sorted(r.name for r in now) == ["routee-0", "routee-1"]


async def test_resizing_a_pool_grows_and_shrinks_it(system: ActorSystem) -> None:
    pool = system.spawn(RoundRobinPool(2, Named), "resize")
    assert len(await resize(pool, 5)) == 5
    names = {await pool.ask(i, timeout=TIMEOUT) for i in range(5)}
    assert len(names) == 5
    shrunk = await resize(pool, 1)
    assert [r.name for r in shrunk] == ["routee-0"]
    assert {await pool.ask(i, timeout=TIMEOUT) for i in range(3)} == {"routee-0"}
    with pytest.raises(OptionsError):
        await resize(pool, 0)
    assert len(await routees(pool)) == 1  # a bad request changes nothing


async def test_groups_route_to_existing_actors_and_never_stop_them(system: ActorSystem) -> None:
    members = [system.spawn(Named, f"m{i}") for i in range(3)]
    group = system.spawn(RoundRobinGroup(members), "group")
    assert [await group.ask(i, timeout=TIMEOUT) for i in range(3)] == ["m0", "m1", "m2"]
    hashed = system.spawn(ConsistentHashingGroup(members, key=lambda m: m % 3), "hgroup")
    assert len({await hashed.ask(6, timeout=TIMEOUT) for _ in range(5)}) == 1
    with pytest.raises(OptionsError):
        await resize(group, 4)
    probe = TestProbe(system)
    probe.watch(group)
    group.stop()
    await probe.expect_terminated(group, timeout=TIMEOUT)
    assert all(m.is_alive for m in members)


async def test_a_group_drops_members_that_stop(system: ActorSystem) -> None:
    members = [system.spawn(Named, f"g{i}") for i in range(2)]
    group = system.spawn(RoundRobinGroup(members), "shrinking")
    probe = TestProbe(system)
    members[0].tell("die")
    await probe.expect_terminated(members[0], timeout=TIMEOUT)
    assert await routees(group) == (members[1],)  # its Terminated came before this ask
    assert {await group.ask(i, timeout=TIMEOUT) for i in range(3)} == {"g1"}


def test_routers_without_routees_are_rejected_at_creation() -> None:
    for bad in (0, -1, True, 1.5):
        with pytest.raises(OptionsError):
            RoundRobinPool(bad, Named)  # type: ignore[arg-type]
    with pytest.raises(OptionsError):
        RoundRobinGroup([])
    with pytest.raises(OptionsError):
        BroadcastGroup(())
    with pytest.raises(OptionsError):
        ConsistentHashingPool(2, Named, key=None)  # type: ignore[arg-type]


async def test_ledger_nothing_is_lost_when_routees_stop(system: ActorSystem) -> None:
    """Every message sent through a group either reaches a routee or is a dead letter."""
    handled: list[int] = []

    class Sink(Actor):
        def on_receive(self, message: Any) -> None:
            if message == "die":
                self.context.stop(self.self_ref)
            elif isinstance(message, int):
                handled.append(message)

    members = [system.spawn(Sink, f"s{i}") for i in range(2)]
    group = system.spawn(RoundRobinGroup(members), "ledger")
    with EventRecorder(system) as recorder:
        for i in range(100):
            group.tell(i)
            if i == 30:
                members[0].tell("die")
            if i == 60:
                members[1].tell("die")
        probe = TestProbe(system)
        await probe.expect_terminated(members[1], timeout=TIMEOUT)
        marker = 10_000
        group.tell(marker)  # no routee left: a dead letter with reason no-routee
        await recorder.expect(lambda e: getattr(e, "message", None) == marker, timeout=TIMEOUT)
        dead = [d.message for d in recorder.dead_letters if isinstance(d.message, int)]
    assert sorted(handled + dead) == [*range(100), marker]
    assert any(d.reason == NO_ROUTEE for d in recorder.dead_letters)


async def test_an_ask_to_a_router_with_no_routee_fails_at_once(system: ActorSystem) -> None:
    member = system.spawn(Named, "only")
    group = system.spawn(RoundRobinGroup([member]), "empty-soon")
    probe = TestProbe(system)
    member.tell("die")
    await probe.expect_terminated(member, timeout=TIMEOUT)
    assert await routees(group) == ()

    with pytest.raises(ActorStoppedError):
        await group.ask("anyone?", timeout=TIMEOUT)


async def test_watching_a_pool_reports_its_termination(system: ActorSystem) -> None:
    probe = TestProbe(system)
    pool = system.spawn(RoundRobinPool(2, Named), "watched")
    probe.watch(pool)
    pool.stop()
    got = await probe.expect_message(Terminated, timeout=TIMEOUT)
    assert got.ref == pool
