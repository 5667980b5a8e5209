"""ActorOptions validation, overflow policies at the tell site, priority_for failures."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest
from actor_kit import TIMEOUT, Echo, Hold, Inbox, Recorder, spawn_recorder

from dovecote import (
    Actor,
    ActorOptions,
    BoundedMailbox,
    DovecoteError,
    MailboxFullError,
    OptionsError,
    PriorityMailbox,
)


def priority_mailbox() -> PriorityMailbox:
    return PriorityMailbox(priority_for=lambda m: 0)


INVALID_BUILDS: dict[str, Callable[[], Any]] = {
    "policy without capacity": lambda: ActorOptions.create().with_mailbox_overflow("drop-new"),
    "reject without capacity": lambda: ActorOptions.create().with_mailbox_overflow("reject"),
    "capacity zero": lambda: ActorOptions.create().with_mailbox_capacity(0),
    "capacity negative": lambda: ActorOptions.create().with_mailbox_capacity(-5),
    "capacity not an int": lambda: ActorOptions.create().with_mailbox_capacity(2.5),
    "unknown policy": lambda: (
        ActorOptions.create().with_mailbox_capacity(5).with_mailbox_overflow("drop-oldest")
    ),
    "unknown policy before capacity": lambda: (
        ActorOptions.create().with_mailbox_overflow("nope").with_mailbox_capacity(5)
    ),
    "mailbox then capacity": lambda: (
        ActorOptions.create().with_mailbox(priority_mailbox).with_mailbox_capacity(5)
    ),
    "capacity then mailbox": lambda: (
        ActorOptions.create().with_mailbox_capacity(5).with_mailbox(priority_mailbox)
    ),
    "mailbox then policy": lambda: (
        ActorOptions.create().with_mailbox(priority_mailbox).with_mailbox_overflow("drop-new")
    ),
    "policy then mailbox": lambda: (
        ActorOptions.create().with_mailbox_overflow("drop-new").with_mailbox(priority_mailbox)
    ),
    "mailbox, capacity and policy": lambda: (
        ActorOptions.create()
        .with_mailbox_capacity(5)
        .with_mailbox_overflow("drop-head")
        .with_mailbox(priority_mailbox)
    ),
    "keyword: policy without capacity": lambda: ActorOptions(mailbox_overflow="drop-new"),
    "keyword: capacity zero": lambda: ActorOptions(mailbox_capacity=0),
    "keyword: unknown policy": lambda: ActorOptions(mailbox_capacity=3, mailbox_overflow="x"),
    # spec-gap: an unknown dispatcher name is an invalid option too.
    "unknown dispatcher": lambda: ActorOptions.create().with_dispatcher("warp-drive"),
}


def _build_and_spawn(system: Any, build: Callable[[], Any]) -> Any:
    return system.spawn(Echo, "never", build())


@pytest.mark.parametrize("build", INVALID_BUILDS.values(), ids=INVALID_BUILDS.keys())
async def test_invalid_options_raise_options_error_no_later_than_spawn(system, build):
    # raising from the builder is as good as raising from spawn
    with pytest.raises(OptionsError):
        _build_and_spawn(system, build)
    # nothing changed: the name was not taken
    ref = system.spawn(Echo, "never")
    assert await ref.ask("ok", timeout=TIMEOUT) == "ok"


async def test_options_error_is_a_dovecote_error():
    assert issubclass(OptionsError, DovecoteError)


async def test_options_are_immutable_values():
    base = ActorOptions.create()
    bounded = base.with_mailbox_capacity(500)
    assert bounded is not base
    assert base == ActorOptions.create()
    assert base.mailbox_capacity is None
    assert bounded.mailbox_capacity == 500
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        base.mailbox_capacity = 3  # type: ignore[misc]


async def test_keyword_form_equals_the_builder_form():
    built = ActorOptions.create().with_mailbox_capacity(500).with_mailbox_overflow("drop-new")
    assert built == ActorOptions(mailbox_capacity=500, mailbox_overflow="drop-new")


async def _fill(system: Any, options: Any) -> tuple[Any, Inbox, Hold]:
    """Spawn a recorder and park it on a Hold, so that what is told next stays queued."""
    ref, inbox = spawn_recorder(system, options=options)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    return ref, inbox, hold


async def test_capacity_alone_bounds_the_mailbox_with_drop_head(system):
    ref, inbox, hold = await _fill(system, ActorOptions.create().with_mailbox_capacity(3))
    for i in range(6):
        ref.tell(i)
    hold.release.set()
    await inbox.wait_count(3)
    assert await ref.ask("end", timeout=TIMEOUT) == "end"
    assert inbox.items == [3, 4, 5, "end"]


@pytest.mark.parametrize(
    "options",
    [
        ActorOptions.create().with_mailbox_capacity(3).with_mailbox_overflow("drop-new"),
        ActorOptions.create().with_mailbox_overflow("drop-new").with_mailbox_capacity(3),
        ActorOptions(mailbox_capacity=3, mailbox_overflow="drop-new"),
    ],
    ids=["capacity-then-policy", "policy-then-capacity", "keyword"],
)
async def test_drop_new_keeps_what_was_already_queued_whatever_the_order_of_the_calls(
    system, options
):
    ref, inbox, hold = await _fill(system, options)
    for i in range(6):
        ref.tell(i)
    hold.release.set()
    await inbox.wait_count(3)
    assert await ref.ask("end", timeout=TIMEOUT) == "end"
    assert inbox.items == [0, 1, 2, "end"]


async def test_reject_raises_mailbox_full_error_at_the_tell_site_and_queues_nothing(system):
    options = ActorOptions.create().with_mailbox_capacity(2).with_mailbox_overflow("reject")
    ref, inbox, hold = await _fill(system, options)
    ref.tell(0)
    ref.tell(1)
    with pytest.raises(MailboxFullError):
        ref.tell(2)
    with pytest.raises(MailboxFullError):
        ref.tell(3)
    assert issubclass(MailboxFullError, DovecoteError)
    hold.release.set()
    await inbox.wait_count(2)
    assert await ref.ask("end", timeout=TIMEOUT) == "end"
    assert inbox.items == [0, 1, "end"]


async def test_an_ask_into_a_full_reject_mailbox_raises_mailbox_full_error(system):
    options = ActorOptions.create().with_mailbox_capacity(1).with_mailbox_overflow("reject")
    ref, inbox, hold = await _fill(system, options)
    ref.tell("queued")
    with pytest.raises(MailboxFullError):
        await ref.ask("no room", timeout=TIMEOUT)
    hold.release.set()
    await inbox.wait_count(1)
    assert inbox.items == ["queued"]


class Teller(Actor):
    """Tells its target whatever it receives and reports how that went."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target

    def on_receive(self, message: Any) -> Any:
        self.target.tell(message)
        return "told"


async def test_reject_lands_in_the_telling_actors_handler(system):
    options = ActorOptions.create().with_mailbox_capacity(1).with_mailbox_overflow("reject")
    target, inbox, hold = await _fill(system, options)
    teller = system.spawn(lambda: Teller(target))
    assert await teller.ask("first", timeout=TIMEOUT) == "told"
    with pytest.raises(MailboxFullError):
        await teller.ask("second", timeout=TIMEOUT)
    hold.release.set()
    await inbox.wait_count(1)
    assert inbox.items == ["first"]
    assert await teller.ask("teller still works", timeout=TIMEOUT) == "told"


async def test_a_user_built_bounded_mailbox_defaults_to_reject(system):
    options = ActorOptions.create().with_mailbox(lambda: BoundedMailbox(1))
    ref, _inbox, hold = await _fill(system, options)
    ref.tell("fits")
    with pytest.raises(MailboxFullError):
        ref.tell("does not fit")
    hold.release.set()


def urgency(message: Any) -> Any:
    return message["urgency"]


async def test_priority_mailbox_delivers_lower_numbers_first_and_fifo_within_a_tier(system):
    options = ActorOptions.create().with_mailbox(lambda: PriorityMailbox(priority_for=urgency))
    ref, inbox, hold = await _fill(system, options)
    sent = [
        {"urgency": 10, "n": 1},
        {"urgency": 5, "n": 2},
        {"urgency": 0, "n": 3},
        {"urgency": 5, "n": 4},
        {"urgency": 10, "n": 5},
        {"urgency": 0, "n": 6},
    ]
    for message in sent:
        ref.tell(message)
    hold.release.set()
    await inbox.wait_count(6)
    assert [m["n"] for m in inbox.items] == [3, 6, 2, 4, 1, 5]


async def test_a_priority_for_that_raises_sends_the_message_to_the_lowest_priority(system):
    options = ActorOptions.create().with_mailbox(lambda: PriorityMailbox(priority_for=urgency))
    ref, inbox, hold = await _fill(system, options)
    ref.tell("not a dict")  # urgency() raises TypeError: the tell must not
    ref.tell({"urgency": 99})
    ref.tell({"urgency": "high"})  # not a number: lowest priority too
    ref.tell({"urgency": 1})
    hold.release.set()
    await inbox.wait_count(4)
    assert inbox.items[:2] == [{"urgency": 1}, {"urgency": 99}]
    assert inbox.items[2:] == ["not a dict", {"urgency": "high"}]


async def test_a_priority_for_that_raises_does_not_crash_a_sending_actor(system):
    options = ActorOptions.create().with_mailbox(lambda: PriorityMailbox(priority_for=urgency))
    inbox = Inbox()
    target = system.spawn(lambda: Recorder(inbox), "triage", options)
    teller = system.spawn(lambda: Teller(target), "teller")
    assert await teller.ask("bad message", timeout=TIMEOUT) == "told"
    assert await teller.ask({"urgency": 1}, timeout=TIMEOUT) == "told"
    await inbox.wait_count(2)
    assert sorted(map(str, inbox.items)) == sorted(["bad message", str({"urgency": 1})])
