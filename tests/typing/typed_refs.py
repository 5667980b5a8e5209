"""Checked by ``mypy --strict`` (tests/typing/test_mypy_strict.py), never run by pytest.

If ``await ref.ask(...)`` became ``Any``, or ``tell`` stopped checking its message type,
or the Literal option types widened to ``str``, mypy would report an error here:
``assert_type`` fails on ``Any``, and an ``ignore`` that no longer ignores anything is an
error under ``--strict`` (``warn_unused_ignores``).
"""

from __future__ import annotations

from typing import Any, assert_type

from dovecote import (
    Actor,
    ActorOptions,
    ActorRef,
    ActorSystem,
    BoundedMailbox,
    DispatcherName,
    OverflowPolicy,
)


class Doubler(Actor[int, int]):
    def on_receive(self, message: int) -> int:
        return message * 2


class Greeter(Actor[str, str]):
    async def on_receive(self, message: str) -> str:
        return f"hello {message}"


class Untyped(Actor):
    def on_receive(self, message: Any) -> Any:
        return message


class Child(Actor[str, int]):
    def on_receive(self, message: str) -> int:
        return len(message)


class Parent(Actor[str, int]):
    async def on_receive(self, message: str) -> int:
        child = self.context.spawn(Child)
        assert_type(child, ActorRef[str, int])
        me = self.self_ref
        assert_type(me, ActorRef[str, int])
        return await child.ask(message)


async def refs_carry_their_types(system: ActorSystem) -> None:
    doubler = system.spawn(Doubler, "doubler")
    assert_type(doubler, ActorRef[int, int])
    assert_type(await doubler.ask(21), int)
    doubler.tell(1)
    doubler.tell("one")  # type: ignore[arg-type]
    await doubler.ask("one")  # type: ignore[arg-type]

    greeter = system.spawn(lambda: Greeter())
    assert_type(greeter, ActorRef[str, str])
    assert_type(await greeter.ask("world", timeout=1.0), str)

    plain = system.spawn(Untyped)
    assert_type(plain, ActorRef[Any, Any])
    plain.tell(object())

    anything: ActorRef = doubler  # a plain ActorRef is ActorRef[Any, Any]
    anything.tell("whatever")


def options_are_literal_types() -> None:
    ActorOptions.create().with_mailbox_capacity(5).with_mailbox_overflow("drop-new")
    ActorOptions.create().with_mailbox_overflow("drop-oldest")  # type: ignore[arg-type]
    ActorOptions.create().with_dispatcher("blocking")
    ActorOptions.create().with_dispatcher("threads")  # type: ignore[arg-type]
    ActorOptions(mailbox_capacity=5, mailbox_overflow="nope")  # type: ignore[arg-type]
    BoundedMailbox(5, "drop-head")
    BoundedMailbox(5, "sometimes")  # type: ignore[arg-type]
    policy: OverflowPolicy = "reject"
    dispatcher: DispatcherName = "default"
    assert_type(BoundedMailbox(1, policy).overflow, OverflowPolicy)
    assert_type(ActorOptions(dispatcher=dispatcher).dispatcher, DispatcherName)
