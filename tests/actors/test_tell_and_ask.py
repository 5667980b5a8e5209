"""tell / ask / reply / sender, ask errors and timeouts."""

from __future__ import annotations

import asyncio
import time
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

from dovecote import (
    Actor,
    ActorStoppedError,
    AskDeadlockError,
    AskTimeoutError,
    DeadLetter,
    DovecoteError,
)


class SyncDoubler(Actor):
    def on_receive(self, message: Any) -> Any:
        return message * 2


class AsyncDoubler(Actor):
    async def on_receive(self, message: Any) -> Any:
        await asyncio.sleep(0)
        return message * 2


@pytest.mark.parametrize("factory", [SyncDoubler, AsyncDoubler])
async def test_ask_returns_the_handler_return_value_for_sync_and_async_handlers(system, factory):
    ref = system.spawn(factory)
    assert await ref.ask(21, timeout=TIMEOUT) == 42
    assert await ref.ask("ab") == "abab"  # default timeout


async def test_tell_returns_none_and_the_handler_return_value_is_ignored(system):
    ref, inbox = spawn_recorder(system)
    assert ref.tell("fire and forget") is None
    assert await ref.ask("barrier", timeout=TIMEOUT) == "barrier"
    assert inbox.items == ["fire and forget", "barrier"]


async def test_context_sender_is_the_ref_passed_to_tell(system):
    ref, inbox = spawn_recorder(system, with_sender=True)
    other = system.spawn(Echo, "other")
    ref.tell("with sender", sender=other)
    ref.tell("without sender")
    await inbox.wait_count(2)
    assert inbox.items == [("with sender", other), ("without sender", None)]


class Replier(Actor):
    """Answers through context.reply (returning None)."""

    def on_receive(self, message: Any) -> Any:
        self.context.reply(("reply", message))
        return None


class AsyncReplier(Actor):
    async def on_receive(self, message: Any) -> Any:
        await asyncio.sleep(0)
        self.context.reply(("reply", message))
        return None


@pytest.mark.parametrize("factory", [Replier, AsyncReplier])
async def test_context_reply_answers_an_ask(system, factory):
    ref = system.spawn(factory)
    assert await ref.ask("q", timeout=TIMEOUT) == ("reply", "q")


async def test_context_reply_to_a_tell_goes_to_the_sender(system):
    replier = system.spawn(Replier)
    sender, inbox = spawn_recorder(system, with_sender=True)
    replier.tell("ping", sender=sender)
    await inbox.wait_count(1)
    assert inbox.items == [(("reply", "ping"), replier)]


class Forwarder(Actor):
    """Asks another actor from inside its handler and returns the answer."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target

    async def on_receive(self, message: Any) -> Any:
        return ("forwarded", await self.target.ask(message, timeout=TIMEOUT))


async def test_an_actor_can_ask_another_actor_from_its_handler(system):
    echo = system.spawn(Echo)
    forwarder = system.spawn(lambda: Forwarder(echo))
    assert await forwarder.ask("x", timeout=TIMEOUT) == ("forwarded", "x")


class Boom(Exception):
    pass


class Faulty(Actor):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    async def on_receive(self, message: Any) -> Any:
        if message == "boom":
            raise Boom("handler failed")
        self.count += 1
        return self.count


async def test_ask_raises_the_exception_the_handler_raised(system):
    ref = system.spawn(Faulty)
    with pytest.raises(Boom, match="handler failed"):
        await ref.ask("boom", timeout=TIMEOUT)
    # the default strategy restarts the actor: it still answers, with fresh state
    assert await ref.ask("count", timeout=TIMEOUT) == 1


class Silent(Actor):
    async def on_receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            await message.run()
        return None if isinstance(message, Hold) else "late"


class Payload:
    pass


async def test_ask_timeout_error_is_a_timeout_error_naming_the_path_message_type_and_timeout(
    system,
):
    ref = system.spawn(Silent, "slowpoke")
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    started = time.monotonic()
    with pytest.raises(AskTimeoutError) as caught:
        await ref.ask(Payload(), timeout=0.05)
    assert time.monotonic() - started < 1.0
    error = caught.value
    assert isinstance(error, TimeoutError)
    assert isinstance(error, DovecoteError)
    text = str(error)
    assert "/user/slowpoke" in text
    assert "Payload" in text
    assert "0.05" in text
    hold.release.set()


@pytest.mark.parametrize("timeout", [0, 0.0, -1, -0.5])
async def test_a_non_positive_ask_timeout_raises_value_error_and_sends_nothing(system, timeout):
    ref, inbox = spawn_recorder(system)
    with pytest.raises(ValueError):
        await ref.ask("never sent", timeout=timeout)
    assert await ref.ask("barrier", timeout=TIMEOUT) == "barrier"
    assert inbox.items == ["barrier"]


class SelfAsker(Actor):
    async def on_receive(self, message: Any) -> Any:
        if message == "ask yourself":
            try:
                await self.self_ref.ask("inner", timeout=3.0)
            except AskDeadlockError as error:
                return ("deadlock", isinstance(error, DovecoteError))
            return "no error"
        return "inner answered"


async def test_asking_yourself_inside_your_handler_raises_ask_deadlock_error_at_once(system):
    ref = system.spawn(SelfAsker)
    started = time.monotonic()
    assert await ref.ask("ask yourself", timeout=TIMEOUT) == ("deadlock", True)
    assert time.monotonic() - started < 1.0


class LateReplier(Actor):
    """Answers only after the test releases it, i.e. after the ask timed out."""

    def __init__(self, gate: asyncio.Event) -> None:
        super().__init__()
        self.gate = gate

    async def on_receive(self, message: Any) -> Any:
        await self.gate.wait()
        return ("late answer", message)


async def test_a_reply_after_the_ask_timed_out_becomes_a_late_reply_dead_letter(system):
    gate = asyncio.Event()
    ref = system.spawn(lambda: LateReplier(gate), "late")
    dead = DeadLetterLog(system)
    before = system.dead_letters_count
    with pytest.raises(AskTimeoutError):
        await ref.ask("q", timeout=0.05)
    gate.set()
    letters = await dead.wait_count(1)
    assert len(letters) == 1
    letter = letters[0]
    assert isinstance(letter, DeadLetter)
    assert letter.reason == "late-reply"
    assert letter.message == ("late answer", "q")
    assert system.dead_letters_count == before + 1
    # the actor itself is fine
    assert await ref.ask("again", timeout=TIMEOUT) == ("late answer", "again")


async def test_a_late_context_reply_also_becomes_a_late_reply_dead_letter(system):
    gate = asyncio.Event()

    class LateContextReplier(Actor):
        async def on_receive(self, message: Any) -> Any:
            await gate.wait()
            self.context.reply("too late")
            return None

    ref = system.spawn(LateContextReplier)
    dead = DeadLetterLog(system)
    with pytest.raises(AskTimeoutError):
        await ref.ask("q", timeout=0.05)
    gate.set()
    letters = await dead.wait_count(1)
    assert [(d.message, d.reason) for d in letters] == [("too late", "late-reply")]


async def test_ask_to_a_stopped_actor_raises_actor_stopped_error_at_once(system):
    ref = system.spawn(Echo)
    terminated = await watch(system, ref)
    ref.stop()
    await until_terminated(terminated, ref)
    started = time.monotonic()
    with pytest.raises(ActorStoppedError):
        await ref.ask("anyone?", timeout=5.0)
    assert time.monotonic() - started < 0.5


class StopsAfterHold(Actor):
    async def on_receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            await message.run()
            self.context.stop(self.self_ref)
            return None
        return "answered"


async def test_ask_raises_actor_stopped_error_when_the_actor_stops_before_answering(system):
    ref = system.spawn(StopsAfterHold)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    pending = asyncio.ensure_future(ref.ask("queued question", timeout=5.0))
    await asyncio.sleep(0)
    assert not pending.done()
    started = time.monotonic()
    hold.release.set()
    with pytest.raises(ActorStoppedError):
        await asyncio.wait_for(pending, TIMEOUT)
    assert time.monotonic() - started < 1.0


async def test_ask_queued_behind_a_poison_pill_raises_actor_stopped_error(system):
    inbox = Inbox()
    ref = system.spawn(lambda: Recorder(inbox))
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    ref.stop()
    pending = asyncio.ensure_future(ref.ask("behind the pill", timeout=5.0))
    await asyncio.sleep(0)
    hold.release.set()
    with pytest.raises(ActorStoppedError):
        await asyncio.wait_for(pending, TIMEOUT)
    assert inbox.items == []


async def test_an_envelope_subclass_told_as_a_message_arrives_as_itself_every_time(system):
    # The runtime's own envelopes are told apart by exact type; any other object, even a
    # subclass of Envelope, is a message. The 1-in-32 timed sample must agree.
    from dovecote import Envelope

    class Parcel(Envelope):
        __slots__ = ()

    seen: list[object] = []
    senders: list[object] = []

    class Keeper(Actor):
        def on_receive(self, message: object) -> object:
            seen.append(message)
            senders.append(self.context.sender)
            return None

    ref = system.spawn(Keeper, "keeper")
    parcels = [Parcel(i, sender="not-a-ref") for i in range(64)]
    for parcel in parcels:
        ref.tell(parcel)
    await ref.ask("barrier", timeout=TIMEOUT)
    assert seen[:64] == parcels
    assert senders[:64] == [None] * 64  # the parcel's own field is not the actor's sender


@pytest.mark.parametrize("mailbox", ["plain", "bounded", "priority"])
async def test_envelopes_told_as_messages_survive_a_restart_and_a_stop_as_themselves(
    system, mailbox: str
):
    from actor_kit import Journal, Worker

    from dovecote import ActorOptions, BoundedMailbox, Envelope, PriorityMailbox
    from dovecote.mailboxes import ExemptEnvelope

    options = {
        "plain": None,
        "bounded": ActorOptions.create().with_mailbox(lambda: BoundedMailbox(100, "drop-head")),
        "priority": ActorOptions.create().with_mailbox(lambda: PriorityMailbox(lambda m: 0)),
    }[mailbox]
    journal = Journal()
    ref = system.spawn(lambda: Worker(journal), "worker", options)
    plain, exempt = Envelope("inner", sender="not-a-ref"), ExemptEnvelope("inner too")
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    ref.tell("boom")  # the restart carries the two envelopes behind it to incarnation 2
    ref.tell(plain)
    ref.tell(exempt)
    hold.release.set()
    await journal.inbox.wait_for(lambda items: len(items) >= 3)
    assert journal.inbox.items[1:] == [(2, plain), (2, exempt)]
    if mailbox == "priority":
        return  # there the pill goes behind every message, so nothing is left over

    dead = DeadLetterLog(system)
    second = Hold()
    ref.tell(second)
    await second.wait_started()
    ref.stop()
    ref.tell(plain)  # behind the pill: a dead letter, as itself
    second.release.set()
    await dead.inbox.wait_for(lambda items: len(items) >= 1)
    assert dead.messages() == [plain]


async def test_a_custom_mailbox_filtering_in_enqueue_sees_every_bare_tell(system):
    from dovecote import ActorOptions, Mailbox
    from dovecote.mailboxes import BareEnvelope

    seen: list[object] = []

    class Filtering(Mailbox):
        def enqueue(self, envelope) -> None:  # type: ignore[no-untyped-def]
            seen.append(envelope)
            if envelope.message != "noise":
                super().enqueue(envelope)

    ref, inbox = spawn_recorder(system, "filtered", ActorOptions().with_mailbox(Filtering))
    for message in ("a", "noise", "b"):
        ref.tell(message)
    await inbox.wait_for(lambda items: len(items) >= 2)
    assert inbox.items == ["a", "b"]  # delivered bare, not as their envelopes
    assert [type(e) for e in seen] == [BareEnvelope] * 3
