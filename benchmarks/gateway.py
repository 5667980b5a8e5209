"""``python -m benchmarks.gateway``: the broker over HTTP and gRPC beside the store in-process.

    python -m benchmarks.gateway                    # 3,000 ops per row, 32 concurrent clients
    python -m benchmarks.gateway --size 500 --rows store,http
    python -m benchmarks.gateway --json             # one JSON object per row

Rows, each on a fresh SQLite file (the server's default durability, ``synchronous=FULL``):

* ``store``: ``SqliteStore`` called in-process by 32 concurrent asyncio tasks;
* ``http``: a ``dovecote serve`` subprocess driven by an in-repo asyncio HTTP/1.1 client,
  32 keep-alive connections;
* ``grpc``: the same server driven by ``grpc.aio``, 32 concurrent calls over 4 channels;
* ``grpc-h2load``: the same gRPC calls from ``h2load`` (C, far cheaper than a Python client
  on the cores the server shares; ``send`` only; skipped when h2load is not installed).

Workloads: ``send`` (one message per op) and ``claim+commit`` (claim one, commit it; the
mailbox is filled first, untimed, and is ``unordered`` so claims do not queue behind one
sender). Figures: ops/s, p50/p99 latency per op, and CPU per op (the server process's and
the client's, from /proc and ``time.process_time``). The target of issue 11: HTTP and gRPC
send at 32 connections >= 0.5x the in-process store rate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from . import _h2load
from ._measure import percentile
from ._plan import TIMES

ROWS = ("store", "http", "grpc", "grpc-h2load")
WORKLOADS = ("send", "claim+commit")
_TICK = os.sysconf("SC_CLK_TCK")
_PAYLOAD = b"x" * 64


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


async def _drive(
    size: int, concurrency: int, op: Callable[[int, int], Awaitable[None]]
) -> dict[str, float]:
    """Run ``op(worker, i)`` for i in range(size) on ``concurrency`` workers; time each op."""
    latencies: list[float] = []
    counter = iter(range(size))

    async def worker(w: int) -> None:
        for i in counter:
            t0 = time.perf_counter()
            await op(w, i)
            latencies.append(time.perf_counter() - t0)

    cpu0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    latencies.sort()
    return {
        "ops_per_s": size / elapsed,
        "p50_us": percentile(latencies, 50) * 1e6,
        "p99_us": percentile(latencies, 99) * 1e6,
        "client_cpu_us": cpu / size * 1e6,
        "seconds": elapsed,
    }


# --- in-process -----------------------------------------------------------------------


async def _store_row(db: str, workload: str, size: int, concurrency: int) -> dict[str, float]:
    from dovecote.durable import open_store

    async with open_store(db, sweep_interval=None) as store:
        await store.ensure_mailbox("bench", ordering_mode="unordered", capacity=10**9)
        if workload == "send":

            async def op(w: int, i: int) -> None:
                await store.send("bench", _PAYLOAD, sender=f"s{w}")
        else:
            for i in range(size):
                await store.send("bench", _PAYLOAD, sender=f"s{i % 32}")

            async def op(w: int, i: int) -> None:
                claim = await store.claim("bench", claimer=f"w{w}")
                assert claim is not None
                await store.commit(claim.message.message_id, claimer=f"w{w}", checkpoint_token="t")

        result = await _drive(size, concurrency, op)
    result["server_cpu_us"] = 0.0  # the store runs in the client process: all of it is client
    return result


# --- a started server -----------------------------------------------------------------


class _Server:
    def __init__(self, db: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dovecote", "serve", "--db", db, "--http", "127.0.0.1:0",
             "--grpc", "127.0.0.1:0", "--sweep-interval", "off"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.addresses: dict[str, str] = {}
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode().strip()
            m = re.match(r"dovecote: (\w+) listening on (\S+)", line)
            if m:
                self.addresses[m[1]] = m[2]
            if line == "dovecote: ready":
                break
        else:
            raise RuntimeError(f"dovecote serve exited with {self.proc.wait()}")

    def cpu(self) -> float:
        return _cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


class _HttpConnection:
    """A minimal keep-alive HTTP/1.1 client: just enough to load the server cheaply."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, address: str) -> _HttpConnection:
        host, port = address.rsplit(":", 1)
        return cls(*await asyncio.open_connection(host, int(port)))

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.writer.write(
            b"POST %s HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (path.encode(), len(body), body)
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        m = re.search(rb"(?i)content-length: *(\d+)", head)
        data = await self.reader.readexactly(int(m[1])) if m else b""
        return status, data

    def close(self) -> None:
        self.writer.close()


async def _http_row(
    server: _Server, workload: str, size: int, concurrency: int
) -> dict[str, float]:
    address = server.addresses["http"]
    conns = [await _HttpConnection.open(address) for _ in range(concurrency)]
    send_body = (
        b'{"from": "s%d", "payload_base64": "' + __import__("base64").b64encode(_PAYLOAD) + b'"}'
    )
    await conns[0].post(
        "/v1/mailboxes/bench", b'{"ordering_mode": "unordered", "capacity": 1000000000}'
    )

    async def send(w: int, i: int) -> None:
        status, _ = await conns[w].post("/v1/mailboxes/bench/send", send_body % w)
        assert status == 201, status

    async def claim_commit(w: int, i: int) -> None:
        status, body = await conns[w].post(
            "/v1/mailboxes/bench/claim", b'{"claimer_id": "w%d"}' % w
        )
        assert status == 200, status
        mid = json.loads(body)["message"]["message_id"]
        commit = b'{"claimer_id": "w%d", "checkpoint_token": "t"}' % w
        status, _ = await conns[w].post(f"/v1/messages/{mid}/commit", commit)
        assert status == 204, status

    if workload != "send":
        await _drive(size, concurrency, send)  # fill, untimed
    cpu0 = server.cpu()
    result = await _drive(size, concurrency, send if workload == "send" else claim_commit)
    result["server_cpu_us"] = (server.cpu() - cpu0) / size * 1e6
    for c in conns:
        c.close()
    return result


async def _grpc_row(
    server: _Server, workload: str, size: int, concurrency: int
) -> dict[str, float]:
    import grpc

    from dovecote.gateway._proto import load

    pb, services = load()
    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [
        grpc.aio.insecure_channel(server.addresses["grpc"], options=options) for _ in range(4)
    ]
    stubs = [services.PostboxServiceStub(ch) for ch in channels]
    await stubs[0].EnsureMailbox(
        pb.EnsureMailboxRequest(agent_id="bench", ordering_mode="unordered", capacity=10**9)
    )

    async def send(w: int, i: int) -> None:
        await stubs[w % 4].SendMessage(
            pb.SendMessageRequest(to_agent="bench", from_agent=f"s{w}", payload=_PAYLOAD)
        )

    async def claim_commit(w: int, i: int) -> None:
        stub = stubs[w % 4]
        held = await stub.Claim(pb.ClaimRequest(agent_id="bench", claimer_id=f"w{w}"))
        await stub.Commit(
            pb.CommitRequest(
                message_id=held.claim.message.message_id, claimer_id=f"w{w}", checkpoint_token="t"
            )
        )

    if workload != "send":
        await _drive(size, concurrency, send)
    cpu0 = server.cpu()
    result = await _drive(size, concurrency, send if workload == "send" else claim_commit)
    result["server_cpu_us"] = (server.cpu() - cpu0) / size * 1e6
    for ch in channels:
        await ch.close()
    return result


async def _measure(
    row: str, workload: str, size: int, concurrency: int, directory: Path
) -> dict[str, Any]:
    name = f"{row}-{workload.replace('+', '-')}.db"
    db = f"sqlite:///{directory / name}"
    if row == "store":
        figures = await _store_row(db, workload, size, concurrency)
    else:
        server = await asyncio.to_thread(_Server, db)
        try:
            if row == "grpc-h2load":
                figures = await _h2load.grpc_h2load_row(
                    server.addresses["grpc"], server.cpu, size, concurrency, _PAYLOAD
                )
            else:
                run = _http_row if row == "http" else _grpc_row
                figures = await run(server, workload, size, concurrency)
        finally:
            await asyncio.to_thread(server.stop)
    return {"row": row, "workload": workload, "size": size, "concurrency": concurrency, **figures}


def _table(results: list[dict[str, Any]]) -> str:
    base = {r["workload"]: r["ops_per_s"] for r in results if r["row"] == "store"}
    lines = [
        "| workload | row | ops/s | vs in-process | p50 µs | p99 µs | server CPU µs/op "
        "| client CPU µs/op |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        ratio = r["ops_per_s"] / base[r["workload"]] if r["workload"] in base else float("nan")
        lines.append(
            f"| {r['workload']} | {r['row']} | {r['ops_per_s']:,.0f} | {ratio:.2f}{TIMES} | "
            f"{r['p50_us']:,.0f} | {r['p99_us']:,.0f} | {r['server_cpu_us']:,.0f} | "
            f"{r['client_cpu_us']:,.0f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.gateway",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--size", type=int, default=3000, help="ops per row (default 3000)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rows", default=",".join(ROWS), help=",".join(ROWS))
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help=",".join(WORKLOADS))
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    args = parser.parse_args(argv)
    rows = [r for r in args.rows.split(",") if r]
    workloads = [w for w in args.workloads.split(",") if w]
    if bad := (set(rows) - set(ROWS)) | (set(workloads) - set(WORKLOADS)):
        parser.error(f"unknown rows or workloads: {', '.join(sorted(bad))}")

    async def run_all() -> list[dict[str, Any]]:
        results = []
        with tempfile.TemporaryDirectory() as tmp:
            for workload in workloads:
                for row in rows:
                    if row == "grpc-h2load" and (workload != "send" or not _h2load.available()):
                        # h2load replays one request: no claim ids to commit
                        why = "send only" if _h2load.available() else "h2load is not installed"
                        print(f"skipping {workload} / {row}: {why}", file=sys.stderr)
                        continue
                    print(f"measuring {workload} / {row} ...", file=sys.stderr)
                    results.append(
                        await _measure(row, workload, args.size, args.concurrency, Path(tmp))
                    )
        return results

    results = asyncio.run(run_all())
    if args.json:
        for r in results:
            print(json.dumps(r))
    else:
        sys.stdout.write(_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
