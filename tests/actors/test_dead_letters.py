"""Dead letters: published on the event stream as DeadLetter(...) and counted."""

from __future__ import annotations

from typing import Any

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

from dovecote import Actor, ActorOptions, DeadLetter


async def stopped_actor(system: Any, name: str = "gone") -> Any:
    ref = system.spawn(Echo, name)
    terminated = await watch(system, ref)
    ref.stop()
    await until_terminated(terminated, ref)
    return ref


async def test_a_tell_to_a_stopped_actor_is_published_as_a_dead_letter(system):
    ref = await stopped_actor(system)
    sender = system.spawn(Echo, "sender")
    dead = DeadLetterLog(system)
    ref.tell("lost", sender=sender)
    letters = await dead.wait_count(1)
    assert len(letters) == 1
    letter = letters[0]
    assert isinstance(letter, DeadLetter)
    assert letter.message == "lost"
    assert letter.sender == sender
    assert letter.recipient == ref
    assert isinstance(letter.reason, str)
    assert letter.reason


async def test_dead_letters_are_counted(system):
    ref = await stopped_actor(system)
    before = system.dead_letters_count
    dead = DeadLetterLog(system)
    for i in range(7):
        ref.tell(i)
    await dead.wait_count(7)
    assert system.dead_letters_count == before + 7
    assert dead.messages(ref) == list(range(7))


async def test_an_unsubscribed_callback_receives_no_more_dead_letters(system):
    ref = await stopped_actor(system)
    dead = DeadLetterLog(system)
    control = DeadLetterLog(system)
    ref.tell("seen")
    await dead.wait_count(1)
    dead.subscription.unsubscribe()
    ref.tell("not seen")
    await control.wait_count(2)
    assert dead.messages() == ["seen"]
    assert control.messages() == ["seen", "not seen"]


async def test_an_actor_can_subscribe_to_dead_letters(system):
    ref = await stopped_actor(system)
    listener, inbox = spawn_recorder(system, "listener")
    system.event_stream.subscribe(listener, DeadLetter)
    ref.tell("for the listener")
    await inbox.wait_count(1)
    letter = inbox.items[0]
    assert isinstance(letter, DeadLetter)
    assert letter.message == "for the listener"
    assert letter.recipient == ref


async def test_messages_dropped_by_an_overflow_policy_are_not_dead_letters(system):
    options = ActorOptions.create().with_mailbox_capacity(1).with_mailbox_overflow("drop-new")
    dead = DeadLetterLog(system)
    before = system.dead_letters_count
    inbox = Inbox()
    ref = system.spawn(lambda: Recorder(inbox), None, options)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    ref.tell("kept")
    for i in range(5):
        ref.tell(i)  # dropped
    hold.release.set()
    await inbox.wait_count(1)
    assert await ref.ask("barrier", timeout=TIMEOUT) == "barrier"
    assert inbox.items == ["kept", "barrier"]
    assert dead.letters == []
    assert system.dead_letters_count == before


async def test_a_failing_message_is_not_a_dead_letter(system):
    class Failing(Actor):
        def on_receive(self, message: Any) -> Any:
            if message == "fail":
                raise RuntimeError("fail")
            return message

    ref = system.spawn(Failing)
    dead = DeadLetterLog(system)
    before = system.dead_letters_count
    ref.tell("fail")
    assert await ref.ask("after", timeout=TIMEOUT) == "after"
    assert dead.letters == []
    assert system.dead_letters_count == before


async def test_context_reply_with_nobody_to_answer_is_a_dead_letter(system):
    # spec-gap: API.md says reply goes "to sender, or to the asker"; with neither, the reply
    # is not silently lost but published as a dead letter.
    class Replier(Actor):
        def on_receive(self, message: Any) -> Any:
            self.context.reply(("re", message))
            return None

    ref = system.spawn(Replier)
    dead = DeadLetterLog(system)
    ref.tell("no sender")
    letters = await dead.wait_count(1)
    assert [d.message for d in letters] == [("re", "no sender")]
