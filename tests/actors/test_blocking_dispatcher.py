"""The "blocking" dispatcher runs handlers in a thread pool."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from actor_kit import TIMEOUT, Echo, Inbox, spawn_recorder

from dovecote import Actor, ActorOptions, ActorSystem

BLOCKING = ActorOptions.create().with_dispatcher("blocking")


class Sleeper(Actor):
    def __init__(self, started: threading.Event | None = None) -> None:
        super().__init__()
        self.started = started

    def on_receive(self, message: Any) -> Any:
        if self.started is not None:
            self.started.set()
        time.sleep(message)
        return ("slept", message, threading.get_ident())


async def test_a_blocking_handler_does_not_delay_another_actors_ask(system):
    started = threading.Event()
    sleeper = system.spawn(lambda: Sleeper(started), "sleeper", BLOCKING)
    other = system.spawn(Echo, "other")
    sleeper.tell(0.3)
    await asyncio.to_thread(started.wait, TIMEOUT)
    begun = time.monotonic()
    assert await other.ask("quick", timeout=TIMEOUT) == "quick"
    assert time.monotonic() - begun < 0.2


async def test_a_blocking_handler_answers_asks_from_a_worker_thread(system):
    sleeper = system.spawn(Sleeper, "sleeper", BLOCKING)
    kind, seconds, thread = await sleeper.ask(0.01, timeout=TIMEOUT)
    assert (kind, seconds) == ("slept", 0.01)
    assert thread != threading.get_ident()


class ThreadCounter(Actor):
    """Counts concurrent handler runs across threads."""

    def __init__(self, stats: dict[str, int], lock: threading.Lock, inbox: Inbox) -> None:
        super().__init__()
        self.stats = stats
        self.lock = lock
        self.inbox = inbox

    def on_receive(self, message: Any) -> Any:
        with self.lock:
            self.stats["active"] += 1
            self.stats["max"] = max(self.stats["max"], self.stats["active"])
        time.sleep(0.001)
        with self.lock:
            self.stats["active"] -= 1
        self.inbox.add(message)
        return message


async def test_the_blocking_dispatcher_still_runs_one_message_at_a_time_in_order(system):
    stats = {"active": 0, "max": 0}
    lock = threading.Lock()
    inbox = Inbox()
    ref = system.spawn(lambda: ThreadCounter(stats, lock, inbox), "counter", BLOCKING)
    for i in range(50):
        ref.tell(i)
    assert await ref.ask("end", timeout=TIMEOUT) == "end"
    await inbox.wait_count(51)
    assert stats["max"] == 1
    assert inbox.items == [*range(50), "end"]


async def test_two_blocking_actors_sleep_in_parallel(system):
    a = system.spawn(Sleeper, "a", BLOCKING)
    b = system.spawn(Sleeper, "b", BLOCKING)
    begun = time.monotonic()
    await asyncio.gather(a.ask(0.2, timeout=TIMEOUT), b.ask(0.2, timeout=TIMEOUT))
    assert time.monotonic() - begun < 0.38


class BlockingFailer(Actor):
    def on_receive(self, message: Any) -> Any:
        if message == "boom":
            raise ValueError("boom in a thread")
        return message


async def test_an_exception_in_a_blocking_handler_reaches_the_asker(system):
    ref = system.spawn(BlockingFailer, "failer", BLOCKING)
    with pytest.raises(ValueError, match="boom in a thread"):
        await ref.ask("boom", timeout=TIMEOUT)
    assert await ref.ask("fine", timeout=TIMEOUT) == "fine"


async def test_the_default_dispatcher_is_named_default(system):
    options = ActorOptions.create().with_dispatcher("default")
    ref = system.spawn(Echo, "e", options)
    assert await ref.ask("x", timeout=TIMEOUT) == "x"


class ThreadTeller(Actor):
    """Tells its target from the worker thread and replies through the context."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target

    def on_receive(self, message: Any) -> Any:
        for i in range(message):
            self.target.tell(i)
        self.context.reply(("told", message))
        return None


async def test_a_blocking_handler_can_tell_other_actors_and_reply(system):
    target, inbox = spawn_recorder(system, "target")
    teller = system.spawn(lambda: ThreadTeller(target), "teller", BLOCKING)
    assert await teller.ask(100, timeout=TIMEOUT) == ("told", 100)
    await inbox.wait_count(100)
    assert inbox.items == list(range(100))


async def test_shutdown_waits_for_a_blocking_handler_in_progress():
    finished = threading.Event()

    class SlowExit(Actor):
        def on_receive(self, message: Any) -> Any:
            started.set()
            time.sleep(0.1)
            finished.set()

    started = threading.Event()
    async with ActorSystem("t") as system:
        ref = system.spawn(SlowExit, "slow", BLOCKING)
        ref.tell("work")
        await asyncio.to_thread(started.wait, TIMEOUT)
        await system.shutdown()
        assert finished.is_set()
        assert not ref.is_alive


class ThreadRecorder(Actor):
    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox

    def on_receive(self, message: Any) -> Any:
        self.inbox.add((message, threading.get_ident()))
        return message


@pytest.mark.parametrize("how", ["tell", "tell-with-sender", "ask"])
async def test_every_kind_of_message_runs_off_the_loop_thread(system, how):
    inbox = Inbox()
    ref = system.spawn(lambda: ThreadRecorder(inbox), "worker", BLOCKING)
    if how == "tell":
        ref.tell("m")
    elif how == "tell-with-sender":
        ref.tell("m", sender=system.spawn(Echo, "someone"))
    else:
        assert await ref.ask("m", timeout=TIMEOUT) == "m"
    [(message, thread)] = await inbox.wait_count(1)
    assert message == "m"
    assert thread != threading.get_ident(), "the handler ran on the event loop thread"
