"""How a node reads its socket: nats-py's parser runs in the iteration the bytes arrive
(not in its read-loop task), a parse that waits keeps the stream in order behind it, and
a protocol error still makes nats-py reconnect. (Without the known internals nats-py reads
as usual: test_remote_wire_io.)"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from remote_kit import TIMEOUT, Echo, Recorder, Relay, spawn_on_b

from dovecote import ActorSystem
from dovecote.remote import _nats_reader


def reader_of(system: ActorSystem) -> Any:
    return system._remote.reader  # type: ignore[union-attr]


def client_of(system: ActorSystem) -> Any:
    return system._remote._nc  # type: ignore[union-attr]


def parsing_tasks(system: ActorSystem) -> list[asyncio.Task[Any] | None]:
    """The task each later parse of node bytes runs in (None: straight from the socket)."""
    parser = client_of(system)._ps
    parse = parser.parse
    tasks: list[asyncio.Task[Any] | None] = []

    async def recording(data: bytes = b"") -> None:
        if data:
            tasks.append(asyncio.current_task())
        await parse(data)

    parser.parse = recording
    return tasks


async def test_bytes_are_parsed_as_they_arrive_not_in_nats_pys_read_task(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, b = nodes
    assert reader_of(a).active
    assert reader_of(b).active
    remote = spawn_on_b(nodes, Echo, "echo")
    tasks_a, tasks_b = parsing_tasks(a), parsing_tasks(b)
    for i in range(20):
        assert await remote.ask(i, timeout=TIMEOUT) == ["echo", i]
    assert tasks_a
    assert tasks_b
    assert set(tasks_a) == {None}
    assert set(tasks_b) == {None}
    assert not client_of(a)._reading_task.done()  # it still waits, for the end of the stream


@pytest.mark.parametrize("backlog_limit", [1 << 20, 0], ids=["queued", "socket-paused"])
async def test_bytes_behind_a_parse_that_waits_are_parsed_after_it_in_order(
    nodes: tuple[ActorSystem, ActorSystem],
    monkeypatch: pytest.MonkeyPatch,
    backlog_limit: int,
) -> None:
    monkeypatch.setattr(_nats_reader, "_BACKLOG_LIMIT", backlog_limit)
    a, b = nodes
    remote = spawn_on_b(nodes, Echo, "echo")
    recorder = a.spawn(Recorder, "rec")
    recorder_there = b.resolve(recorder.address)
    assert await remote.ask("warm", timeout=TIMEOUT) == ["echo", "warm"]
    nc, reader = client_of(a), reader_of(a)
    waiting, queued, release = asyncio.Event(), asyncio.Event(), asyncio.Event()
    process_pong = nc._process_pong

    async def waiting_pong() -> None:
        waiting.set()
        await release.wait()
        await process_pong()

    feed = reader._reader.feed_data

    def feed_and_tell(data: bytes) -> None:
        feed(data)
        if reader._backlog_size:
            queued.set()

    nc._process_pong = waiting_pong
    reader._reader.feed_data = feed_and_tell
    flushing = asyncio.ensure_future(nc.flush(timeout=TIMEOUT))  # PING: its PONG will wait
    await asyncio.wait_for(waiting.wait(), TIMEOUT)
    assert reader._parsing
    # node-b's handler tells node-a's recorder, then answers: all of it queues on node-a
    asks = [remote.ask(Relay(recorder_there, i), timeout=TIMEOUT) for i in range(50)]
    await asyncio.wait_for(queued.wait(), TIMEOUT)  # bytes wait behind the parse
    assert reader._paused is (backlog_limit == 0)
    assert not any(ask.done() for ask in map(asyncio.ensure_future, asks))
    release.set()
    assert await asyncio.gather(*asks) == [None] * 50
    await flushing
    assert await recorder.ask("dump", timeout=TIMEOUT) == list(range(50))
    assert not reader._parsing
    assert not reader._paused
    assert reader.active


async def test_a_protocol_error_makes_nats_py_reconnect_and_the_new_socket_is_read_inline(
    nodes: tuple[ActorSystem, ActorSystem],
) -> None:
    a, _ = nodes
    remote = spawn_on_b(nodes, Echo, "echo")
    assert await remote.ask(1, timeout=TIMEOUT) == ["echo", 1]
    transport: Any = a._remote
    old = reader_of(a)._reader
    old.feed_data(b"NOT-NATS\r\n")  # as if the server had sent it
    await asyncio.wait_for(transport.wait_connected(False), TIMEOUT)
    await asyncio.wait_for(transport.wait_connected(True), TIMEOUT)
    assert await remote.ask(2, timeout=TIMEOUT) == ["echo", 2]
    assert reader_of(a).active  # (hooked once the new connection's read loop was idle)
    assert reader_of(a)._reader is not old
    tasks = parsing_tasks(a)
    assert await remote.ask(3, timeout=TIMEOUT) == ["echo", 3]
    assert set(tasks) == {None}


async def test_bytes_that_arrive_once_nats_py_stopped_reading_stay_unread(nats: str) -> None:
    import nats as nats_client

    nc = await nats_client.connect(nats, allow_reconnect=False)
    other = await nats_client.connect(nats)
    try:
        got: list[bytes] = []

        async def on_msg(msg: Any) -> None:
            got.append(msg.data)

        reader = _nats_reader.InlineReader(asyncio.get_running_loop(), nc)
        sub = await nc.subscribe("inline.reader.stopped", cb=on_msg)
        await nc.flush()
        assert reader.install()
        await nc.flush(timeout=TIMEOUT)  # a round trip: the read loop was idle, it is hooked
        assert reader.active
        await other.publish("inline.reader.stopped", b"one")
        await other.flush()
        await nc.flush(timeout=TIMEOUT)
        assert sub._pending_queue.qsize() + len(got) == 1
        # nats-py stops reading (as it does first when it reconnects): what comes now stays
        nc._reading_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await nc._reading_task
        stream = reader._reader
        fed = asyncio.Event()
        feed = stream.feed_data

        def feed_and_tell(data: bytes) -> None:
            feed(data)
            fed.set()

        stream.feed_data = feed_and_tell
        await other.publish("inline.reader.stopped", b"two")
        await other.flush()
        await asyncio.wait_for(fed.wait(), TIMEOUT)
        assert b"two" in bytes(stream._buffer)  # the socket's bytes wait in the reader
        assert sub._pending_queue.qsize() + len(got) == 1
    finally:
        await other.close()
        with contextlib.suppress(Exception):
            await nc.close()
