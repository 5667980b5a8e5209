"""Actors and helpers shared by the remote tests (and run inside node processes)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs

from dovecote import Actor, ActorRef, Terminated, codec

TIMEOUT = 5.0
NODE_SCRIPT = Path(__file__).with_name("node_proc.py")


@codec.register
@attrs.frozen
class Relay:
    """Tell ``message`` to ``to``, with the relaying actor as the sender."""

    to: ActorRef
    message: Any


@codec.register
@attrs.frozen
class AskVia:
    """Ask ``to`` for ``message`` and answer with its answer (asks from a remote actor)."""

    to: ActorRef
    message: Any


class Echo(Actor):
    """Answers ``["echo", m]``; told with a sender, replies to it; ``"boom"`` raises."""

    async def on_receive(self, message: Any) -> Any:
        if message == "boom":
            raise KeyError("boom")
        if isinstance(message, list) and message and message[0] == "sleep":
            await asyncio.sleep(message[1])
            return "slept"
        if isinstance(message, Relay):
            message.to.tell(message.message, self.self_ref)
            return None
        if isinstance(message, AskVia):
            return await message.to.ask(message.message, timeout=TIMEOUT)
        if isinstance(message, list) and message and message[0] == "who":
            sender = self.context.sender
            return sender.address if sender is not None else None
        answer = ["echo", message]
        if self.context.sender is not None:
            self.context.reply(answer)
            return None
        return answer


class Recorder(Actor):
    """Keeps what it is told; ``"dump"`` answers the list."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def on_receive(self, message: Any) -> Any:
        if message == "dump":
            return self.seen
        self.seen.append(message)
        return len(self.seen)


def spawn_on_b(nodes: tuple[Any, Any], actor: Any, name: str) -> ActorRef:
    """Spawn ``actor`` on the second node and return the first node's ref to it."""
    a, b = nodes
    return a.resolve(b.spawn(actor, name).address)  # type: ignore[no-any-return]


async def tell_and_ask(recorder: ActorRef, n: int, every: int, at: int = 0) -> list[int]:
    """Send 0..n-1 to a Recorder, asking for every ``every``-th (``i % every == at``) and
    telling the rest; the asks' answers, each the count the recorder had seen by then."""
    futures = []
    for i in range(n):
        if i % every == at:
            futures.append(recorder.ask(i, timeout=TIMEOUT))
        else:
            recorder.tell(i)
    return list(await asyncio.gather(*futures))


class Inbox(Actor):
    """Forwards every message (and the Terminated events it watches) to a queue."""

    def __init__(self, queue: asyncio.Queue[Any], watch: ActorRef | None = None) -> None:
        super().__init__()
        self.queue = queue
        self.to_watch = watch

    def pre_start(self) -> None:
        if self.to_watch is not None:
            self.context.watch(self.to_watch)

    def on_receive(self, message: Any) -> None:
        if isinstance(message, Terminated):
            self.queue.put_nowait(("terminated", message.ref))
        else:
            self.queue.put_nowait((message, self.context.sender))


def bucket_of(system: str) -> str:
    """The membership bucket of a test's system: one per test, deleted after it."""
    return f"dovecote_test_{system}"


class NodeProcess:
    """A dovecote node in its own OS process (``node_proc.py``), ready once started."""

    def __init__(self, url: str, system: str, host: str, *extra: str) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                [str(NODE_SCRIPT.parent), os.environ.get("PYTHONPATH", "")]
            ),
        }
        self.proc = subprocess.Popen(
            [sys.executable, str(NODE_SCRIPT), url, system, host, bucket_of(system), *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.address = f"nats://{system}@{host}"

    async def ready(self) -> None:
        """Wait for the node's READY line (or fail with its stderr)."""
        assert self.proc.stdout is not None
        line = b"?"
        while line and line.strip() != b"READY":  # (log lines may come first)
            line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), 20)
        if line.strip() != b"READY":
            self.proc.kill()
            _, err = self.proc.communicate(timeout=5)
            raise AssertionError(f"node did not start: {line!r}\n{err.decode()}")

    def stop(self) -> int:
        """Graceful: close stdin (the node shuts down and exits)."""
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                return self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait(timeout=10)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no leaving the cluster."""
        self.proc.kill()
        self.proc.wait(timeout=10)
