"""Every snippet of docs/broker.md runs: the serve commands start and drain, the curl
session and the Python grpcio client run against a started server, ``dovecote status``
prints the table shown, the MCP client config launches a working MCP server.

Addresses in the snippets (127.0.0.1:8080 / :50051, /var/lib/dovecote) are swapped for a
free port and a temporary directory; nothing else is changed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from gateway_kit import Broker, run_cli, serve_command, sqlite_url
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

DOC = Path(__file__).resolve().parents[2] / "docs" / "broker.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


def blocks(lang: str) -> list[str]:
    return [body for kind, body in BLOCK.findall(DOC.read_text()) if kind == lang]


def commands(block: str) -> list[str]:
    """Shell commands of a block: comments dropped, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", block)
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def localise(text: str, tmp: Path, http: str = "127.0.0.1:0", grpc: str = "127.0.0.1:0") -> str:
    text = text.replace("/var/lib/dovecote", str(tmp))
    text = re.sub(r"(127\.0\.0\.1|0\.0\.0\.0):8080", http, text)
    return text.replace("127.0.0.1:50051", grpc)


def test_every_snippet_kind_is_covered() -> None:
    kinds = [kind for kind, _ in BLOCK.findall(DOC.read_text())]
    assert set(kinds) == {"sh", "text", "python", "json"}


def test_the_serve_commands_start_and_drain(tmp_path: Path) -> None:
    (serve_block,) = [b for b in blocks("sh") if b.lstrip().startswith("# In-memory")]
    for line in commands(serve_block):
        args = shlex.split(localise(line, tmp_path))
        assert args[:2] == ["dovecote", "serve"]
        if any(a.startswith("postgresql://") for a in args):
            from gateway_kit import postgres_test_url

            url = postgres_test_url()
            args = [url if a.startswith("postgresql://") else a for a in args]
        if "--http" not in args:
            args += ["--http", "127.0.0.1:0"]
        if "--grpc" not in args:
            args += ["--grpc", "127.0.0.1:0"]
        proc = subprocess.Popen(
            serve_command(*args[2:]), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stderr is not None
        for out in proc.stderr:
            if out.strip() == "dovecote: ready":
                break
        else:
            pytest.fail(f"{line!r} did not start: exit {proc.wait()}")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, line


def test_the_curl_session_and_the_status_table(tmp_path: Path) -> None:
    db = sqlite_url(tmp_path / "docs.db")
    broker = Broker.start(db, grpc=False)
    try:
        session = [b for b in blocks("sh") if b.startswith(("curl -X POST", "ID="))]
        assert len(session) == 2
        for block in session:
            done = subprocess.run(
                ["bash", "-ec", localise(block, tmp_path, http=broker.listening["http"])],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert '"error"' not in done.stdout, done.stdout
    finally:
        assert broker.stop() == 0
    (table,) = blocks("text")
    status = run_cli(["status", "--db", db])
    assert status.returncode == 0, status.stderr
    assert status.stdout == table


def test_the_auth_snippet(tmp_path: Path) -> None:
    (auth,) = [b for b in blocks("sh") if "Authorization: Bearer" in b]
    broker = Broker.start(sqlite_url(tmp_path / "auth.db"), "--token", "t0k", grpc=False)
    command = localise(auth, tmp_path, http=broker.listening["http"]).strip() + " -sf"
    try:
        done = subprocess.run(
            ["bash", "-ec", command],
            capture_output=True, text=True, timeout=30, env={**os.environ, "DOVECOTE_TOKEN": "t0k"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == []
    finally:
        assert broker.stop() == 0


def test_the_python_grpc_client(tmp_path: Path) -> None:
    (code,) = blocks("python")
    broker = Broker.start(sqlite_url(tmp_path / "grpc.db"), http=False)
    try:
        done = subprocess.run(
            [sys.executable, "-c", localise(code, tmp_path, grpc=broker.grpc)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout == "b'next'\n"
    finally:
        assert broker.stop() == 0


async def test_the_mcp_client_config(tmp_path: Path) -> None:
    (config,) = blocks("json")
    server = json.loads(localise(config, tmp_path))["mcpServers"]["dovecote"]
    assert server["command"] == "dovecote"
    params = StdioServerParameters(command=sys.executable, args=["-m", "dovecote", *server["args"]])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert len((await session.list_tools()).tools) == 11
