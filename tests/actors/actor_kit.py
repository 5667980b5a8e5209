"""Small actors and helpers shared by the runtime tests: inboxes, gates, watchers, metrics."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable
from typing import Any

from dovecote import Actor, ActorRef, ActorSystem, DeadLetter, Terminated

TIMEOUT = 2.0


class Inbox:
    """What an actor saw, with a way to await a condition on it (thread-safe appends)."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._changed = asyncio.Event()

    def add(self, item: Any) -> None:
        if threading.get_ident() == self._thread:
            self._append(item)
        else:
            self._loop.call_soon_threadsafe(self._append, item)

    def _append(self, item: Any) -> None:
        self.items.append(item)
        self._changed.set()

    async def wait_for(
        self, predicate: Callable[[list[Any]], bool], timeout: float = TIMEOUT
    ) -> list[Any]:
        async def _wait() -> None:
            while not predicate(self.items):
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(_wait(), timeout)
        return self.items

    async def wait_count(self, n: int, timeout: float = TIMEOUT) -> list[Any]:
        return await self.wait_for(lambda items: len(items) >= n, timeout)


class Hold:
    """A message that parks its handler until released; ``started`` tells it was dequeued."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def wait_started(self) -> None:
        await asyncio.wait_for(self.started.wait(), TIMEOUT)

    async def run(self) -> None:
        self.started.set()
        await self.release.wait()


class Recorder(Actor):
    """Records every message (or ``(message, sender)``); parks on :class:`Hold`."""

    def __init__(self, inbox: Inbox, *, with_sender: bool = False) -> None:
        super().__init__()
        self.inbox = inbox
        self.with_sender = with_sender

    async def on_receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            await message.run()
            return None
        if self.with_sender:
            self.inbox.add((message, self.context.sender))
        else:
            self.inbox.add(message)
        return message


class Echo(Actor):
    """Answers every ask with the message itself (sync handler)."""

    def on_receive(self, message: Any) -> Any:
        return message


class Watch:
    def __init__(self, ref: ActorRef) -> None:
        self.ref = ref


class Unwatch:
    def __init__(self, ref: ActorRef) -> None:
        self.ref = ref


class Watcher(Actor):
    """Watches refs on request (``ask(Watch(ref))`` as a barrier) and records everything."""

    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox

    async def on_receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            await message.run()
        elif isinstance(message, Watch):
            self.context.watch(message.ref)
            return "watching"
        elif isinstance(message, Unwatch):
            self.context.unwatch(message.ref)
            return "unwatched"
        else:
            self.inbox.add(message)
        return None


def spawn_recorder(
    system: ActorSystem, name: str | None = None, options: Any = None, **kwargs: Any
) -> tuple[ActorRef, Inbox]:
    inbox = Inbox()
    ref = system.spawn(lambda: Recorder(inbox, **kwargs), name, options)
    return ref, inbox


async def watch(system: ActorSystem, ref: ActorRef) -> Inbox:
    """Spawn a watcher of ``ref``; its inbox receives ``Terminated``."""
    inbox = Inbox()
    watcher = system.spawn(lambda: Watcher(inbox))
    assert await watcher.ask(Watch(ref), timeout=TIMEOUT) == "watching"
    return inbox


def terminations(items: Iterable[Any], ref: ActorRef | None = None) -> list[Terminated]:
    return [m for m in items if isinstance(m, Terminated) and (ref is None or m.ref == ref)]


async def until_terminated(inbox: Inbox, ref: ActorRef, timeout: float = TIMEOUT) -> None:
    await inbox.wait_for(lambda items: bool(terminations(items, ref)), timeout)


class DeadLetterLog:
    """Collects the DeadLetter events published on a system's event stream."""

    def __init__(self, system: ActorSystem) -> None:
        self.inbox = Inbox()
        self.subscription = system.event_stream.subscribe(self.inbox.add, DeadLetter)

    @property
    def letters(self) -> list[DeadLetter]:
        return list(self.inbox.items)

    def messages(self, recipient: ActorRef | None = None) -> list[Any]:
        return [
            d.message
            for d in self.inbox.items
            if recipient is None or (d.recipient is not None and d.recipient == recipient)
        ]

    async def wait_count(self, n: int, timeout: float = TIMEOUT) -> list[DeadLetter]:
        return await self.inbox.wait_count(n, timeout)


def metric_samples(registry: Any, name: str) -> list[tuple[dict[str, str], float]]:
    """Every sample called ``name`` in a prometheus registry, as (labels, value)."""
    return [
        (dict(sample.labels), sample.value)
        for family in registry.collect()
        for sample in family.samples
        if sample.name == name
    ]


def metric_sum(registry: Any, name: str, **labels: str) -> float:
    """The sum of the samples called ``name`` whose labels include ``labels``."""
    return sum(
        value
        for sample_labels, value in metric_samples(registry, name)
        if all(sample_labels.get(k) == v for k, v in labels.items())
    )


def metric_family_names(registry: Any) -> set[str]:
    names: set[str] = set()
    for family in registry.collect():
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
    return names


class Boom(Exception):
    """The failure the supervision tests inject."""


class Journal:
    """Shared by every incarnation of a Worker: how many were made and what they saw."""

    def __init__(self) -> None:
        self.created = 0
        self.inbox = Inbox()
        self.events: list[Any] = []

    def seen(self, incarnation: int | None = None) -> list[Any]:
        return [m for i, m in self.inbox.items if incarnation is None or i == incarnation]


class Worker(Actor):
    """A stateful worker: "count" increments, "boom" raises Boom, Hold parks."""

    def __init__(self, journal: Journal) -> None:
        super().__init__()
        journal.created += 1
        self.incarnation = journal.created
        self.journal = journal
        self.count = 0

    async def on_receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            await message.run()
            return None
        self.journal.inbox.add((self.incarnation, message))
        if message == "boom":
            raise Boom(f"boom in incarnation {self.incarnation}")
        if message == "count":
            self.count += 1
            return (self.incarnation, self.count)
        if message == "whoami":
            return self.incarnation
        return message


class Supervisor(Actor):
    """Spawns the given children in pre_start and supervises them with ``strategy``."""

    def __init__(self, strategy: Any, children: dict[str, Callable[[], Actor]]) -> None:
        super().__init__()
        self._strategy = strategy
        self._factories = children
        self.kids: dict[str, ActorRef] = {}

    @property
    def supervisor_strategy(self) -> Any:
        return self._strategy

    def pre_start(self) -> None:
        self.kids = {name: self.context.spawn(f, name) for name, f in self._factories.items()}

    def on_receive(self, message: Any) -> Any:
        if message == "kids":
            return dict(self.kids)
        return None


def recording(decide: Callable[[BaseException], Any], seen: list[BaseException]) -> Any:
    """A decider that records each error before deciding."""

    def decider(error: BaseException) -> Any:
        seen.append(error)
        return decide(error)

    return decider


async def spawn_supervised(
    system: ActorSystem,
    strategy: Any,
    children: dict[str, Callable[[], Actor]],
    name: str = "supervisor",
) -> tuple[ActorRef, dict[str, ActorRef]]:
    parent = system.spawn(lambda: Supervisor(strategy, children), name)
    kids = await parent.ask("kids", timeout=TIMEOUT)
    return parent, kids
