"""One message at a time, FIFO per sender-receiver pair, fairness, no task per idle actor."""

from __future__ import annotations

import asyncio
from typing import Any

from actor_kit import TIMEOUT, Echo, Inbox, Recorder, spawn_recorder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dovecote import Actor, ActorSystem


class Overlap(Actor):
    """Counts how many of its handlers run at once (awaiting in between)."""

    def __init__(self, stats: dict[str, int]) -> None:
        super().__init__()
        self.stats = stats

    async def on_receive(self, message: Any) -> Any:
        self.stats["active"] += 1
        self.stats["max"] = max(self.stats["max"], self.stats["active"])
        for _ in range(3):
            await asyncio.sleep(0)
        await asyncio.sleep(0.001 if message % 7 == 0 else 0)
        self.stats["active"] -= 1
        self.stats["done"] += 1
        return message


async def test_awaiting_handlers_never_interleave_with_the_next_message(system):
    stats = {"active": 0, "max": 0, "done": 0}
    ref = system.spawn(lambda: Overlap(stats))
    for i in range(200):
        ref.tell(i)
    answers = await asyncio.gather(*(ref.ask(i, timeout=TIMEOUT) for i in range(200, 250)))
    assert answers == list(range(200, 250))
    assert stats["done"] == 250
    assert stats["max"] == 1


async def test_tells_from_one_sender_are_handled_in_send_order(system):
    ref, inbox = spawn_recorder(system)
    for i in range(1000):
        ref.tell(i)
    assert await ref.ask("end", timeout=TIMEOUT) == "end"
    assert inbox.items == [*range(1000), "end"]


class Sender(Actor):
    """Tells ``(own id, n)`` to the target whenever it receives ``n``."""

    def __init__(self, ident: int, target: Any) -> None:
        super().__init__()
        self.ident = ident
        self.target = target

    def on_receive(self, message: Any) -> Any:
        self.target.tell((self.ident, message), sender=self.self_ref)
        return None


async def _fifo_scenario(script: list[tuple[int, bool]]) -> None:
    async with ActorSystem("fifo") as system:
        inbox = Inbox()
        receiver = system.spawn(lambda: Recorder(inbox))
        senders = [system.spawn(lambda i=i: Sender(i, receiver)) for i in range(4)]
        sent: dict[int, list[int]] = {i: [] for i in range(5)}
        for n, (who, yield_now) in enumerate(script):
            if who == 4:  # the test itself is a fifth sender
                receiver.tell((4, n))
            else:
                senders[who].tell(n)
            sent[who].append(n)
            if yield_now:
                await asyncio.sleep(0)
        await inbox.wait_count(len(script))
        got: dict[int, list[int]] = {i: [] for i in range(5)}
        for who, n in inbox.items:
            got[who].append(n)
        assert got == sent


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=4), st.booleans()), max_size=120))
def test_messages_between_each_sender_receiver_pair_arrive_in_send_order(script):
    asyncio.run(_fifo_scenario(script))


class Flooded(Actor):
    def __init__(self, progress: dict[str, int]) -> None:
        super().__init__()
        self.progress = progress

    def on_receive(self, message: Any) -> Any:
        # a little real work per message, synchronous (runs inline in the dispatcher)
        total = 0
        for i in range(50):
            total += i
        self.progress["done"] += 1
        return total


class Observer(Actor):
    def __init__(self, progress: dict[str, int]) -> None:
        super().__init__()
        self.progress = progress

    def on_receive(self, message: Any) -> Any:
        return self.progress["done"]


async def test_a_flooded_actor_does_not_starve_another_actor(system):
    progress = {"done": 0}
    flooded = system.spawn(lambda: Flooded(progress), "flooded")
    other = system.spawn(lambda: Observer(progress), "other")
    assert await other.ask("warm up", timeout=TIMEOUT) == 0
    for i in range(10_000):
        flooded.tell(i)
    seen_by_other = await other.ask("how far is the flood?", timeout=TIMEOUT)
    # the other actor was served while the flood was still being processed
    assert seen_by_other < 10_000
    await flooded.ask("barrier", timeout=5.0)
    assert progress["done"] == 10_001


async def test_many_flooded_actors_all_make_progress_in_turns(system):
    progress = [{"done": 0} for _ in range(3)]
    refs = [system.spawn(lambda p=p: Flooded(p)) for p in progress]
    for _ in range(3000):
        for ref in refs:
            ref.tell(None)
    # when the first one finishes, the others are not still at zero
    await refs[0].ask("barrier", timeout=5.0)
    assert all(p["done"] > 0 for p in progress[1:])
    await asyncio.gather(*(ref.ask("barrier", timeout=5.0) for ref in refs))


async def test_an_idle_actor_holds_no_asyncio_task(system):
    await system.spawn(Echo).ask("warm up", timeout=TIMEOUT)
    baseline = len(asyncio.all_tasks())
    refs = [system.spawn(Echo) for _ in range(200)]
    assert await asyncio.gather(*(ref.ask(i, timeout=TIMEOUT) for i, ref in enumerate(refs))) == (
        list(range(200))
    )
    for ref in refs:
        ref.tell("once more")
    await asyncio.gather(*(ref.ask("barrier", timeout=TIMEOUT) for ref in refs))
    assert len(asyncio.all_tasks()) < baseline + 20


async def test_synchronous_handlers_do_not_create_a_task_per_message(system):
    loop = asyncio.get_running_loop()
    created = 0
    previous = loop.get_task_factory()

    def counting_factory(loop: Any, coro: Any, **kwargs: Any) -> Any:
        nonlocal created
        created += 1
        if previous is not None:
            return previous(loop, coro, **kwargs)
        return asyncio.Task(coro, loop=loop, **kwargs)

    ref = system.spawn(Echo)
    await ref.ask("warm up", timeout=TIMEOUT)
    loop.set_task_factory(counting_factory)
    try:
        for i in range(2000):
            ref.tell(i)
        await ref.ask("barrier", timeout=TIMEOUT)
    finally:
        loop.set_task_factory(previous)
    assert created < 200


class Crasher(Actor):
    async def on_receive(self, message: Any) -> Any:
        if message == "crash":
            raise RuntimeError("crash on purpose")
        return message


class SyncCrasher(Actor):
    def on_receive(self, message: Any) -> Any:
        if message == "crash":
            raise RuntimeError("crash on purpose")
        return message


async def test_a_handler_that_raises_never_kills_the_dispatcher_or_other_actors(system):
    bystander, inbox = spawn_recorder(system, "bystander")
    crashers = [system.spawn(Crasher, "async-crasher"), system.spawn(SyncCrasher, "sync-crasher")]
    for round_ in range(5):
        for crasher in crashers:
            crasher.tell("crash")
            bystander.tell(round_)
    assert await bystander.ask("still alive", timeout=TIMEOUT) == "still alive"
    assert inbox.items == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, "still alive"]
    for crasher in crashers:
        assert crasher.is_alive
        assert await crasher.ask("fine", timeout=TIMEOUT) == "fine"
