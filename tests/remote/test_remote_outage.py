"""A node that loses its NATS server: tells become dead letters, asks fail typed, and the
node reconnects (nats-py's reconnect) when the server is back. Runs its own nats-server."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from remote_kit import TIMEOUT, Recorder

from dovecote import ActorSystem, DeadLetter
from dovecote.remote import NatsRemote, RemoteUnavailableError

SERVER = shutil.which("nats-server")
pytestmark = pytest.mark.skipif(SERVER is None, reason="needs the nats-server binary on PATH")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    def __init__(self, port: int, store: Path, *extra: str) -> None:
        self.port, self.store, self.extra = port, store, extra
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert SERVER is not None
        self.proc = subprocess.Popen(
            [
                SERVER,
                "-a",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-js",
                "-sd",
                str(self.store),
                *self.extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None

    async def up(self) -> None:
        for _ in range(100):
            try:
                await asyncio.open_connection("127.0.0.1", self.port)
                return
            except OSError:
                await asyncio.sleep(0.05)
        raise AssertionError("nats-server did not start")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(free_port(), tmp_path / "js")
    srv.start()
    yield srv
    srv.stop()


async def test_tells_during_an_outage_are_dead_letters_and_the_node_reconnects(
    server: Server,
) -> None:
    await server.up()
    url = f"nats://127.0.0.1:{server.port}"
    remote = NatsRemote(
        servers=url, heartbeat_interval=0.2, down_after=1.5, reconnect_time_wait=0.1
    )
    async with (
        ActorSystem("outage", host="node-a", remote=remote) as a,
        ActorSystem("outage", host="node-b", remote=remote) as b,
    ):
        b.spawn(Recorder, "rec")
        rec = a.resolve("nats://outage@node-b/user/rec")
        assert await rec.ask(0, timeout=TIMEOUT) == 1
        letters: list[DeadLetter] = []
        a.event_stream.subscribe(letters.append, DeadLetter)
        transport: Any = a._remote
        server.stop()
        await asyncio.wait_for(transport.wait_connected(False), TIMEOUT)
        rec.tell("lost")
        assert [(d.message, d.reason, d.recipient) for d in letters] == [
            ("lost", "remote-unavailable", rec)
        ]
        with pytest.raises(RemoteUnavailableError):
            await rec.ask("x", timeout=TIMEOUT)
        server.start()
        await asyncio.wait_for(transport.wait_connected(True), 15)
        await asyncio.wait_for(b._remote.wait_connected(True), 15)  # type: ignore[union-attr]
        rec.tell("after")
        assert await rec.ask("dump", timeout=TIMEOUT) == [0, "after"]


async def test_credentials_are_passed_to_nats(tmp_path: Path) -> None:
    srv = Server(free_port(), tmp_path / "js", "--auth", "s3cret")
    srv.start()
    try:
        await srv.up()
        url = f"nats://127.0.0.1:{srv.port}"
        async with ActorSystem(
            "auth", host="node-a", remote=NatsRemote(servers=url, token="s3cret")
        ) as a:
            assert [m.host for m in a.cluster.members] == ["node-a"]
        with pytest.raises(Exception, match=r"(?i)authorization"):
            async with ActorSystem(
                "auth",
                host="node-b",
                remote=NatsRemote(
                    servers=url,
                    max_reconnect_attempts=0,
                    connect_options={"allow_reconnect": False},
                ),
            ):
                pass
    finally:
        srv.stop()
