"""Several node processes on one machine, and a node killed with SIGKILL mid-run."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from remote_kit import TIMEOUT, AskVia, Inbox, NodeProcess, Relay, bucket_of, tell_and_ask

from dovecote import ActorNotFoundError, ActorSystem, AskTimeoutError
from dovecote.remote import MemberDown, MemberUp, NatsRemote, RemoteError


@pytest.fixture
async def two_nodes(nats: str, system_name: str) -> AsyncIterator[tuple[NodeProcess, NodeProcess]]:
    procs = (
        NodeProcess(nats, system_name, "proc-b", "fast"),
        NodeProcess(nats, system_name, "proc-c", "fast"),
    )
    try:
        await asyncio.gather(*(p.ready() for p in procs))
        yield procs
    finally:
        for p in procs:
            p.stop()


async def test_tell_ask_reply_sender_ordering_and_asks_between_processes(
    two_nodes: tuple[NodeProcess, NodeProcess], system_name: str, fast: Callable[..., Any]
) -> None:
    b, c = two_nodes
    async with ActorSystem(system_name, host="proc-a", remote=fast()) as a:
        echo_b = a.resolve(b.address + "/user/echo")
        echo_c = a.resolve(c.address + "/user/echo")
        assert await echo_b.ask("hi", timeout=TIMEOUT) == ["echo", "hi"]  # ask
        queue: asyncio.Queue[Any] = asyncio.Queue()
        inbox = a.spawn(lambda: Inbox(queue), "inbox")
        echo_b.tell("ping", sender=inbox)  # context.reply reaches our sender
        assert await asyncio.wait_for(queue.get(), TIMEOUT) == (["echo", "ping"], echo_b)
        echo_b.tell(Relay(inbox, "relayed"))  # a ref inside a message, used by proc-b
        assert await asyncio.wait_for(queue.get(), TIMEOUT) == ("relayed", echo_b)
        # proc-b's actor asks proc-c's actor: three processes in one answer
        assert await echo_b.ask(AskVia(echo_c, "x"), timeout=TIMEOUT) == ["echo", "x"]
        with pytest.raises(RemoteError) as caught:
            await echo_c.ask("boom", timeout=TIMEOUT)
        assert caught.value.type_name == "builtins.KeyError"
        dotted = a.resolve(c.address + "/user/a.dotted.name")
        assert await dotted.ask(1, timeout=TIMEOUT) == ["echo", 1]
        rec = a.resolve(b.address + "/user/recorder")
        assert await tell_and_ask(rec, 500, 50, at=49) == list(range(50, 501, 50))
        assert await rec.ask("dump", timeout=TIMEOUT) == list(range(500))


async def test_ask_timeout_no_responders_and_unknown_actor_between_processes(
    two_nodes: tuple[NodeProcess, NodeProcess], system_name: str, fast: Callable[..., Any]
) -> None:
    b, _ = two_nodes
    async with ActorSystem(system_name, host="proc-a", remote=fast()) as a:
        echo_b = a.resolve(b.address + "/user/echo")
        started = time.monotonic()
        with pytest.raises(AskTimeoutError):
            await echo_b.ask(["sleep", 2], timeout=0.2)
        assert time.monotonic() - started < 1.5
        with pytest.raises(ActorNotFoundError, match="no responders"):
            await a.resolve(f"nats://{system_name}@proc-x/user/echo").ask(1, timeout=10)
        with pytest.raises(ActorNotFoundError):
            await asyncio.wait_for(a.resolve(b.address + "/user/nobody").ask(1, timeout=10), 2)


async def test_watch_across_processes_on_stop(
    two_nodes: tuple[NodeProcess, NodeProcess], system_name: str, fast: Callable[..., Any]
) -> None:
    b, _ = two_nodes
    async with ActorSystem(system_name, host="proc-a", remote=fast()) as a:
        rec = a.resolve(b.address + "/user/recorder")
        queue: asyncio.Queue[Any] = asyncio.Queue()
        a.spawn(lambda: Inbox(queue, watch=rec), "watcher")
        await rec.ask("sync", timeout=TIMEOUT)
        rec.stop()
        assert await asyncio.wait_for(queue.get(), TIMEOUT) == ("terminated", rec)
        with pytest.raises(ActorNotFoundError):
            await rec.ask("dump", timeout=TIMEOUT)


async def test_a_node_killed_with_sigkill_is_declared_down_within_10_s_by_default(
    nats: str, system_name: str
) -> None:
    victim = NodeProcess(nats, system_name, "victim")  # default failure detection
    try:
        remote = NatsRemote(servers=nats, bucket=bucket_of(system_name))  # default timings
        async with ActorSystem(system_name, host="survivor", remote=remote) as a:
            ups: asyncio.Queue[Any] = asyncio.Queue()
            downs: asyncio.Queue[Any] = asyncio.Queue()
            a.event_stream.subscribe(ups.put_nowait, MemberUp)
            a.event_stream.subscribe(downs.put_nowait, MemberDown)
            await victim.ready()
            while "victim" not in [m.host for m in a.cluster.members]:
                await asyncio.wait_for(ups.get(), TIMEOUT)
            rec = a.resolve(victim.address + "/user/recorder")
            queue: asyncio.Queue[Any] = asyncio.Queue()
            a.spawn(lambda: Inbox(queue, watch=rec), "watcher")
            for i in range(100):
                rec.tell(i)
            assert await rec.ask("dump", timeout=TIMEOUT) == list(range(100))
            victim.kill()
            killed = time.monotonic()
            assert await asyncio.wait_for(queue.get(), 10) == ("terminated", rec)
            down = await asyncio.wait_for(downs.get(), 10)
            assert down.member.host == "victim"
            assert time.monotonic() - killed < 10
            assert [m.host for m in a.cluster.members] == ["survivor"]
            assert queue.empty()
    finally:
        victim.kill()
