"""ask sends at call time and returns a future; stop returns a future of the termination."""

from __future__ import annotations

import asyncio
import math
from fractions import Fraction
from typing import Any

import pytest
from actor_kit import TIMEOUT, Echo, Hold, Inbox, spawn_recorder

from dovecote import (
    Actor,
    ActorStoppedError,
    AskTimeoutError,
    DovecoteError,
    InvalidTimeoutError,
    MailboxFullError,
)


async def test_ask_is_sent_when_it_is_called_not_when_it_is_awaited(system):
    ref, inbox = spawn_recorder(system)
    answer = ref.ask("a", timeout=TIMEOUT)
    ref.tell("b")
    assert isinstance(answer, asyncio.Future)
    assert await answer == "a"
    await inbox.wait_count(2)
    assert inbox.items == ["a", "b"]


async def test_asks_gathered_are_answered_in_the_order_they_were_made(system):
    ref, inbox = spawn_recorder(system)
    answers = [ref.ask(i, timeout=TIMEOUT) for i in range(5)]
    ref.tell("last")
    assert await asyncio.gather(*answers) == [0, 1, 2, 3, 4]
    await inbox.wait_count(6)
    assert inbox.items == [0, 1, 2, 3, 4, "last"]


@pytest.mark.parametrize(
    "timeout",
    [True, False, 0, 0.0, -1, -0.5, math.nan, pytest.param(10**400, id="10**400"), "1", 1j],
)
async def test_a_timeout_that_is_not_a_positive_number_is_refused_before_sending(
    system, timeout
):
    ref, inbox = spawn_recorder(system)
    with pytest.raises(InvalidTimeoutError) as caught:
        ref.ask("never sent", timeout=timeout)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, DovecoteError)
    assert await ref.ask("barrier", timeout=TIMEOUT) == "barrier"
    assert inbox.items == ["barrier"]


@pytest.mark.parametrize("timeout", [None, math.inf, 5, Fraction(5, 1), 5.0])
async def test_none_and_other_positive_numbers_are_timeouts(system, timeout):
    ref = system.spawn(Echo)
    assert await ref.ask("x", timeout=timeout) == "x"


class Slow(Actor):
    async def on_receive(self, message: Any) -> Any:
        await asyncio.sleep(message)
        return message


async def test_timeout_none_waits_past_the_default_timeout_deadline(system):
    # None is "no deadline": the answer is awaited however long it takes; a short
    # explicit timeout on the same handler does time out (the contrast).
    ref = system.spawn(Slow)
    with pytest.raises(AskTimeoutError):
        await ref.ask(0.3, timeout=0.05)
    assert await ref.ask(0.2, timeout=None) == 0.2


async def test_ask_errors_arrive_through_the_future(system):
    ref = system.spawn(Echo)
    await ref.stop()
    stopped = ref.ask("late")
    assert isinstance(stopped, asyncio.Future)
    with pytest.raises(ActorStoppedError):
        await stopped


async def test_an_ask_rejected_by_a_full_mailbox_fails_its_future(system):
    from dovecote import ActorOptions

    options = ActorOptions.create().with_mailbox_capacity(1).with_mailbox_overflow("reject")
    ref, _ = spawn_recorder(system, options=options)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    ref.tell("fills it")
    rejected = ref.ask("no room")
    with pytest.raises(MailboxFullError):
        await rejected
    hold.release.set()


class Tracked(Actor):
    def __init__(self, inbox: Inbox, name: str) -> None:
        super().__init__()
        self.inbox = inbox
        self.name = name

    async def post_stop(self) -> None:
        await asyncio.sleep(0.01)  # a post_stop that really awaits
        self.inbox.add(("post_stop", self.name))


async def test_await_stop_returns_once_post_stop_has_run(system):
    inbox = Inbox()
    ref = system.spawn(lambda: Tracked(inbox, "a"))
    done = ref.stop()
    assert isinstance(done, asyncio.Future)
    await asyncio.wait_for(done, TIMEOUT)
    assert inbox.items == [("post_stop", "a")]
    assert not ref.is_alive
    again = ref.stop()  # stopping a stopped actor: already done
    assert again.done()


async def test_system_stop_and_context_stop_return_awaitables_too(system):
    inbox = Inbox()
    ref = system.spawn(lambda: Tracked(inbox, "b"))
    await asyncio.wait_for(system.stop(ref), TIMEOUT)
    assert inbox.items == [("post_stop", "b")]

    class Parent(Actor):
        async def on_receive(self, message: Any) -> Any:
            child = self.context.spawn(lambda: Tracked(inbox, "child"))
            await self.context.stop(child)
            return "child stopped"

    parent = system.spawn(Parent)
    assert await parent.ask("go", timeout=TIMEOUT) == "child stopped"
    assert inbox.items[-1] == ("post_stop", "child")


async def test_not_awaiting_stop_is_fine(system):
    ref, inbox = spawn_recorder(system)
    ref.tell("one")
    ref.stop()  # fire and forget, as before
    ref.tell("after the pill")
    await inbox.wait_count(1)
    assert inbox.items == ["one"]
