"""Ping-pong between two processes over NATS (run it: it starts the second process itself).

    python examples/remote_ping_pong.py            # needs NATS with JetStream on
                                                   # $DOVECOTE_NATS_URL (default
                                                   # nats://127.0.0.1:4222)

The parent process is node ``ping``; it starts ``python remote_ping_pong.py pong SYSTEM``
as node ``pong``. Ping resolves pong's actor by address (no round trip), tells it with
itself as the sender (pong answers with ``context.reply``), asks it, watches it, and
sees it stop.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid

import attrs

from dovecote import Actor, ActorRef, ActorSystem, Terminated, codec

URL = os.environ.get("DOVECOTE_NATS_URL", "nats://127.0.0.1:4222")


@codec.register
@attrs.frozen
class Ping:
    """A registered message type: only registered types cross the wire (never pickle)."""

    n: int


@codec.register
@attrs.frozen
class Pong:
    n: int
    by: str


class Ponger(Actor):
    def on_receive(self, message: object) -> object:
        if isinstance(message, Ping):
            answer = Pong(message.n, self.context.system.host)
            if self.context.sender is not None:  # told with a sender: answer it
                self.context.reply(answer)
                return None
            return answer  # asked: the return value is the answer
        return None


class Pinger(Actor):
    def __init__(self, ponger: ActorRef, done: asyncio.Future[list[str]]) -> None:
        super().__init__()
        self.ponger = ponger
        self.done = done
        self.log_lines: list[str] = []

    def pre_start(self) -> None:
        self.context.watch(self.ponger)
        self.ponger.tell(Ping(1), sender=self.self_ref)

    def on_receive(self, message: object) -> None:
        if isinstance(message, Pong):
            self.log_lines.append(f"ping {message.n} -> pong {message.n} from {message.by}")
            if message.n < 3:
                self.context.sender.tell(Ping(message.n + 1), sender=self.self_ref)  # type: ignore[union-attr]
            else:
                self.context.sender.stop()  # type: ignore[union-attr]
        elif isinstance(message, Terminated):
            self.log_lines.append(f"watched {message.ref.path} on node pong: Terminated")
            self.done.set_result(self.log_lines)


async def pong_node(system: str) -> None:
    async with ActorSystem(system, host="pong", remote=URL) as node:
        node.spawn(Ponger, "ponger")
        print("READY", flush=True)
        await asyncio.to_thread(sys.stdin.read)  # until the parent closes our stdin


async def ping_node() -> None:
    system = f"pingpong{uuid.uuid4().hex[:8]}"
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "pong",
        system,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        while (line := await child.stdout.readline()).strip() != b"READY":
            if not line:
                raise SystemExit("the pong process did not start")
        async with ActorSystem(system, host="ping", remote=URL) as node:
            ponger = node.resolve(f"nats://{system}@pong/user/ponger")
            print(f"members: {', '.join(m.host for m in node.cluster.members)}")
            answer = await ponger.ask(Ping(0), timeout=5.0)
            print(f"ask -> {answer.__class__.__name__}(n={answer.n}, by={answer.by!r})")
            done: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
            node.spawn(lambda: Pinger(ponger, done), "pinger")
            for line_out in await asyncio.wait_for(done, 10.0):
                print(line_out)
    finally:
        assert child.stdin is not None
        child.stdin.close()
        await asyncio.wait_for(child.wait(), 10)


if __name__ == "__main__":
    if sys.argv[1:2] == ["pong"]:
        asyncio.run(pong_node(sys.argv[2]))
    else:
        asyncio.run(ping_node())
