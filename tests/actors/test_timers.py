"""schedule_once / schedule_repeatedly, cancel, and timers dying with their actor."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from actor_kit import TIMEOUT, Inbox, spawn_recorder, until_terminated, watch

from dovecote import Actor


class Scheduler(Actor):
    """Schedules timers on request; records the ticks it receives."""

    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox
        self.timers: dict[str, Any] = {}

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, tuple) and message[0] == "once":
            _, key, delay, payload, target = message
            self.timers[key] = self.context.schedule_once(delay, payload, target)
            return "scheduled"
        if isinstance(message, tuple) and message[0] == "repeat":
            _, key, initial, interval, payload, target = message
            self.timers[key] = self.context.schedule_repeatedly(initial, interval, payload, target)
            return "scheduled"
        if isinstance(message, tuple) and message[0] == "cancel":
            self.timers[message[1]].cancel()
            return "cancelled"
        if isinstance(message, tuple) and message[0] == "bad-repeat":
            _, initial, interval = message
            try:
                self.context.schedule_repeatedly(initial, interval, "tick")
            except ValueError:
                return "ValueError"
            return "accepted"
        self.inbox.add((message, time.monotonic()))
        return None


def spawn_scheduler(system: Any) -> tuple[Any, Inbox]:
    inbox = Inbox()
    return system.spawn(lambda: Scheduler(inbox)), inbox


async def test_schedule_once_delivers_the_message_to_the_actor_itself_after_the_delay(system):
    ref, inbox = spawn_scheduler(system)
    started = time.monotonic()
    assert await ref.ask(("once", "t", 0.03, "tick", None), timeout=TIMEOUT) == "scheduled"
    await inbox.wait_count(1)
    message, at = inbox.items[0]
    assert message == "tick"
    assert at - started >= 0.025


async def test_schedule_once_can_target_another_actor(system):
    ref, _ = spawn_scheduler(system)
    target, target_inbox = spawn_recorder(system)
    await ref.ask(("once", "t", 0.01, "for you", target), timeout=TIMEOUT)
    await target_inbox.wait_count(1)
    assert target_inbox.items == ["for you"]


async def test_a_cancelled_schedule_once_never_fires(system):
    ref, inbox = spawn_scheduler(system)
    await ref.ask(("once", "t", 0.05, "never", None), timeout=TIMEOUT)
    await ref.ask(("cancel", "t"), timeout=TIMEOUT)
    await asyncio.sleep(0.1)
    await ref.ask("barrier", timeout=TIMEOUT)
    assert [m for m, _ in inbox.items] == ["barrier"]


async def test_schedule_repeatedly_fires_until_cancelled(system):
    ref, inbox = spawn_scheduler(system)
    await ref.ask(("repeat", "r", 0.01, 0.01, "tick", None), timeout=TIMEOUT)
    await inbox.wait_count(3)
    await ref.ask(("cancel", "r"), timeout=TIMEOUT)
    ticks = sum(1 for m, _ in inbox.items if m == "tick")
    assert ticks >= 3
    await asyncio.sleep(0.1)
    await ref.ask("barrier", timeout=TIMEOUT)
    assert sum(1 for m, _ in inbox.items if m == "tick") == ticks


async def test_schedule_repeatedly_can_target_another_actor(system):
    ref, _ = spawn_scheduler(system)
    target, target_inbox = spawn_recorder(system)
    await ref.ask(("repeat", "r", 0.01, 0.01, "beat", target), timeout=TIMEOUT)
    await target_inbox.wait_count(2)
    await ref.ask(("cancel", "r"), timeout=TIMEOUT)
    assert set(target_inbox.items) == {"beat"}


async def test_timers_die_with_their_actor(system):
    ref, _ = spawn_scheduler(system)
    target, target_inbox = spawn_recorder(system)
    await ref.ask(("repeat", "r", 0.01, 0.01, "beat", target), timeout=TIMEOUT)
    await ref.ask(("once", "o", 0.08, "one-shot", target), timeout=TIMEOUT)
    await target_inbox.wait_count(1)
    terminated = await watch(system, ref)
    ref.stop()
    await until_terminated(terminated, ref)
    count = len(target_inbox.items)
    await asyncio.sleep(0.12)
    await target.ask("barrier", timeout=TIMEOUT)
    assert target_inbox.items[count:] == ["barrier"]
    assert "one-shot" not in target_inbox.items


@pytest.mark.parametrize(("initial", "interval"), [(0.01, 0), (0.01, 0.0), (0.01, -0.1)])
async def test_a_non_positive_timer_interval_raises_value_error(system, initial, interval):
    ref, inbox = spawn_scheduler(system)
    assert await ref.ask(("bad-repeat", initial, interval), timeout=TIMEOUT) == "ValueError"
    await asyncio.sleep(0.05)
    await ref.ask("barrier", timeout=TIMEOUT)
    assert [m for m, _ in inbox.items] == ["barrier"]


async def test_cancel_is_idempotent_and_harmless_after_firing(system):
    ref, inbox = spawn_scheduler(system)
    await ref.ask(("once", "t", 0.01, "fired", None), timeout=TIMEOUT)
    await inbox.wait_count(1)
    await ref.ask(("cancel", "t"), timeout=TIMEOUT)
    assert await ref.ask(("cancel", "t"), timeout=TIMEOUT) == "cancelled"
