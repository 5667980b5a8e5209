"""Two nodes (two systems on one NATS) in one process: tell, ask, refs, errors, ledger."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from remote_kit import TIMEOUT, AskVia, Echo, Inbox, Recorder, Relay, tell_and_ask

from dovecote import (
    ActorNotFoundError,
    ActorRef,
    ActorSystem,
    AskTimeoutError,
    DeadLetter,
    SerializationError,
)
from dovecote.remote import MessageTooLargeError, RemoteError, RemoteRef


def dead_letters(system: ActorSystem) -> list[DeadLetter]:
    seen: list[DeadLetter] = []
    system.event_stream.subscribe(seen.append, DeadLetter)
    return seen


async def test_addresses_use_the_nats_scheme_and_resolve_gives_an_equal_remote_ref(
    nodes: tuple[ActorSystem, ActorSystem], system_name: str
) -> None:
    a, b = nodes
    echo = b.spawn(Echo, "echo")
    assert echo.address == f"nats://{system_name}@node-b/user/echo"
    remote = a.resolve(echo.address)
    assert isinstance(remote, RemoteRef)
    assert (remote.name, remote.path, remote.address) == ("echo", "/user/echo", echo.address)
    assert remote == echo
    assert echo == remote
    assert hash(remote) == hash(echo)
    assert a.resolve(echo.address) == remote
    assert b.resolve(echo.address) is echo  # its own node's address is local


async def test_resolve_makes_no_round_trip(system_name: str, fast: Callable[..., Any]) -> None:
    async with ActorSystem(system_name, host="node-a", remote=fast()) as a:
        ghost = a.resolve(f"nats://{system_name}@nowhere/user/x")  # no such node: still a ref
        assert ghost.path == "/user/x"


async def test_ask_answers_and_tell_with_a_sender_replies_to_it(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    b.spawn(Echo, "echo")
    remote = a.resolve(b.resolve("/user/echo").address)
    assert await remote.ask("hi", timeout=TIMEOUT) == ["echo", "hi"]
    queue: asyncio.Queue[Any] = asyncio.Queue()
    inbox = a.spawn(lambda: Inbox(queue), "inbox")
    remote.tell("ping", sender=inbox)
    message, sender = await asyncio.wait_for(queue.get(), TIMEOUT)
    assert message == ["echo", "ping"]
    assert sender == remote  # context.sender on node-a is the remote echo


async def test_refs_inside_messages_arrive_usable(nodes: tuple[ActorSystem, ActorSystem]) -> None:
    a, b = nodes
    b.spawn(Echo, "echo")
    remote = a.resolve(b.resolve("/user/echo").address)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    inbox = a.spawn(lambda: Inbox(queue), "inbox")
    remote.tell(Relay(inbox, "via b"))  # node-b tells node-a's inbox, sender = its echo
    message, sender = await asyncio.wait_for(queue.get(), TIMEOUT)
    assert (message, sender) == ("via b", remote)


async def test_asks_from_a_remote_actor(nodes: tuple[ActorSystem, ActorSystem]) -> None:
    a, b = nodes
    a.spawn(Echo, "echo-a")
    b.spawn(Echo, "echo-b")
    echo_b = a.resolve(b.resolve("/user/echo-b").address)
    echo_a_address = a.resolve("/user/echo-a").address
    # node-b's actor asks node-a's actor, and answers our ask with that answer
    answer = await echo_b.ask(AskVia(b.resolve(echo_a_address), "x"), timeout=TIMEOUT)
    assert answer == ["echo", "x"]


async def test_a_handler_exception_arrives_as_remote_error(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    b.spawn(Echo, "echo")
    remote = a.resolve(b.resolve("/user/echo").address)
    with pytest.raises(RemoteError) as caught:
        await remote.ask("boom", timeout=TIMEOUT)
    assert caught.value.type_name == "builtins.KeyError"
    assert caught.value.message == "'boom'"
    assert "KeyError" in caught.value.remote_traceback
    assert "on_receive" in caught.value.remote_traceback


async def test_ask_to_an_unknown_actor_on_a_live_node_fails_promptly(
    nodes: tuple[ActorSystem, ActorSystem], system_name: str
) -> None:
    a, b = nodes
    seen = dead_letters(b)
    ref = a.resolve(f"nats://{system_name}@node-b/user/never")
    with pytest.raises(ActorNotFoundError):
        await asyncio.wait_for(ref.ask("x", timeout=30), 2.0)
    assert [d.reason for d in seen] == ["unknown-recipient"]


async def test_ask_to_a_node_that_is_not_there_is_no_responders(
    nodes: tuple[ActorSystem, ActorSystem], system_name: str
) -> None:
    a, _ = nodes
    ref = a.resolve(f"nats://{system_name}@node-gone/user/x")
    with pytest.raises(ActorNotFoundError, match="no responders"):
        await asyncio.wait_for(ref.ask("x", timeout=30), 2.0)


async def test_ask_timeout_and_bad_timeouts(nodes: tuple[ActorSystem, ActorSystem]) -> None:
    a, b = nodes
    b.spawn(Echo, "echo")
    remote = a.resolve(b.resolve("/user/echo").address)
    with pytest.raises(AskTimeoutError):
        await remote.ask(["sleep", 1.0], timeout=0.1)
    for bad in (0, -1, float("nan"), True, "1"):
        with pytest.raises(ValueError):
            remote.ask("x", timeout=bad)  # type: ignore[arg-type]
    assert await remote.ask(["sleep", 0.01], timeout=None) == "slept"


async def test_tells_and_asks_from_one_sender_keep_their_order(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    b.spawn(Recorder, "rec")
    remote = a.resolve(b.resolve("/user/rec").address)
    counts = await tell_and_ask(remote, 300, 10)
    assert counts == [i + 1 for i in range(0, 300, 10)]  # each ask saw every earlier tell
    assert await remote.ask("dump", timeout=TIMEOUT) == list(range(300))


async def test_unregistered_message_type_raises_at_the_tell_site_and_sends_nothing(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    b.spawn(Recorder, "rec")
    remote = a.resolve(b.resolve("/user/rec").address)

    class NotRegistered:
        pass

    with pytest.raises(SerializationError):
        remote.tell(NotRegistered())
    with pytest.raises(SerializationError):
        remote.ask(NotRegistered())
    remote.tell("after")
    assert await remote.ask("dump", timeout=TIMEOUT) == ["after"]


async def test_a_message_over_max_payload_raises_a_typed_error(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    b.spawn(Recorder, "rec")
    remote = a.resolve(b.resolve("/user/rec").address)
    with pytest.raises(MessageTooLargeError):
        remote.tell(b"x" * 2_000_000)
    with pytest.raises(MessageTooLargeError):
        remote.ask(b"x" * 2_000_000)
    assert await remote.ask("dump", timeout=TIMEOUT) == []


async def test_names_with_dots_and_odd_characters_stay_one_subject_token(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    b.spawn(Recorder, "a.b")
    b.spawn(Recorder, "a")  # a parent-looking sibling must not get a.b's mail
    b.resolve("/user/a").tell("for a")
    b.spawn(Recorder, "x~y-z_1")
    dotted = a.resolve(b.resolve("/user/a.b").address)
    dotted.tell("for a.b")
    assert await dotted.ask("dump", timeout=TIMEOUT) == ["for a.b"]
    plain = a.resolve(b.resolve("/user/a").address)
    assert await plain.ask("dump", timeout=TIMEOUT) == ["for a"]
    odd = a.resolve(b.resolve("/user/x~y-z_1").address)
    odd.tell(1)
    assert await odd.ask("dump", timeout=TIMEOUT) == [1]


async def test_remote_stop_is_graceful_and_context_stop_is_immediate(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    b.spawn(Recorder, "rec")
    queue: asyncio.Queue[Any] = asyncio.Queue()
    remote = a.resolve(b.resolve("/user/rec").address)
    a.spawn(lambda: Inbox(queue, watch=remote), "watcher")
    remote.tell(1)
    remote.stop()
    assert await asyncio.wait_for(queue.get(), TIMEOUT) == ("terminated", remote)
    b.spawn(Recorder, "rec2")
    second = a.resolve(b.resolve("/user/rec2").address)
    a.spawn(lambda: Inbox(queue, watch=second), "watcher2")
    a.stop(second)  # system.stop of a remote ref: TERMINATE, not a pill
    assert await asyncio.wait_for(queue.get(), TIMEOUT) == ("terminated", second)
    with pytest.raises(ActorNotFoundError):
        b.resolve("/user/rec2")
    assert isinstance(second, ActorRef)


async def test_a_burst_bigger_than_the_outbound_buffer_arrives_once_each_in_order(
    system_name: str, fast: Callable[..., Any]
) -> None:
    async with (
        ActorSystem(system_name, host="node-a", remote=fast(pending_size=64 * 1024)) as a,
        ActorSystem(system_name, host="node-b", remote=fast()) as b,
    ):
        b.spawn(Recorder, "rec")
        remote = a.resolve(b.resolve("/user/rec").address)
        padding = "x" * 100
        for i in range(3000):  # ~400 KB without yielding: nats-py must flush mid-burst
            remote.tell([i, padding])
        seen = await remote.ask("dump", timeout=30)
        assert [item[0] for item in seen] == list(range(3000))


async def test_tell_and_ask_from_another_thread(nodes: tuple[ActorSystem, ActorSystem]) -> None:
    a, b = nodes
    b.spawn(Recorder, "rec")
    remote = a.resolve(b.resolve("/user/rec").address)

    def from_thread() -> Any:
        remote.tell("from a thread")
        return remote.ask("dump", timeout=TIMEOUT).result(TIMEOUT)  # a concurrent Future

    assert await asyncio.to_thread(from_thread) == ["from a thread"]


async def test_awaiting_a_remote_stop_waits_until_the_actor_is_gone(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    b.spawn(Recorder, "rec")
    remote = a.resolve(b.resolve("/user/rec").address)
    remote.tell("before")
    await asyncio.wait_for(remote.stop(), TIMEOUT)
    assert not remote.is_alive
    with pytest.raises(ActorNotFoundError):
        b.resolve("/user/rec")
    await asyncio.wait_for(remote.stop(), TIMEOUT)  # stopping a stopped actor: done at once


async def test_one_node_subscription_whatever_the_number_of_actors(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    _, b = nodes
    connection: Any = b._remote._nc  # type: ignore[union-attr]
    before = len(connection._subs)
    refs = [b.spawn(Recorder, f"r{i}") for i in range(50)]
    await refs[-1].ask("dump", timeout=TIMEOUT)
    assert len(connection._subs) == before


async def test_a_remote_tell_creates_no_task_and_does_not_await(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    b.spawn(Recorder, "rec")
    remote = a.resolve(b.resolve("/user/rec").address)
    await remote.ask("dump", timeout=TIMEOUT)
    tasks = len(asyncio.all_tasks())
    for i in range(1000):
        assert remote.tell(i) is None  # synchronous: nothing to await
    assert len(asyncio.all_tasks()) == tasks
    assert await remote.ask("dump", timeout=TIMEOUT) == list(range(1000))
