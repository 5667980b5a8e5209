"""Start ``dovecote serve`` as a real subprocess and learn where it listens.

The server announces ``dovecote: http listening on HOST:PORT`` (and grpc, mcp) then
``dovecote: ready`` on stderr; ``Broker.start`` waits for that line (with a timeout, no
sleeps), so every test gets a server on OS-chosen free ports.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest

START_TIMEOUT = 30.0
STOP_TIMEOUT = 20.0
_LISTEN = re.compile(r"^dovecote: (\w+) listening on (\S+)$")


def serve_command(*flags: str) -> list[str]:
    """``python -m dovecote serve FLAGS`` with this interpreter."""
    return [sys.executable, "-m", "dovecote", "serve", *flags]


def unique(prefix: str = "t") -> str:
    """A mailbox name no other test (or helper sharing the database) uses."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


class Broker:
    """A running ``dovecote serve``; ``http`` is a base URL, ``grpc`` a ``host:port``."""

    def __init__(self, proc: subprocess.Popen[bytes], listening: dict[str, str]) -> None:
        self.proc = proc
        self.listening = listening
        self.stderr_lines: list[str] = []
        self._logged = threading.Condition()

    def wait_for_line(self, text: str, timeout: float = 10.0) -> None:
        """Block until the server wrote a stderr line containing ``text`` (woken per line)."""
        with self._logged:
            if not self._logged.wait_for(
                lambda: any(text in line for line in self.stderr_lines), timeout
            ):
                raise TimeoutError(f"dovecote serve never logged {text!r}")

    @property
    def http(self) -> str:
        return f"http://{self.listening['http']}"

    @property
    def grpc(self) -> str:
        return self.listening["grpc"]

    @classmethod
    def start(
        cls,
        db: str,
        *extra: str,
        http: bool = True,
        grpc: bool = True,
        env: dict[str, str] | None = None,
    ) -> Broker:
        flags: list[str] = ["--db", db, "--sweep-interval", "off"]
        flags += ["--http", "127.0.0.1:0" if http else "off"]
        flags += ["--grpc", "127.0.0.1:0" if grpc else "off"]
        proc = subprocess.Popen(
            serve_command(*flags, *extra),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        lines: queue.Queue[str | None] = queue.Queue()
        broker = cls(proc, {})
        threading.Thread(target=_pump, args=(proc, lines, broker), daemon=True).start()
        while True:
            try:
                line = lines.get(timeout=START_TIMEOUT)
            except queue.Empty:
                proc.kill()
                raise TimeoutError("dovecote serve did not become ready") from None
            if line is None:
                raise RuntimeError(
                    f"dovecote serve exited ({proc.wait()}): {''.join(broker.stderr_lines)}"
                )
            m = _LISTEN.match(line.strip())
            if m:
                broker.listening[m[1]] = m[2]
            if line.strip() == "dovecote: ready":
                return broker

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send ``sig`` and wait for the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise

    def kill(self) -> None:
        """SIGKILL: no drain, no close (the crash tests)."""
        self.proc.kill()
        self.proc.wait()


def _pump(proc: subprocess.Popen[bytes], lines: queue.Queue[str | None], broker: Broker) -> None:
    assert proc.stderr is not None
    for raw in proc.stderr:
        line = raw.decode(errors="replace")
        with broker._logged:
            broker.stderr_lines.append(line)
            broker._logged.notify_all()
        lines.put(line)
    lines.put(None)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def run_cli(
    args: Sequence[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m dovecote ARGS`` to completion."""
    return subprocess.run(
        [sys.executable, "-m", "dovecote", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def _postgres_url() -> str:
    from service_urls import postgres_url

    url = postgres_url()
    if importlib.util.find_spec("dovecote.durable._postgres") is None:
        pytest.skip(
            "the PostgreSQL backend (dovecote.durable.PostgresStore, branch store-pg) is not "
            "merged into this branch yet"
        )
    return url


def _drop_schema(url: str, schema: str) -> None:
    import asyncpg

    async def drop() -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()

    asyncio.run(drop())


_SCHEMAS: list[tuple[str, str]] = []


def postgres_test_url() -> str:
    """A PostgreSQL store URL in a fresh schema, dropped when the session ends."""
    url = _postgres_url()
    schema = f"dovecote_gw_{uuid.uuid4().hex[:12]}"
    _SCHEMAS.append((url, schema))
    return f"{url}?schema={schema}"
