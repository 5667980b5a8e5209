"""How a node reads and writes its NATS connection: from the parser, straight to the
socket, a burst in one write, an answer behind the tells sent before it, and nats-py's
own way (its subscription callback, flusher and read loop) when its internals are not as
known."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from remote_kit import TIMEOUT, Echo, Recorder, Relay, spawn_on_b, tell_and_ask

from dovecote import Actor, ActorNotFoundError, ActorSystem, AskTimeoutError
from dovecote.remote import RemoteError, _nats_io, _nats_reader


def io_of(system: ActorSystem) -> Any:
    return system._remote.io  # type: ignore[union-attr]


async def test_the_node_subscription_is_served_from_the_parser_and_writes_go_direct(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    remote = spawn_on_b(nodes, Echo, "echo")
    assert io_of(a).delivering
    assert io_of(a).direct
    assert io_of(b).delivering
    assert io_of(b).direct
    for i in range(20):
        assert await remote.ask(i, timeout=TIMEOUT) == ["echo", i]
    # nothing went through nats-py's Msg queue of the node subscription
    connection: Any = b._remote._nc  # type: ignore[union-attr]
    node_subs = [s for s in connection._subs.values() if s.subject.endswith(".node-b.>")]
    assert [s._received for s in node_subs] == [0]


@pytest.fixture
def written(nodes: tuple[ActorSystem, ActorSystem]) -> Iterator[list[bytes]]:
    """Every write node-a makes to its socket, one bytes object per call."""
    transport: Any = nodes[0]._remote._nc._transport  # type: ignore[union-attr]
    calls: list[bytes] = []
    write, writelines = transport.write, transport.writelines
    transport.write = lambda data: (calls.append(bytes(data)), write(data))[1]
    transport.writelines = lambda lines: (calls.append(b"".join(lines)), writelines(lines))[1]
    yield calls
    transport.write, transport.writelines = write, writelines


async def test_asks_made_in_one_iteration_leave_in_at_most_two_writes(
    nodes: tuple[ActorSystem, ActorSystem], written: list[bytes]
) -> None:
    remote = spawn_on_b(nodes, Echo, "echo")
    await remote.ask("warm", timeout=TIMEOUT)
    written.clear()
    futures = [remote.ask(i, timeout=TIMEOUT) for i in range(16)]  # one iteration
    await asyncio.sleep(0)
    ours = [call for call in written if b".node-b.user.echo " in call]
    assert sum(call.count(b"PUB ") for call in ours) == 16
    assert len(ours) <= 2  # the first at once, the rest together at the end of the iteration
    assert await asyncio.gather(*futures) == [["echo", i] for i in range(16)]


async def test_an_answer_never_overtakes_the_tells_its_handler_sent_before_it(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    remote = spawn_on_b(nodes, Echo, "echo")
    recorder = a.spawn(Recorder, "rec")
    recorder_there = b.resolve(recorder.address)
    for i in range(30):
        # node-b's handler tells node-a's recorder, then answers: the tell arrives first
        assert await remote.ask(Relay(recorder_there, i), timeout=TIMEOUT) is None
        assert await recorder.ask("dump", timeout=TIMEOUT) == list(range(i + 1))


async def test_without_the_known_nats_py_internals_everything_takes_nats_pys_way(
    system_name: str, fast: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_nats_io, "_has_internals", lambda nc: False)
    monkeypatch.setattr(_nats_reader, "_stream_reader", lambda nc: None)
    async with (
        ActorSystem(system_name, host="node-a", remote=fast()) as a,
        ActorSystem(system_name, host="node-b", remote=fast()) as b,
    ):
        assert not io_of(a).delivering
        assert not io_of(a).direct
        assert not a._remote.reader.active  # type: ignore[union-attr]
        assert not a._remote.reader.install()  # type: ignore[union-attr]
        nc: Any = a._remote._nc  # type: ignore[union-attr]
        parse = nc._ps.parse
        parsed_in: set[Any] = set()

        async def recording(data: bytes = b"") -> None:
            parsed_in.add(asyncio.current_task())
            await parse(data)

        nc._ps.parse = recording
        b.spawn(Recorder, "rec")
        b.spawn(Echo, "echo")
        rec = a.resolve(b.resolve("/user/rec").address)
        assert await tell_and_ask(rec, 100, 10) == [i + 1 for i in range(0, 100, 10)]
        echo = a.resolve(b.resolve("/user/echo").address)
        with pytest.raises(RemoteError):
            await echo.ask("boom", timeout=TIMEOUT)
        with pytest.raises(ActorNotFoundError):
            await a.resolve(f"nats://{system_name}@node-b/user/nobody").ask(1, timeout=TIMEOUT)
        with pytest.raises(ActorNotFoundError):  # no responders
            await a.resolve(f"nats://{system_name}@nowhere/user/x").ask(1, timeout=TIMEOUT)
        assert parsed_in == {nc._reading_task}  # nats-py's read loop read every byte


class Stuck(Actor):
    """Never answers: its first handler waits forever, the rest queue behind it."""

    async def on_receive(self, message: Any) -> None:
        await asyncio.Event().wait()


async def test_asks_that_time_out_unanswered_leave_no_bookkeeping_behind(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    remote = spawn_on_b(nodes, Stuck, "stuck")
    for _ in range(10):
        wave = [remote.ask(i, timeout=0.02) for i in range(100)]
        outcomes = await asyncio.gather(*wave, return_exceptions=True)
        assert all(isinstance(outcome, AskTimeoutError) for outcome in outcomes)
    assert len(nodes[0]._remote._pending) <= 2 * 256  # type: ignore[union-attr]


class Big(Actor):
    """Answers ``n`` bytes."""

    def on_receive(self, message: Any) -> bytes:
        return b"x" * message


async def test_an_answer_over_max_payload_reaches_the_asker_as_a_remote_error(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    remote = spawn_on_b(nodes, Big, "big")
    with pytest.raises(RemoteError) as caught:
        await remote.ask(2_000_000, timeout=TIMEOUT)
    assert caught.value.type_name.endswith("MessageTooLargeError")
    assert await remote.ask(3, timeout=TIMEOUT) == b"xxx"  # the actor and the node carry on
