"""Stash, become, asks, senders, death watch and restarts keep working on a durable actor."""

from __future__ import annotations

import asyncio
from typing import Any

from dovecote import (
    Actor,
    ActorSystem,
    DeadLetter,
    Terminated,
)
from dovecote.codec import encode
from dovecote.durable import STORE_FAILED

from .recorder import Recorder, Seen, durable


class Gate(Actor):
    """Stashes everything until "open", then becomes a recorder."""

    def __init__(self, seen: Seen) -> None:
        super().__init__()
        self.seen = seen

    def on_receive(self, message: Any) -> None:
        if message == "open":
            self.context.become(self.opened)
            self.context.unstash_all()
        else:
            self.context.stash()

    def opened(self, message: Any) -> None:
        self.seen.add(message)


async def test_stash_and_become_keep_order_and_commit_every_message(
    system: ActorSystem, store: Any
) -> None:
    seen = Seen()
    ref = system.spawn(lambda: Gate(seen), "gate", durable(store, mailbox="gate"))
    for i in range(5):
        ref.tell(i)
    await ref.tell_durable("open")
    ref.tell("later")
    await seen.count(6)
    assert seen.messages == [0, 1, 2, 3, 4, "later"]
    await system.shutdown()
    stats = await store.stats("gate")
    assert (stats.committed_count, stats.pending_count, stats.claimed_count) == (7, 0, 0)


async def test_asks_are_answered_in_memory_beside_durable_tells(
    system: ActorSystem, store: Any
) -> None:
    seen = Seen()
    ref = system.spawn(lambda: Recorder(seen), "asked", durable(store))
    ref.tell("told")
    assert await ref.ask("asked", timeout=5.0) == "asked"
    await seen.count(2)
    await system.shutdown()
    assert (await store.stats("/user/asked")).committed_count == 1


async def test_the_sender_of_a_durable_tell_is_its_sender_again(
    system: ActorSystem, store: Any
) -> None:
    seen = Seen()
    replies = Seen()
    sender = system.spawn(lambda: Recorder(replies), "sender")
    ref = system.spawn(lambda: Recorder(seen), "receiver", durable(store))
    ref.tell("from someone", sender=sender)
    ref.tell("from nobody")
    await seen.count(2)
    assert seen.senders == [sender, None]
    await system.shutdown()
    assert (await store.stats("/user/receiver")).committed_count == 2


class Replier(Actor):
    def on_receive(self, message: Any) -> None:
        self.context.reply(("re", message))


async def test_context_reply_reaches_the_sender(system: ActorSystem, store: Any) -> None:
    replies = Seen()
    sender = system.spawn(lambda: Recorder(replies), "asker")
    ref = system.spawn(Replier, "replier", durable(store))
    ref.tell("hi", sender=sender)
    await replies.count(1)
    assert replies.messages == [("re", "hi")]


class Watcher(Actor):
    def __init__(self, seen: Seen) -> None:
        super().__init__()
        self.seen = seen

    def on_receive(self, message: Any) -> None:
        if isinstance(message, Terminated):
            self.seen.add("terminated")
        else:
            self.context.watch(message)
            self.seen.add("watching")


async def test_death_watch_of_a_durable_actor(system: ActorSystem, store: Any) -> None:
    seen = Seen()
    worker = system.spawn(lambda: Recorder(Seen()), "watched", durable(store))
    watcher = system.spawn(lambda: Watcher(seen), "watcher", durable(store))
    watcher.tell(worker)
    await seen.count(1)
    worker.stop()
    await seen.count(2)
    assert seen.messages == ["watching", "terminated"]


async def test_messages_already_in_the_store_are_handled_at_start(
    system: ActorSystem, store: Any
) -> None:
    for i in range(3):
        await store.send("backlog", encode(i), sender="earlier-run")
    seen = Seen()
    system.spawn(lambda: Recorder(seen), "late", durable(store, mailbox="backlog"))
    await seen.count(3)
    assert seen.messages == [0, 1, 2]


async def test_undecodable_stored_messages_are_given_up_not_delivered(
    system: ActorSystem, store: Any
) -> None:
    await store.send("junk", b"\xc1 not msgpack", sender="someone")
    await store.send("junk", encode("good"), sender="someone")
    seen = Seen()
    system.spawn(lambda: Recorder(seen), "junk", durable(store, mailbox="junk"))
    await seen.count(1)
    assert seen.messages == ["good"]
    await system.shutdown()
    [record] = await store.dead_letters("junk")
    assert record.poison_reason == "permanent_failure"


async def test_a_failed_write_is_a_store_failed_dead_letter(
    system: ActorSystem, store: Any
) -> None:
    letters: list[DeadLetter] = []
    two = asyncio.get_running_loop().create_future()

    def record(letter: DeadLetter) -> None:
        letters.append(letter)
        if len(letters) == 2:
            two.set_result(None)

    system.event_stream.subscribe(record, DeadLetter)
    await store.ensure_mailbox("tiny", max_payload_bytes=16)
    ref = system.spawn(lambda: Recorder(Seen()), "tiny", durable(store, mailbox="tiny"))
    ref.tell("x" * 100)  # too large for the mailbox: the store refuses it
    try:
        await ref.tell_durable("y" * 100)
    except Exception as error:
        refused = error
    else:  # pragma: no cover - the test fails below
        refused = None
    assert refused is not None
    await asyncio.wait_for(two, 5.0)
    assert [d.reason for d in letters] == [STORE_FAILED, STORE_FAILED]
    assert letters[0].message == "x" * 100
    assert system.dead_letters_count == 2


async def test_shutdown_waits_for_tells_to_reach_the_store(store: Any) -> None:
    async with ActorSystem("brief") as system:
        ref = system.spawn(lambda: _Never(), "never", durable(store, mailbox="kept"))
        for i in range(100):
            ref.tell(i)
    stats = await store.stats("kept")
    assert stats.pending_count + stats.claimed_count == 100


class _Never(Actor):
    def on_receive(self, message: Any) -> None:
        self.context.stash()  # holds everything; nothing is committed


async def test_durable_lanes_leave_the_post_office_snapshot_online(
    system: ActorSystem, store: Any
) -> None:
    seen = Seen()
    ref = system.spawn(lambda: Recorder(seen), "snap", durable(store))
    await ref.tell_durable(1)
    await seen.count(1)
    snapshot = await system.post_office.status()
    assert snapshot.state.name != "DEGRADED"
    assert (await system.post_office.recover()).unreachable_providers == ()


async def test_a_blocking_dispatcher_actor_can_have_a_durable_mailbox(
    system: ActorSystem, store: Any
) -> None:
    seen = Seen()
    options = durable(store).with_dispatcher("blocking")
    ref = system.spawn(lambda: Recorder(seen), "threaded", options)
    for i in range(5):
        ref.tell(i)
    await seen.count(5)
    assert seen.messages == [0, 1, 2, 3, 4]
    await system.shutdown()
    assert (await store.stats("/user/threaded")).committed_count == 5
