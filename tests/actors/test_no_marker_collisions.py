"""No user message collides with a runtime marker (issue 8, item 8).

The mailboxes' "nothing queued" marker used to be public (``dovecote.mailboxes.EMPTY``);
told as a message it was lost and stalled the next one whenever it was the message the
metrics sample took, and always on the blocking dispatcher. The marker is private now,
and neither the runtime nor a mailbox takes it to mean "empty" while messages are queued,
so even the object itself (``Mailbox().take()`` on an empty mailbox hands it out) is
delivered like any other message.
"""

from __future__ import annotations

from typing import Any

import pytest
from actor_kit import TIMEOUT, Inbox

import dovecote.mailboxes
from dovecote import Actor, ActorOptions, ActorSystem, Mailbox, PriorityMailbox


def marker() -> Any:
    """The object an empty mailbox's ``take()`` returns."""
    return Mailbox().take()


class Collect(Actor):
    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox

    def on_receive(self, message: Any) -> Any:
        self.inbox.add(message)
        return message


def test_the_empty_marker_is_not_public() -> None:
    assert "EMPTY" not in dovecote.mailboxes.__all__
    assert not hasattr(dovecote.mailboxes, "EMPTY")


@pytest.mark.parametrize("mailbox_cls", [Mailbox, PriorityMailbox])
def test_a_queued_marker_comes_out_of_dequeue(mailbox_cls: type) -> None:
    mailbox = Mailbox() if mailbox_cls is Mailbox else PriorityMailbox(priority_for=lambda m: 0)
    mailbox.post(marker())
    mailbox.post("next")
    first = mailbox.dequeue()
    assert first is not None
    assert first.message is marker()
    second = mailbox.dequeue()
    assert second is not None
    assert second.message == "next"
    assert mailbox.dequeue() is None


OPTIONS = {
    "default": ActorOptions.create(),
    "blocking": ActorOptions.create().with_dispatcher("blocking"),
    "priority": ActorOptions.create().with_mailbox(
        lambda: PriorityMailbox(priority_for=lambda m: 0)
    ),
}


@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
async def test_the_marker_told_as_a_message_is_delivered_and_stalls_nothing(
    options: ActorOptions,
) -> None:
    # sample every message, so the sampled path (which took the marker for "empty") runs
    async with ActorSystem("m", metrics_sample_every=1) as system:
        inbox = Inbox()
        ref = system.spawn(lambda: Collect(inbox), options=options)
        ref.tell(marker())
        ref.tell("next")
        items = await inbox.wait_count(2, TIMEOUT)
        assert items[0] is marker()
        assert items[1] == "next"
        assert await ref.ask(marker(), timeout=TIMEOUT) is marker()


async def test_stash_works_while_handling_the_marker(system: ActorSystem) -> None:
    inbox = Inbox()

    class Stasher(Actor):
        def on_receive(self, message: Any) -> None:
            if message == "go":
                self.context.unstash_all()
                return
            self.context.stash()  # raised "only while handling a message" for the marker
            inbox.add("stashed")

    ref = system.spawn(Stasher)
    ref.tell(marker())
    await inbox.wait_count(1)
