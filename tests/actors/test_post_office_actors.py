"""Actors on the post office: every live actor is a subscriber of its own address.

A letter posted to ``mem://<system>@<host><path>`` reaches ``on_receive`` with its body;
the delivery settles when the handler returns (handled) or raises (retriable -> back to
the address queue, anything else -> given up / dead-lettered, and the supervisor still
sees the failure). A letter that cannot be handed to the actor (stopped, full mailbox)
waits in the address queue for ``fetch``: it is never dropped and never a dead letter.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from actor_kit import (
    TIMEOUT,
    Boom,
    DeadLetterLog,
    Hold,
    Inbox,
    Journal,
    Recorder,
    Worker,
    recording,
    spawn_recorder,
    until_terminated,
    watch,
)

from dovecote import (
    Actor,
    ActorNotFoundError,
    ActorOptions,
    ActorSystem,
    BoundedMailbox,
    DeadLetterReason,
    InvalidMailboxAddressError,
    Mailbox,
    OneForOneStrategy,
    default_decider,
)
from dovecote.addressing import MailAddress, RetriableError

# -- helpers --------------------------------------------------------------------------------


async def settled(system: Any) -> None:
    """Every delivery the system's post office dispatched has settled."""
    await asyncio.wait_for(system.post_office.wait_settled(), TIMEOUT)


async def unread(system: Any, address: str) -> int:
    status = await system.post_office.status(address)
    count: int = status.unread_count
    return count


async def stop_and_wait(system: Any, ref: Any) -> None:
    terminated = await watch(system, ref)
    ref.stop()
    await until_terminated(terminated, ref)


class NotifyingMailbox(Mailbox):
    """An unbounded mailbox that signals each time a post-office letter is queued."""

    def __init__(self, arrived: asyncio.Event) -> None:
        super().__init__()
        self.arrived = arrived

    def enqueue(self, envelope: Any) -> None:
        super().enqueue(envelope)
        if hasattr(envelope, "letter"):
            self.arrived.set()


class Picky(Actor):
    """Records bodies; "retry" raises a retriable error, "fatal" raises Boom."""

    def __init__(self, journal: Journal) -> None:
        super().__init__()
        journal.created += 1
        self.incarnation = journal.created
        self.journal = journal

    async def on_receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            await message.run()
            return None
        if message == "whoami":
            return self.incarnation
        self.journal.inbox.add((self.incarnation, message))
        if message == "retry":
            raise RetriableError("downstream busy, try later")
        if message == "fatal":
            raise Boom("cannot digest this letter")
        return None


class Responder(Actor):
    """Records who sent each letter and answers it with ``context.reply``."""

    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox

    def on_receive(self, message: Any) -> Any:
        self.inbox.add((message, self.context.sender))
        self.context.reply(("pong", message))
        return None


def picky(system: Any, name: str, seen: list[BaseException]) -> tuple[Any, Journal]:
    """A Picky actor whose supervisor decisions (default_decider) are recorded in ``seen``."""
    journal = Journal()
    strategy = OneForOneStrategy(decider=recording(default_decider, seen))
    options = ActorOptions(supervisor_strategy=strategy)
    return system.spawn(lambda: Picky(journal), name, options), journal


# -- delivery to a live actor ---------------------------------------------------------------


async def test_a_post_to_a_live_actors_address_reaches_on_receive_with_the_body(system):
    ref, inbox = spawn_recorder(system, "clerk")
    sent = await system.post_office.post(to=ref.address, body={"order": 42})
    assert await inbox.wait_count(1) == [{"order": 42}]
    await settled(system)
    status = await system.post_office.status(ref.address)
    assert (status.unread_count, status.in_flight_count) == (0, 0)
    assert sent.to == MailAddress.parse(ref.address)
    assert system.dead_letters_count == 0


async def test_a_post_to_another_spelling_of_the_address_reaches_the_same_actor(system):
    ref, inbox = spawn_recorder(system, "clerk")
    assert ref.address == "mem://t@local/user/clerk"
    await system.post_office.post(to="MEM:t@LOCAL/user/clerk", body="short form")
    assert await inbox.wait_count(1) == ["short form"]


async def test_actors_spawned_before_and_after_the_post_office_exists_are_subscribed(system):
    early, early_inbox = spawn_recorder(system, "early")
    office = system.post_office  # created lazily, here: it subscribes the actors so far
    late, late_inbox = spawn_recorder(system, "late")
    child_inbox = Inbox()

    class Parent(Actor):
        def pre_start(self) -> None:
            self.context.spawn(lambda: Recorder(child_inbox), "child")

        def on_receive(self, message: Any) -> Any:
            return [child.address for child in self.context.children]

    parent = system.spawn(Parent, "parent")
    assert await parent.ask("children", timeout=TIMEOUT) == ["mem://t@local/user/parent/child"]
    await office.post(to=early.address, body="e")
    await office.post(to=late.address, body="l")
    await office.post(to="mem://t@local/user/parent/child", body="c")
    assert await early_inbox.wait_count(1) == ["e"]
    assert await late_inbox.wait_count(1) == ["l"]
    assert await child_inbox.wait_count(1) == ["c"]


# -- subscriber count, stop, and the address queue ------------------------------------------


async def test_status_shows_one_subscriber_for_a_live_actor_and_none_after_it_stops(system):
    ref, _ = spawn_recorder(system, "clerk")
    status = await system.post_office.status(ref.address)
    assert status["mem.subscriber_count"] == 1
    await stop_and_wait(system, ref)
    status = await system.post_office.status(ref.address)
    assert status["mem.subscriber_count"] == 0


async def test_a_post_after_the_actor_stopped_queues_for_fetch(system):
    ref, inbox = spawn_recorder(system, "clerk")
    await stop_and_wait(system, ref)
    await system.post_office.post(to=ref.address, body="while you were out")
    assert await unread(system, ref.address) == 1
    letter = await system.post_office.fetch(ref.address)
    assert letter is not None
    assert letter.body == "while you were out"
    assert await unread(system, ref.address) == 0
    assert inbox.items == []
    assert system.dead_letters_count == 0


async def test_a_letter_queued_in_the_mailbox_at_stop_goes_back_to_the_address_queue(system):
    arrived = asyncio.Event()
    inbox = Inbox()
    options = ActorOptions(mailbox=lambda: NotifyingMailbox(arrived))
    ref = system.spawn(lambda: Recorder(inbox), "clerk", options)
    dead = DeadLetterLog(system)
    terminated = await watch(system, ref)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    await system.post_office.post(to=ref.address, body="letter")
    await asyncio.wait_for(arrived.wait(), TIMEOUT)  # behind the Hold, in the mailbox
    ref.tell("plain tell")
    system.stop(ref)
    hold.release.set()
    await until_terminated(terminated, ref)
    await settled(system)
    # the tell is a dead letter; the letter is not: it waits at its address
    assert dead.messages(ref) == ["plain tell"]
    assert system.dead_letters_count == 1
    assert inbox.items == []
    assert await unread(system, ref.address) == 1
    letter = await system.post_office.fetch(ref.address)
    assert letter is not None
    assert letter.body == "letter"


# -- settlement by the handler --------------------------------------------------------------


async def test_a_handler_raising_a_retriable_error_requeues_the_letter_for_fetch(system):
    seen: list[BaseException] = []
    ref, journal = picky(system, "picky", seen)
    await system.post_office.post(to=ref.address, body="retry")
    await settled(system)
    assert journal.seen() == ["retry"]
    assert await unread(system, ref.address) == 1
    letter = await system.post_office.fetch(ref.address)
    assert letter is not None
    assert letter.body == "retry"
    # the supervisor still saw the failure (and restarted the actor)
    assert len(seen) == 1
    assert isinstance(seen[0], RetriableError)
    assert await ref.ask("whoami", timeout=TIMEOUT) == 2
    assert system.dead_letters_count == 0


async def test_a_handler_raising_a_fatal_error_discards_the_letter(system):
    seen: list[BaseException] = []
    ref, journal = picky(system, "picky", seen)
    provider = system.post_office.get_provider("mem")
    await system.post_office.post(to=ref.address, body="fatal")
    await settled(system)
    assert journal.seen() == ["fatal"]
    assert await unread(system, ref.address) == 0
    assert await system.post_office.fetch(ref.address) is None
    assert provider.dead_letter_topic(ref.address) is None  # no DLQ: simply dropped
    assert [type(error) for error in seen] == [Boom]
    assert await ref.ask("whoami", timeout=TIMEOUT) == 2  # restarted


async def test_a_fatal_error_dead_letters_the_letter_when_the_dlq_is_on(system):
    seen: list[BaseException] = []
    ref, journal = picky(system, "picky", seen)
    provider = system.post_office.get_provider("mem")
    provider.enable_dead_letter_queue()
    await system.post_office.post(to=ref.address, body="fatal", id="order-7")
    await settled(system)
    assert journal.seen() == ["fatal"]
    assert await unread(system, ref.address) == 0
    dlq = provider.dead_letter_topic(ref.address)
    assert dlq == "mem://t@local/user/picky_dlq"
    archived = await system.post_office.fetch(dlq)
    assert archived is not None
    assert (archived.id, archived.body) == ("order-7", "fatal")
    assert archived.headers["mbx-dead-letter-reason"] == "fatal"
    assert archived.headers["mbx-dead-letter-topic"] == ref.address
    assert "Boom" in archived.headers["mbx-dead-letter-error"]
    # the supervisor saw the failure and restarted the actor, which is still subscribed
    assert [type(error) for error in seen] == [Boom]
    assert await ref.ask("whoami", timeout=TIMEOUT) == 2
    assert (await system.post_office.status(ref.address))["mem.subscriber_count"] == 1
    await system.post_office.post(to=ref.address, body="after restart")
    await settled(system)
    assert journal.seen(2) == ["after restart"]
    # an actor's failure is not an actor-system dead letter
    assert system.dead_letters_count == 0


# -- full bounded mailboxes -----------------------------------------------------------------


@pytest.mark.parametrize("overflow", ["reject", "drop-new", "drop-head"])
async def test_a_full_bounded_mailbox_never_drops_a_letter_it_stays_at_the_address(
    system, overflow
):
    options = ActorOptions(mailbox_capacity=1, mailbox_overflow=overflow)
    ref, inbox = spawn_recorder(system, "narrow", options)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    ref.tell("filler")  # the mailbox is now full
    await system.post_office.post(to=ref.address, body="letter")
    await settled(system)
    assert await unread(system, ref.address) == 1
    hold.release.set()
    assert await inbox.wait_count(1) == ["filler"]
    letter = await system.post_office.fetch(ref.address)
    assert letter is not None
    assert letter.body == "letter"
    assert inbox.items == ["filler"]
    assert system.dead_letters_count == 0


async def test_a_later_tell_never_evicts_a_queued_letter_from_a_drop_head_mailbox(system):
    # An evicted letter's delivery could never settle, so letters are exempt from
    # eviction: the incoming tell is the message drop-head discards (and counts).
    arrived = asyncio.Event()
    inbox = Inbox()
    made: list[BoundedMailbox] = []

    class NotifyingBounded(BoundedMailbox):
        """drop-head, capacity 1; signals when a letter is queued."""

        def enqueue(self, envelope: Any) -> None:
            super().enqueue(envelope)
            if hasattr(envelope, "letter"):
                arrived.set()

    def mailbox() -> BoundedMailbox:
        made.append(NotifyingBounded(1, "drop-head"))
        return made[-1]

    ref = system.spawn(lambda: Recorder(inbox), "narrow", ActorOptions(mailbox=mailbox))
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    await system.post_office.post(to=ref.address, body="letter")
    await asyncio.wait_for(arrived.wait(), TIMEOUT)  # the letter fills the mailbox
    ref.tell("newer")  # drop-head must not evict the letter: "newer" is dropped
    hold.release.set()
    assert await inbox.wait_count(1) == ["letter"]
    await asyncio.wait_for(system.post_office.wait_settled(), TIMEOUT)
    assert await unread(system, ref.address) == 0
    assert made[-1].dropped_count == 1


# -- sender, reply, resolve -----------------------------------------------------------------


async def test_from_naming_a_local_actor_makes_it_the_sender_and_reply_reaches_it(system):
    asker, asker_inbox = spawn_recorder(system, "asker", with_sender=True)
    responder_inbox = Inbox()
    responder = system.spawn(lambda: Responder(responder_inbox), "responder")
    await system.post_office.post(to=responder.address, from_=asker.address, body="ping")
    assert await responder_inbox.wait_count(1) == [("ping", asker)]
    assert await asker_inbox.wait_count(1) == [(("pong", "ping"), responder)]
    await settled(system)
    assert await unread(system, responder.address) == 0
    assert system.dead_letters_count == 0


async def test_a_letter_without_a_local_sender_has_no_context_sender(system):
    inbox = Inbox()
    responder = system.spawn(lambda: Responder(inbox), "responder")
    office = system.post_office
    await office.post(to=responder.address, body="anonymous")
    await office.post(to=responder.address, from_="mem://other@local/user/x", body="foreign")
    await office.post(to=responder.address, from_="mem://t@local/user/nobody", body="gone")
    items = await inbox.wait_count(3)
    assert items == [("anonymous", None), ("foreign", None), ("gone", None)]
    # context.reply with nobody to answer settles the delivery: nothing is requeued
    await settled(system)
    assert await unread(system, responder.address) == 0


async def test_resolve_finds_a_live_actor_by_address(system):
    ref, _ = spawn_recorder(system, "clerk")
    assert system.resolve(ref.address) == ref
    assert system.resolve("mem:t@local/user/clerk") == ref
    assert system.resolve("MEM://t@LOCAL/user/clerk") == ref
    assert system.resolve("/user/clerk") == ref
    with pytest.raises(ActorNotFoundError):
        system.resolve("mem://other@local/user/clerk")
    with pytest.raises(ActorNotFoundError):
        system.resolve("mem://t@elsewhere/user/clerk")
    with pytest.raises(ActorNotFoundError):
        system.resolve("mem://t@local/user/nobody")
    with pytest.raises(InvalidMailboxAddressError):
        system.resolve("mem://t@local/user/clerk?x=1")
    await stop_and_wait(system, ref)
    with pytest.raises(ActorNotFoundError):
        system.resolve(ref.address)


@pytest.mark.parametrize(
    "address",
    ["mem://other@local/user/clerk", "mem://t@local/user/nobody", "mem://t@elsewhere/user/clerk"],
)
async def test_a_post_to_an_address_without_a_local_actor_just_queues(system, address):
    ref, inbox = spawn_recorder(system, "clerk")
    await system.post_office.post(to=address, body="for whoever")
    status = await system.post_office.status(address)
    assert (status.unread_count, status["mem.subscriber_count"]) == (1, 0)
    letter = await system.post_office.fetch(address)
    assert letter is not None
    assert letter.body == "for whoever"
    assert inbox.items == []
    assert ref.is_alive
    assert system.dead_letters_count == 0


# -- the guardian strategy and system.stop ------------------------------------------------


async def test_a_guardian_strategy_with_no_restarts_stops_a_failing_top_level_actor():
    async with ActorSystem("g", guardian_strategy=OneForOneStrategy(max_restarts=0)) as system:
        journal = Journal()
        ref = system.spawn(lambda: Worker(journal), "worker")
        terminated = await watch(system, ref)
        ref.tell("boom")
        await until_terminated(terminated, ref)
        assert journal.created == 1
        assert not ref.is_alive
        assert journal.seen() == ["boom"]


async def test_a_guardian_strategy_with_no_restarts_stops_an_actor_failing_on_a_letter():
    async with ActorSystem("g", guardian_strategy=OneForOneStrategy(max_restarts=0)) as system:
        journal = Journal()
        ref = system.spawn(lambda: Worker(journal), "worker")
        terminated = await watch(system, ref)
        await system.post_office.post(to=ref.address, body="boom")
        await until_terminated(terminated, ref)
        assert journal.created == 1
        await system.post_office.post(to=ref.address, body="count")
        assert await unread(system, ref.address) == 1


async def test_the_default_guardian_strategy_restarts_a_failing_top_level_actor(system):
    journal = Journal()
    ref = system.spawn(lambda: Worker(journal), "worker")
    ref.tell("boom")
    assert await ref.ask("whoami", timeout=TIMEOUT) == 2


async def test_system_stop_is_immediate_queued_messages_become_dead_letters(system):
    ref, inbox = spawn_recorder(system, "clerk")
    dead = DeadLetterLog(system)
    terminated = await watch(system, ref)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    ref.tell("a")
    ref.tell("b")
    system.stop(ref)
    hold.release.set()
    await until_terminated(terminated, ref)
    letters = await dead.wait_count(2)
    assert [(d.message, d.reason) for d in letters] == [
        ("a", DeadLetterReason.QUEUED_AT_STOP),
        ("b", DeadLetterReason.QUEUED_AT_STOP),
    ]
    assert inbox.items == []
    assert system.dead_letters_count == 2
    with pytest.raises(TypeError):
        system.stop("/user/clerk")


# -- the settle watchdog and actor deliveries -------------------------------------------------


async def test_a_letter_is_never_both_handled_by_the_actor_and_requeued(system):
    # The settle watchdog gives up on a delivery still waiting in a busy actor's mailbox
    # and puts the letter back at the address for fetch; the actor must then skip it.
    arrived = asyncio.Event()
    inbox = Inbox()
    options = ActorOptions(mailbox=lambda: NotifyingMailbox(arrived))
    ref = system.spawn(lambda: Recorder(inbox), "slow", options)
    system.post_office.get_provider("mem").delivery_settle_timeout = 0.05
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    await system.post_office.post(to=ref.address, body="letter")
    await asyncio.wait_for(arrived.wait(), TIMEOUT)
    await settled(system)  # the watchdog settles it while the actor is still busy
    hold.release.set()
    assert await ref.ask("barrier", timeout=TIMEOUT) == "barrier"  # the queue is drained
    assert inbox.items == ["barrier"], "the actor handled a letter the post office requeued"
    assert await unread(system, ref.address) == 1
    assert system.dead_letters_count == 0
