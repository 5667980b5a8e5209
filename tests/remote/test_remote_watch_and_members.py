"""Death watch across nodes and cluster membership (two systems in one process)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import msgspec
import nats as nats_client
import pytest
from remote_kit import TIMEOUT, Echo, Inbox, Recorder

from dovecote import ActorSystem, DeadLetter, DovecoteError
from dovecote.remote import Member, MemberDown, MemberUp, NodeAlreadyJoinedError
from dovecote.remote._subjects import node_prefix


def events(system: ActorSystem, kind: type) -> asyncio.Queue[Any]:
    queue: asyncio.Queue[Any] = asyncio.Queue()
    system.event_stream.subscribe(queue.put_nowait, kind)
    return queue


async def test_watching_a_remote_actor_delivers_terminated_exactly_once(
    nodes: tuple[ActorSystem, ActorSystem], system_name: str
) -> None:
    a, b = nodes
    echo = b.spawn(Echo, "echo")
    remote = a.resolve(echo.address)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    a.spawn(lambda: Inbox(queue, watch=remote), "w1")
    a.spawn(lambda: Inbox(queue, watch=a.resolve(echo.address)), "w2")
    assert await remote.ask("sync", timeout=TIMEOUT)  # the watches are registered by now
    await asyncio.sleep(0)
    echo.stop()
    got = [await asyncio.wait_for(queue.get(), TIMEOUT) for _ in range(2)]
    assert got == [("terminated", remote)] * 2
    assert not remote.is_alive
    b.spawn(Echo, "echo")  # a new incarnation at the same address
    await asyncio.sleep(0.3)
    assert queue.empty()  # exactly once: nothing more arrives


async def test_watching_an_actor_that_is_already_gone_delivers_at_once(
    nodes: tuple[ActorSystem, ActorSystem], system_name: str
) -> None:
    a, b = nodes
    queue: asyncio.Queue[Any] = asyncio.Queue()
    never = a.resolve(f"nats://{system_name}@node-b/user/never")
    a.spawn(lambda: Inbox(queue, watch=never), "w1")
    assert await asyncio.wait_for(queue.get(), 2.0) == ("terminated", never)
    nowhere = a.resolve(f"nats://{system_name}@node-zz/user/x")
    a.spawn(lambda: Inbox(queue, watch=nowhere), "w2")
    assert await asyncio.wait_for(queue.get(), 2.0) == ("terminated", nowhere)
    assert b.cluster.members  # (b stays up throughout)


async def test_a_node_that_leaves_terminates_its_watched_actors_and_leaves_members(
    system_name: str, fast: Callable[..., Any]
) -> None:
    async with ActorSystem(system_name, host="node-a", remote=fast()) as a:
        ups = events(a, MemberUp)
        downs = events(a, MemberDown)
        b = ActorSystem(system_name, host="node-b", remote=fast())
        await b.start()
        assert (await asyncio.wait_for(ups.get(), TIMEOUT)).member.host == "node-b"
        assert [m.host for m in a.cluster.members] == ["node-a", "node-b"]
        assert a.cluster.members[0] == Member("node-a", f"nats://{system_name}@node-a", "up")
        b.spawn(Echo, "echo")
        remote = a.resolve(f"nats://{system_name}@node-b/user/echo")
        queue: asyncio.Queue[Any] = asyncio.Queue()
        a.spawn(lambda: Inbox(queue, watch=remote), "w")
        await remote.ask("sync", timeout=TIMEOUT)
        await b.shutdown()
        assert await asyncio.wait_for(queue.get(), TIMEOUT) == ("terminated", remote)
        down = await asyncio.wait_for(downs.get(), TIMEOUT)
        assert down.member.host == "node-b"
        assert down.member.status == "down"
        assert [m.host for m in a.cluster.members] == ["node-a"]
        await asyncio.sleep(0.2)
        assert queue.empty()


async def test_a_second_live_node_with_the_same_host_is_refused(
    system_name: str, fast: Callable[..., Any]
) -> None:
    async with ActorSystem(system_name, host="node-a", remote=fast()):
        with pytest.raises(NodeAlreadyJoinedError):
            async with ActorSystem(system_name, host="node-a", remote=fast()):
                pass


async def test_cluster_without_remote_is_a_clear_error() -> None:
    async with ActorSystem("plain") as plain:
        with pytest.raises(DovecoteError, match="remote"):
            _ = plain.cluster
    with pytest.raises(DovecoteError, match="unknown remote scheme"):
        ActorSystem("plain", remote="carrier-pigeon://x")


async def test_garbage_from_the_wire_is_counted_dropped_and_never_breaks_the_node(
    system_name: str, fast: Callable[..., Any], nats: str
) -> None:
    async with ActorSystem(system_name, host="node-b", remote=fast()) as b:
        seen: list[DeadLetter] = []
        b.spawn(Echo, "echo")
        rec = b.spawn(Recorder, "rec")
        b.event_stream.subscribe(seen.append, DeadLetter)
        prefix = node_prefix(system_name, "node-b")
        nc = await nats_client.connect(nats)
        try:
            await nc.publish(prefix + ".user.echo", b"\xc1 not msgpack")
            await nc.publish(prefix + ".user.echo", b"\x93\x00\xc0\xc4\x03abc")  # bad body
            unknown = b"\x93\x00\xc0\xc4\x06" + b"\x92\xa4Nope\x80"[:6]
            await nc.publish(prefix + ".user.echo", unknown)
            await nc.publish(prefix + ".user.nobody", b"\x93\x00\xc0\xc4\x01\x01")
            await nc.publish(prefix + "._c", b"\xff")
            batch = msgspec.msgpack.encode(
                [
                    4,
                    [
                        ["/user/echo", 7, b"\xc1"],
                        ["/user/nobody", None, b"\x01"],
                        "junk",
                        ["/user/rec", None, b"\x02"],
                    ],
                ]
            )
            await nc.publish(prefix + "._b", batch)  # the good entry still gets through
            reply = await nc.request(prefix + ".user.echo", b"\x92\x01\xc4\x01\x05", timeout=2)
            assert reply.data  # the node still answers asks
        finally:
            await nc.close()
        reasons = sorted(d.reason for d in seen)
        assert reasons.count("undecodable") >= 5
        assert reasons.count("unknown-recipient") == 2
        assert b.dead_letters_count == len(seen)
        assert await rec.ask("dump", timeout=TIMEOUT) == [2]
        ref = b.resolve("/user/echo")
        assert await ref.ask("still fine", timeout=TIMEOUT) == ["echo", "still fine"]


async def test_systems_sharing_a_bucket_do_not_see_each_others_members(
    system_name: str, fast: Callable[..., Any]
) -> None:
    async with (
        ActorSystem(system_name, host="node-a", remote=fast()) as a,
        ActorSystem(system_name + ".b", host="node-a", remote=fast()) as dotted,
        ActorSystem(system_name, host="node-b", remote=fast()) as b,
    ):
        ups = events(a, MemberUp)
        while len(a.cluster.members) < 2:
            await asyncio.wait_for(ups.get(), TIMEOUT)
        assert [m.address for m in a.cluster.members] == [
            f"nats://{system_name}@node-a",
            f"nats://{system_name}@node-b",
        ]
        assert [m.host for m in dotted.cluster.members] == ["node-a"]
        assert b.cluster.members == a.cluster.members
