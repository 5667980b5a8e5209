"""TestProbe: an actor a test holds by the hand, to send from, watch with and expect at."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from dovecote.actors import Actor, ActorRef, Terminated, _death_watch
from dovecote.actors._envelope_kinds import is_runtime_envelope

if TYPE_CHECKING:
    from dovecote.actors import ActorSystem

__all__ = ["TestProbe"]


def _check_timeout(name: str, value: float) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or math.isnan(value)
        or not 0 < value < math.inf
    ):
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


@attrs.frozen(slots=True)
class _Received:
    message: Any
    sender: ActorRef | None


class _ProbeActor(Actor):
    """Records every message with its sender; never answers an ask by itself."""

    def __init__(self, inbox: asyncio.Queue[_Received]) -> None:
        super().__init__()
        self._inbox = inbox

    def on_receive(self, message: Any) -> None:
        cell = self._cell
        env = cell._current
        if is_runtime_envelope(env) and env.reply is not None:
            cell._replied = True  # the test answers with probe.reply(...), or never
        self._inbox.put_nowait(_Received(message, self.context.sender))


def _describe(expected: object) -> str:
    if isinstance(expected, type):
        return f"a {expected.__name__}"
    if callable(expected):
        return f"a message matching {getattr(expected, '__name__', repr(expected))}"
    return repr(expected)


def _matches(expected: object, message: Any) -> bool:
    if expected is None:
        return True
    if isinstance(expected, type):
        return isinstance(message, expected)
    if callable(expected):
        return bool(expected(message))
    return bool(message == expected)


class TestProbe:
    """A scripted participant in a test: a real actor whose inbox the test reads.

    ``probe.ref`` is an ordinary ``ActorRef``: pass it as a ``sender``, hand it to actors
    that reply, or let it watch others. The ``expect_*`` methods wait in real time (not
    the system's clock), so a probe works beside a ``ManualClock``.
    """

    __test__ = False  # not a pytest test class, despite the name

    def __init__(self, system: ActorSystem, name: str | None = None) -> None:
        self._system = system
        self._inbox: asyncio.Queue[_Received] = asyncio.Queue()
        inbox = self._inbox
        self._ref = system.spawn(lambda: _ProbeActor(inbox), name)
        self._last_sender: ActorRef | None = None

    @property
    def ref(self) -> ActorRef:
        """The probe's own ref."""
        return self._ref

    @property
    def last_sender(self) -> ActorRef | None:
        """Sender of the message the probe received last (an asker's reply ref for asks)."""
        return self._last_sender

    def watch(self, ref: ActorRef) -> ActorRef:
        """Watch ``ref``: its ``Terminated`` arrives in the probe's inbox."""
        _death_watch.watch(self._ref._cell, ref)
        return ref

    def reply(self, message: Any) -> None:
        """Answer the last message's sender (completes a pending ask)."""
        if self._last_sender is None:
            raise RuntimeError("the probe has received no message with a sender to reply to")
        self._last_sender.tell(message, self._ref)

    async def _next(self, timeout: float, waiting_for: str) -> Any:
        try:
            received = await asyncio.wait_for(self._inbox.get(), timeout)
        except TimeoutError:
            raise AssertionError(
                f"timeout ({timeout}s) while waiting for {waiting_for}: nothing arrived"
            ) from None
        self._last_sender = received.sender
        return received.message

    async def expect_message(
        self, expected: type | Callable[[Any], bool] | object = None, *, timeout: float = 3.0
    ) -> Any:
        """The next message, checked against ``expected`` (a type, a predicate or a value).

        ``None`` accepts any message. Raises ``AssertionError`` naming what arrived instead.
        """
        timeout = _check_timeout("timeout", timeout)
        wanted = "any message" if expected is None else _describe(expected)
        message = await self._next(timeout, wanted)
        if not _matches(expected, message):
            raise AssertionError(f"expected {wanted}, got {message!r}")
        return message

    async def expect_no_message(self, duration: float = 0.1) -> None:
        """Assert that nothing arrives for ``duration`` seconds."""
        duration = _check_timeout("duration", duration)
        try:
            received = await asyncio.wait_for(self._inbox.get(), duration)
        except TimeoutError:
            return
        self._last_sender = received.sender
        raise AssertionError(f"expected no message for {duration}s, got {received.message!r}")

    async def receive_n(self, n: int, *, timeout: float = 3.0) -> list[Any]:
        """The next ``n`` messages, all within ``timeout`` seconds in total."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be a non-negative int, got {n!r}")
        timeout = _check_timeout("timeout", timeout)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        messages: list[Any] = []
        while len(messages) < n:
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(
                    f"timeout ({timeout}s): received {len(messages)} of {n} messages: {messages!r}"
                )
            try:
                messages.append(await self._next(left, f"message {len(messages) + 1} of {n}"))
            except AssertionError:
                raise AssertionError(
                    f"timeout ({timeout}s): received {len(messages)} of {n} messages: {messages!r}"
                ) from None
        return messages

    async def expect_terminated(self, ref: ActorRef, *, timeout: float = 3.0) -> Terminated:
        """Wait for ``Terminated(ref)`` (watches ``ref`` first if the probe does not yet)."""
        timeout = _check_timeout("timeout", timeout)
        self.watch(ref)
        message = await self._next(timeout, f"Terminated({ref.path})")
        if not (isinstance(message, Terminated) and message.ref == ref):
            raise AssertionError(f"expected Terminated({ref.path}), got {message!r}")
        return message
