"""Unhandled messages (issue 8, API.md "Core revisions"): the default ``on_receive`` and
``self.unhandled(message)`` publish ``UnhandledMessage``, warn (rate-limited per actor
class and message type) and fail a pending ask with ``UnhandledMessageError``. Before, the
default ``on_receive`` (or a misspelt handler) silently answered ``None``."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import structlog
from actor_kit import TIMEOUT, Inbox

import dovecote
from dovecote import (
    Actor,
    ActorOptions,
    ActorRef,
    ActorSystem,
    DovecoteError,
    UnhandledMessage,
    UnhandledMessageError,
)
from dovecote.actors import _unhandled


class Nothing(Actor):
    """No handler at all: every message is unhandled."""


class Misspelt(Actor):
    def on_recieve(self, message: Any) -> Any:  # the typo the default catches
        return "never"


class Counter(Actor):
    """Counts ints; anything else falls through to ``self.unhandled``."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, int):
            self.total += message
            return self.total
        self.unhandled(message)
        return "ignored"  # the ask fails anyway: this value does not answer it


class BlockingCounter(Counter):
    pass


def test_the_names_are_exported_top_level() -> None:
    assert "UnhandledMessage" in dovecote.__all__
    assert "UnhandledMessageError" in dovecote.__all__
    assert issubclass(UnhandledMessageError, DovecoteError)


def events(system: ActorSystem) -> Inbox:
    inbox = Inbox()
    system.event_stream.subscribe(inbox.add, UnhandledMessage)
    return inbox


@pytest.mark.parametrize("factory", [Nothing, Misspelt])
async def test_the_default_on_receive_fails_the_ask_and_publishes(
    system: ActorSystem, factory: type[Actor]
) -> None:
    inbox = events(system)
    ref = system.spawn(factory, "nobody")
    with pytest.raises(UnhandledMessageError, match="/user/nobody did not handle a str"):
        await ref.ask("hello", timeout=TIMEOUT)
    [event] = await inbox.wait_count(1)
    assert event == UnhandledMessage("hello", None, ref)
    ref.tell(42)
    items = await inbox.wait_count(2)
    assert items[1].message == 42
    assert ref.is_alive


async def test_self_unhandled_keeps_the_state_and_is_not_a_failure(system: ActorSystem) -> None:
    inbox = events(system)
    ref = system.spawn(Counter)
    assert await ref.ask(2, timeout=TIMEOUT) == 2
    with pytest.raises(UnhandledMessageError):
        await ref.ask("what?", timeout=TIMEOUT)
    assert await ref.ask(3, timeout=TIMEOUT) == 5  # no restart: the state survived
    [event] = await inbox.wait_count(1)
    assert event.message == "what?"
    assert system.metrics.snapshot()["classes"]["Counter"]["failed"] == 0


async def test_the_event_names_the_sender_of_a_tell(system: ActorSystem) -> None:
    inbox = events(system)
    ref = system.spawn(Counter)
    other = system.spawn(Counter)
    ref.tell("odd", sender=other)
    [event] = await inbox.wait_count(1)
    assert event == UnhandledMessage("odd", other, ref)


async def test_on_the_blocking_dispatcher_too(system: ActorSystem) -> None:
    inbox = events(system)
    options = ActorOptions.create().with_dispatcher("blocking")
    ref: ActorRef = system.spawn(BlockingCounter, options=options)
    with pytest.raises(UnhandledMessageError):
        await ref.ask("what?", timeout=TIMEOUT)
    assert await ref.ask(1, timeout=TIMEOUT) == 1
    await inbox.wait_count(1)


async def test_the_warning_is_rate_limited_per_class_and_message_type(
    system: ActorSystem, caplog: pytest.LogCaptureFixture
) -> None:
    structlog.reset_defaults()  # an earlier capture_logs leaves structlog "configured"
    caplog.set_level(logging.WARNING, logger="dovecote")
    inbox = events(system)
    first, second = system.spawn(Counter), system.spawn(Counter)
    for _ in range(50):
        first.tell("text")
        second.tell("text")
    first.tell(b"bytes")
    other = system.spawn(Nothing)
    other.tell("text")
    await inbox.wait_count(102)
    warnings = [r.getMessage() for r in caplog.records if "unhandled message" in r.getMessage()]
    assert len(warnings) == 3, warnings  # (Counter, str), (Counter, bytes), (Nothing, str)
    assert any("message_type=str" in w and "actor_class=Counter" in w for w in warnings)
    assert any("message_type=bytes" in w for w in warnings)
    assert any("actor_class=Nothing" in w for w in warnings)


async def test_the_next_warning_counts_the_ones_not_logged(
    system: ActorSystem, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    structlog.reset_defaults()
    caplog.set_level(logging.WARNING, logger="dovecote")
    inbox = events(system)
    ref = system.spawn(Counter)
    for _ in range(5):
        ref.tell("text")
    await inbox.wait_count(5)
    monkeypatch.setattr(_unhandled, "WARN_EVERY", 0.0)  # the window has passed
    ref.tell("text")
    await inbox.wait_count(6)
    warnings = [r.getMessage() for r in caplog.records if "unhandled message" in r.getMessage()]
    assert len(warnings) == 2
    assert "not_logged_since_last=0" in warnings[0]
    assert "not_logged_since_last=4" in warnings[1]

