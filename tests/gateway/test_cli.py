"""``dovecote serve`` / ``status`` as a user runs them: flags, env vars, exit codes, signals."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from gateway_kit import Broker, run_cli, sqlite_url

from dovecote.durable import open_store


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (["--http", "off", "--grpc", "off"], {}, "every front end is off"),
        ([], {"DOVECOTE_HTTP": "off", "DOVECOTE_GRPC": "off"}, "every front end is off"),
        (["--http", "localhost"], {}, "--http: expected HOST:PORT or off"),
        (["--grpc", "127.0.0.1:99999"], {}, "out of range"),
        (["--sweep-interval", "5x"], {}, "--sweep-interval"),
        ([], {"DOVECOTE_SWEEP_INTERVAL": "0s"}, "must be positive"),
        (["--mcp", "tcp"], {}, "--mcp"),
        (["--db", "mysql://x"], {}, "unsupported store URL"),
        (["--max-body-bytes", "lots"], {}, "--max-body-bytes"),
        (["--token", ""], {}, "--token must not be empty"),
    ],
)
def test_a_malformed_flag_or_every_front_end_off_exits_2(
    args: list[str], env: dict[str, str], needle: str
) -> None:
    done = run_cli(["serve", *args], env=env)
    assert done.returncode == 2, done.stderr
    assert needle in done.stderr


def test_python_m_dovecote_and_the_help_name_every_flag() -> None:
    done = run_cli(["serve", "--help"])
    assert done.returncode == 0
    for flag in ("--db", "--http", "--grpc", "--mcp", "--sweep-interval", "--token", "-v"):
        assert flag in done.stdout


def test_env_vars_configure_serve(tmp_path: Path) -> None:
    broker = Broker.start(
        sqlite_url(tmp_path / "env.db"), grpc=False, env={"DOVECOTE_TOKEN": "from-env"}
    )
    try:
        assert set(broker.listening) == {"http"}
        assert httpx.get(f"{broker.http}/v1/mailboxes").status_code == 401
        auth = {"authorization": "Bearer from-env"}
        assert httpx.get(f"{broker.http}/v1/mailboxes", headers=auth).status_code == 200
    finally:
        assert broker.stop() == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_drains_the_in_flight_request_then_exits_0(tmp_path: Path, sig: int) -> None:
    broker = Broker.start(sqlite_url(tmp_path / "drain.db"), grpc=False)
    host, port = broker.listening["http"].rsplit(":", 1)
    body = b'{"from": "ops", "payload_base64": "aW4tZmxpZ2h0"}'
    head = (
        b"POST /v1/mailboxes/drain/send HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(head + body[:10])  # the request is in flight: half its body is here
        broker.proc.send_signal(sig)
        broker.wait_for_line("dovecote: draining")
        conn.sendall(body[10:])
        reply = conn.recv(65536)
    assert reply.startswith(b"HTTP/1.1 201"), reply
    assert broker.stop() == 0
    assert "dovecote: stopped" in "".join(broker.stderr_lines)


async def test_status_prints_mailboxes_and_counts_as_a_table(tmp_path: Path) -> None:
    db = sqlite_url(tmp_path / "status.db")
    async with open_store(db, sweep_interval=None) as store:
        await store.ensure_mailbox("alpha", capacity=7, ordering_mode="priority")
        await store.send("alpha", b"1", sender="ops")
        await store.send("alpha", b"2", sender="ops")
        await store.claim("alpha", claimer="w")
        await store.send("bravo", b"3", sender="ops")
    done = await asyncio.to_thread(run_cli, ["status", "--db", db])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == [
        "MAILBOX", "ORDERING", "CAPACITY", "PENDING", "CLAIMED", "COMMITTED", "DEAD"
    ]  # fmt: skip
    assert lines[1].split() == ["alpha", "priority", "7", "1", "1", "0", "0"]
    assert lines[2].split() == ["bravo", "fifo", "10000", "1", "0", "0", "0"]
    assert lines[3] == "2 mailboxes"


def test_importing_the_package_pulls_in_no_front_end_library() -> None:
    code = (
        "import sys, dovecote, dovecote.durable, dovecote.gateway\n"
        "heavy = {'starlette', 'uvicorn', 'grpc', 'mcp', 'click'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_sigterm_ends_an_mcp_server_whose_client_keeps_stdin_open(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dovecote", "serve", "--db", sqlite_url(tmp_path / "m.db"),
         "--http", "off", "--grpc", "off", "--mcp", "stdio"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.strip() == b"dovecote: ready":
            break
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    assert proc.stdout is not None
    assert proc.stdout.read() == b""  # nothing but protocol (none was asked for) on stdout
    assert proc.stdin is not None
    proc.stdin.close()


def test_sigterm_ends_open_stream_claims_instead_of_waiting_out_the_drain(tmp_path: Path) -> None:
    import grpc

    from dovecote.gateway._proto import load

    pb, services = load()
    broker = Broker.start(sqlite_url(tmp_path / "s.db"), "--drain-timeout", "120s", http=False)
    with grpc.insecure_channel(broker.grpc) as channel:
        stub = services.PostboxServiceStub(channel)
        stub.EnsureMailbox(pb.EnsureMailboxRequest(agent_id="idle"), timeout=10)
        stream = stub.StreamClaim(pb.StreamClaimRequest(agent_id="idle", claimer_id="c"))
        assert stream.initial_metadata() is not None  # the stream is open on the server
        # a drain that waited for the idle stream would take the whole 120 s
        assert broker.stop() == 0
        with pytest.raises(grpc.RpcError) as info:
            list(stream)
        assert info.value.code() in (grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE)
