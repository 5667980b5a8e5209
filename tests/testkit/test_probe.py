"""TestProbe: expectations, replies, watching, and the errors for bad timeouts."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from dovecote import Actor, ActorSystem, DeadLetter, Terminated
from dovecote.testkit import EventRecorder, TestProbe


class Echo(Actor):
    def on_receive(self, message: Any) -> None:
        sender = self.context.sender
        if sender is not None:
            sender.tell(("echo", message), self.self_ref)


class AskForward(Actor):
    """Asks the probe it was given and reports the answer to the original sender."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target

    async def on_receive(self, message: Any) -> Any:
        return await self.target.ask(message, timeout=3.0)


async def test_expect_message_by_value_type_and_predicate(system: ActorSystem) -> None:
    probe = TestProbe(system)
    echo = system.spawn(Echo, "echo")
    for m in ("a", "b", "c"):
        echo.tell(m, sender=probe.ref)
    assert await probe.expect_message(("echo", "a")) == ("echo", "a")
    assert await probe.expect_message(tuple) == ("echo", "b")
    assert await probe.expect_message(lambda m: m[1] == "c") == ("echo", "c")
    assert probe.last_sender == echo


async def test_expect_message_reports_what_arrived_instead(system: ActorSystem) -> None:
    probe = TestProbe(system)
    probe.ref.tell("surprise")
    with pytest.raises(AssertionError, match="surprise"):
        await probe.expect_message("expected")


async def test_expect_message_times_out_with_an_assertion(system: ActorSystem) -> None:
    probe = TestProbe(system)
    with pytest.raises(AssertionError, match="timeout"):
        await probe.expect_message(timeout=0.05)


async def test_expect_no_message(system: ActorSystem) -> None:
    probe = TestProbe(system)
    await probe.expect_no_message(0.02)
    probe.ref.tell("late")
    with pytest.raises(AssertionError, match="late"):
        await probe.expect_no_message(0.5)


async def test_receive_n_collects_in_order_or_says_how_many_came(system: ActorSystem) -> None:
    probe = TestProbe(system)
    for i in range(5):
        probe.ref.tell(i)
    assert await probe.receive_n(5) == [0, 1, 2, 3, 4]
    probe.ref.tell("only one")
    with pytest.raises(AssertionError, match="received 1 of 2"):
        await probe.receive_n(2, timeout=0.05)


async def test_reply_answers_an_ask_made_to_the_probe(system: ActorSystem) -> None:
    probe = TestProbe(system)
    asker = system.spawn(lambda: AskForward(probe.ref), "asker")
    answer = asyncio.ensure_future(asker.ask("question?", timeout=3.0))
    assert await probe.expect_message("question?") == "question?"
    probe.reply("answer!")
    assert await asyncio.wait_for(answer, 3.0) == "answer!"


async def test_expect_terminated_watches_the_ref(system: ActorSystem) -> None:
    probe = TestProbe(system)
    echo = system.spawn(Echo, "doomed")
    probe.watch(echo)
    echo.stop()
    got = await probe.expect_terminated(echo)
    assert got == Terminated(echo)


async def test_expect_terminated_of_an_already_dead_actor(system: ActorSystem) -> None:
    probe = TestProbe(system)
    echo = system.spawn(Echo, "gone")
    other = TestProbe(system)
    other.watch(echo)
    echo.stop()
    await other.expect_terminated(echo)
    await probe.expect_terminated(echo)  # watching a dead ref delivers at once


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, True, "1"])
async def test_probe_timeouts_must_be_positive_numbers(system: ActorSystem, bad: Any) -> None:
    probe = TestProbe(system)
    with pytest.raises(ValueError):
        await probe.expect_message(timeout=bad)
    with pytest.raises(ValueError):
        await probe.expect_no_message(bad)
    with pytest.raises(ValueError):
        await probe.receive_n(1, timeout=bad)
    with pytest.raises(ValueError):
        await probe.expect_terminated(probe.ref, timeout=bad)


async def test_event_recorder_sees_dead_letters(system: ActorSystem) -> None:
    echo = system.spawn(Echo, "short-lived")
    probe = TestProbe(system)
    probe.watch(echo)
    echo.stop()
    await probe.expect_terminated(echo)
    with EventRecorder(system, DeadLetter) as recorder:
        echo.tell("after the end")
        event = await recorder.expect(DeadLetter)
    assert event.message == "after the end"
    assert recorder.dead_letters == [event]
    echo.tell("not recorded")  # closed
    assert len(recorder.events) == 1
    with pytest.raises(AssertionError):
        await recorder.expect(lambda e: False, timeout=0.02)
