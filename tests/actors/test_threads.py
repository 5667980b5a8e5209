"""tell, ask and stop from threads other than the loop's (API.md, Core revisions: thread safety).

The loop in these tests has nothing else to do while a thread sends, so a message that is
queued without waking the loop would wait for the next unrelated wake-up (the test's own
timeout): each test asserts the delivery came well before that.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from typing import Any

import pytest
from actor_kit import TIMEOUT, DeadLetterLog, Echo, Hold, spawn_recorder

from dovecote import (
    Actor,
    ActorOptions,
    ActorStopped,
    ActorStoppedError,
    ActorSystem,
    MailboxFullError,
)

BLOCKING = ActorOptions.create().with_dispatcher("blocking")
REJECT_1 = ActorOptions.create().with_mailbox_capacity(1).with_mailbox_overflow("reject")
PROMPT = 1.0  # a hop that wakes the loop takes milliseconds; a missed wake-up takes TIMEOUT


def in_thread(fn: Any, *args: Any) -> Any:
    """Run ``fn(*args)`` on a plain new thread (not the loop's); its result or exception."""
    return asyncio.to_thread(_call_in_new_thread, fn, *args)


def _call_in_new_thread(fn: Any, *args: Any) -> Any:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as error:  # handed back to the test
            box["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(TIMEOUT)
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.mark.parametrize("debug", [False, True])
async def test_a_tell_from_another_thread_wakes_the_loop(system, debug):
    loop = asyncio.get_running_loop()
    loop.set_debug(debug)  # debug mode raises on a non-thread-safe call_soon from a thread
    try:
        ref, inbox = spawn_recorder(system)
        await ref.ask("started", timeout=TIMEOUT)
        threading.Thread(target=ref.tell, args=("from a thread",)).start()
        started = time.monotonic()
        await inbox.wait_count(2, timeout=TIMEOUT * 2)
        assert time.monotonic() - started < PROMPT
        assert inbox.items == ["started", "from a thread"]
        # and the system still works from the loop afterwards
        assert await ref.ask("after", timeout=TIMEOUT) == "after"
    finally:
        loop.set_debug(False)


async def test_many_threads_telling_lose_nothing_and_keep_each_threads_order(system):
    ref, inbox = spawn_recorder(system)
    per_thread, threads = 2_000, 4

    def burst(tag: int) -> None:
        for i in range(per_thread):
            ref.tell((tag, i))

    workers = [threading.Thread(target=burst, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    await inbox.wait_count(per_thread * threads, timeout=10.0)
    for worker in workers:
        worker.join()
    for tag in range(threads):
        assert [i for t, i in inbox.items if t == tag] == list(range(per_thread))


async def test_ask_from_another_thread_returns_a_concurrent_future(system):
    ref = system.spawn(Echo)
    future = await in_thread(ref.ask, "hi", 2.0)
    assert isinstance(future, concurrent.futures.Future)
    assert await asyncio.wrap_future(future) == "hi"


async def test_ask_from_another_thread_reports_errors_through_its_future(system):
    ref = system.spawn(Echo)
    await ref.stop()
    future = await in_thread(ref.ask, "late", 2.0)
    with pytest.raises(ActorStoppedError):
        await asyncio.wrap_future(future)


async def test_stop_from_another_thread_completes_once_the_actor_terminated(system):
    ref, _ = spawn_recorder(system)
    await ref.ask("started", timeout=TIMEOUT)
    future = await in_thread(ref.stop)
    assert isinstance(future, concurrent.futures.Future)
    await asyncio.wait_for(asyncio.wrap_future(future), TIMEOUT)
    assert not ref.is_alive
    stopped_now = await in_thread(system.stop, system.spawn(Echo))
    await asyncio.wait_for(asyncio.wrap_future(stopped_now), TIMEOUT)


class Forwarder(Actor):
    """On the blocking dispatcher: forwards every message to ``target`` from its thread."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target

    def on_receive(self, message: Any) -> Any:
        assert threading.get_ident() != LOOP_THREAD[0]
        self.target.tell(message)
        return "forwarded"


LOOP_THREAD = [0]


async def test_a_tell_from_a_worker_thread_to_a_full_reject_mailbox_is_a_rejected_dead_letter(
    system,
):
    LOOP_THREAD[0] = threading.get_ident()
    dead = DeadLetterLog(system)
    target, inbox = spawn_recorder(system, "target", REJECT_1)
    hold = Hold()
    target.tell(hold)
    await hold.wait_started()  # target is busy ...
    target.tell("fills the mailbox")  # ... and its one slot is taken
    with pytest.raises(MailboxFullError):
        target.tell("rejected at the caller, on the loop")
    forwarder = system.spawn(lambda: Forwarder(target), "forwarder", BLOCKING)
    assert await forwarder.ask("from the worker thread", timeout=TIMEOUT) == "forwarded"
    letters = await dead.wait_count(1)
    assert [(d.message, d.reason, d.recipient) for d in letters] == [
        ("from the worker thread", "rejected", target)
    ]
    assert system.dead_letters_count == 1
    hold.release.set()
    await inbox.wait_count(1)
    assert await target.ask("barrier", timeout=TIMEOUT) == "barrier"
    assert inbox.items == ["fills the mailbox", "barrier"]


class SelfStopper(Actor):
    """On the blocking dispatcher: stops itself (context.stop) from its worker thread."""

    def on_receive(self, message: Any) -> Any:
        self.context.stop(self.self_ref)
        return "stopping"


async def test_context_stop_from_a_blocking_handler_stops_the_actor(system):
    stopped: list[ActorStopped] = []
    system.event_stream.subscribe(stopped.append, ActorStopped)
    ref = system.spawn(SelfStopper, "self-stopper", BLOCKING)
    assert await ref.ask("go", timeout=TIMEOUT) == "stopping"
    await asyncio.wait_for(ref.stop(), TIMEOUT)
    assert [event.ref for event in stopped] == [ref]


def test_tell_after_the_loop_closed_is_counted_not_raised():
    holder: dict[str, Any] = {}

    async def main() -> None:
        system = ActorSystem("closed")
        holder["system"] = system
        holder["ref"] = system.spawn(Echo)
        await system.shutdown()

    asyncio.run(main())
    system, ref = holder["system"], holder["ref"]
    before = system.dead_letters_count
    _call_in_new_thread(ref.tell, "into the void")
    assert system.dead_letters_count == before + 1
    future = _call_in_new_thread(ref.ask, "nobody", 1.0)
    with pytest.raises(ActorStoppedError):
        future.result(TIMEOUT)
