"""``python -m benchmarks.remote``: remote actors over NATS against NATS itself, one table.

    python -m benchmarks.remote                       # NATS at $DOVECOTE_TEST_NATS_URL
    python -m benchmarks.remote --quick               # small sizes (~10 s)
    python -m benchmarks.remote --url nats://127.0.0.1:4222 --output docs/remote.md

Every row is two processes on this machine talking through the same NATS server: the
receiving sides (nats-py's and dovecote's, both up for the whole run) are started as
``python -m benchmarks.remote serve ...`` and the sending side runs here. The ask rows
run in alternating blocks (``--blocks``), nats-py's and dovecote's, so that both meet the
same load on a shared machine. Rows: nats-py publish -> subscribe (raw baseline), nats-py
request-reply (sequential and 16 in flight), and dovecote's remote tell, sequential ask
and 16 asks in flight. The Python peers' figures are the issue's (measured on this class
of machine, not re-run here).

Besides throughput and latency, every row reports the CPU time per message (or round
trip) of the sending process and of the serving process (``time.process_time`` and
``/proc/<pid>/stat``): on a shared machine that is steadier than the rates.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from ._plan import TIMES

IN_FLIGHT = 16
START = "<!-- remote-benchmarks:start -->"
END = "<!-- remote-benchmarks:end -->"

# (row, the reference figure, target)
ROWS: list[tuple[str, str, str]] = [
    ("nats-py publish → subscribe", "306k msg/s", "baseline"),
    ("nats-py request-reply, sequential", "3.5k/s, p50 274 µs", "baseline"),
    (f"nats-py request-reply, {IN_FLIGHT} in flight", "25.6k/s", "baseline"),
    ("dovecote remote tell", "—", "≥ 150k msg/s"),
    ("dovecote remote ask, sequential", "—", f"≥ 1.0{TIMES} nats-py sequential"),
    (f"dovecote remote ask, {IN_FLIGHT} in flight", "—", "≥ 25k/s"),
]
PEERS = [
    ("xoscar (tells / asks across processes)", "26k / 7k"),
    ("Thespian TCP", "5k / 2.8k"),
    ("Ray", "6k / 1.3k"),
    ("raw asyncio TCP ping-pong", "10.9k/s"),
]


# -- the receiving process --------------------------------------------------------------------
async def serve_raw(url: str, subject: str) -> None:
    import nats

    nc = await nats.connect(url)
    count = 0

    async def on_msg(msg: Any) -> None:
        nonlocal count
        if msg.reply:
            await msg.respond(msg.data)
            return
        count += 1
        if msg.data == b"end":
            await nc.publish(subject + ".done", str(count).encode())
            count = 0

    await nc.subscribe(subject + ".in", cb=on_msg, pending_msgs_limit=-1, pending_bytes_limit=-1)
    await nc.flush()
    print("READY", flush=True)
    await asyncio.to_thread(sys.stdin.read)
    await nc.close()


async def serve_dovecote(url: str, system: str) -> None:
    from dovecote import Actor, ActorSystem
    from dovecote.remote import NatsRemote

    class Counter(Actor):
        """Counts what it is told; ``"count"`` answers the count and starts again."""

        count = 0

        def on_receive(self, message: Any) -> Any:
            if message == "count":
                count, self.count = self.count, 0
                return count
            self.count += 1
            return message

    remote = NatsRemote(servers=url, bucket=f"bench_{system}")
    async with ActorSystem(system, host="server", remote=remote) as node:
        node.spawn(Counter, "counter")
        print("READY", flush=True)
        await asyncio.to_thread(sys.stdin.read)


# -- the sending side ---------------------------------------------------------------------------
def _percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    p50 = statistics.median(samples)
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    return p50 * 1e6, p99 * 1e6


def _start(*args: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.remote", "serve", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert proc.stdout is not None
    line = b"?"
    while line and line.strip() != b"READY":  # (log lines may come first)
        line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"the serving process did not start: {args}")
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(30)


async def bench(url: str, n_tell: int, n_ask: int, blocks: int) -> list[dict[str, float]]:
    """Every row, nats-py's and dovecote's serving processes both up: the tell rows one
    after the other, the ask rows in ``blocks`` alternating blocks (so both see the same
    load); the ROWS in order."""
    import nats

    from dovecote import ActorSystem
    from dovecote.remote import NatsRemote

    subject = f"bench.{uuid.uuid4().hex[:8]}"
    system = f"bench{uuid.uuid4().hex[:8]}"
    raw_proc = _start("raw", url, subject)
    dov_proc = _start("dovecote", url, system)
    try:
        nc = await nats.connect(url)
        remote = NatsRemote(servers=url, bucket=f"bench_{system}")
        async with ActorSystem(system, host="client", remote=remote) as node:
            counter = node.resolve(f"nats://{system}@server/user/counter")
            await counter.ask("count", timeout=10)
            payload = b"x" * 16
            cpus = (_Cpu(raw_proc.pid), _Cpu(dov_proc.pid))
            rows: tuple[list[dict[str, float]], ...] = (
                [await _raw_tells(nc, subject, payload, n_tell, cpus[0])],
                [await _dovecote_tells(counter, payload, n_tell, cpus[1])],
            )
            calls = (
                lambda: nc.request(subject + ".in", payload, timeout=5),
                lambda: counter.ask(payload, timeout=5),
            )
            for pattern in (_sequential, _in_flight):
                for call in calls:
                    await pattern(call, max(IN_FLIGHT, n_ask // 10))  # warm-up
                runs: tuple[list[tuple[list[float], float, tuple[float, float]]], ...] = ([], [])
                for _ in range(blocks):
                    for side in (0, 1):
                        cpus[side].start()
                        times, elapsed = await pattern(calls[side], max(IN_FLIGHT, n_ask // blocks))
                        runs[side].append((times, elapsed, cpus[side].used()))
                for side in (0, 1):
                    rows[side].append(_summary(runs[side]))
        await nc.close()
        return rows[0] + rows[1]
    finally:
        _stop(raw_proc)
        _stop(dov_proc)
        await _delete_bucket(url, system)


async def _raw_tells(nc: Any, subject: str, payload: bytes, n: int, cpu: _Cpu) -> dict[str, float]:
    done: asyncio.Queue[bytes] = asyncio.Queue()

    async def on_done(msg: Any) -> None:
        done.put_nowait(msg.data)

    await nc.subscribe(subject + ".done", cb=on_done)
    await nc.flush()
    cpu.start()
    started = time.perf_counter()
    for _ in range(n):
        await nc.publish(subject + ".in", payload)
    await nc.publish(subject + ".in", b"end")
    got = int(await asyncio.wait_for(done.get(), 120))
    return {"rate": got / (time.perf_counter() - started), **_per_op(cpu.used(), got)}


async def _dovecote_tells(counter: Any, payload: bytes, n: int, cpu: _Cpu) -> dict[str, float]:
    cpu.start()
    started = time.perf_counter()
    for _ in range(n):
        counter.tell(payload)
    got = int(await counter.ask("count", timeout=120))  # queued behind the tells
    return {"rate": got / (time.perf_counter() - started), **_per_op(cpu.used(), got)}


async def _delete_bucket(url: str, system: str) -> None:
    import nats

    nc = await nats.connect(url)
    with contextlib.suppress(Exception):
        await nc.jetstream().delete_key_value(f"bench_{system}")
    await nc.close()


class _Cpu:
    """CPU seconds used by this process and by one serving process since ``start``."""

    def __init__(self, pid: int) -> None:
        self._pid = pid
        self._since = self._now()

    def _now(self) -> tuple[float, float]:
        try:
            with open(f"/proc/{self._pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            served = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:  # no /proc (not Linux): the serving side is not measured
            served = math.nan
        return time.process_time(), served

    def start(self) -> None:
        self._since = self._now()

    def used(self) -> tuple[float, float]:
        now = self._now()
        return now[0] - self._since[0], now[1] - self._since[1]


def _per_op(used: tuple[float, float], n: int) -> dict[str, float]:
    return {"cpu_here": used[0] / n * 1e6, "cpu_there": used[1] / n * 1e6}


def _summary(runs: list[tuple[list[float], float, tuple[float, float]]]) -> dict[str, float]:
    """One row from its blocks: rate over their total time, percentiles over every sample."""
    times = [t for block, _, _ in runs for t in block]
    elapsed = sum(e for _, e, _ in runs)
    used = (sum(u[0] for _, _, u in runs), sum(u[1] for _, _, u in runs))
    p50, p99 = _percentiles(times)
    return {"rate": len(times) / elapsed, "p50": p50, "p99": p99, **_per_op(used, len(times))}


async def _sequential(call: Any, n: int) -> tuple[list[float], float]:
    times = []
    started = time.perf_counter()
    for _ in range(n):
        t0 = time.perf_counter()
        await call()
        times.append(time.perf_counter() - t0)
    return times, time.perf_counter() - started


async def _in_flight(call: Any, n: int) -> tuple[list[float], float]:
    times: list[float] = []
    per = max(1, n // IN_FLIGHT)

    async def worker() -> None:
        for _ in range(per):
            t0 = time.perf_counter()
            await call()
            times.append(time.perf_counter() - t0)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
    return times, time.perf_counter() - started


def _fmt_cpu(value: float) -> str:
    if math.isnan(value):
        return "—"
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def _fmt_rate(value: float) -> str:
    return f"{value / 1000:.1f}k/s" if value < 1e6 else f"{value / 1e6:.2f}M/s"


def render(results: list[dict[str, float]], url: str, n_tell: int, n_ask: int, blocks: int) -> str:
    """The markdown table of :func:`bench`'s rows."""
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} against {url}; "
        f"{n_tell:,} tells, {n_ask:,} asks per row; two processes per row, both on this "
        f"machine (2 shared cores: expect noise); the asks in {blocks} blocks per row, "
        "nats-py's and dovecote's alternating.",
        "",
        "| row | throughput | p50 µs | p99 µs | CPU µs/op sender | CPU µs/op receiver "
        "| target | issue's figure |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for (name, ref, target), r in zip(ROWS, results, strict=True):
        p50 = f"{r['p50']:.0f}" if "p50" in r else "—"
        p99 = f"{r['p99']:.0f}" if "p99" in r else "—"
        here, there = _fmt_cpu(r["cpu_here"]), _fmt_cpu(r["cpu_there"])
        lines.append(
            f"| {name} | {_fmt_rate(r['rate'])} | {p50} | {p99} | {here} | {there} "
            f"| {target} | {ref} |"
        )
    for name, figure in PEERS:
        lines.append(
            f"| {name} (issue's figure, not re-run) | {figure} | — | — | — | — | — | {figure} |"
        )
    tell_ratio = results[3]["rate"] / results[0]["rate"]
    seq_ratio = results[4]["rate"] / results[1]["rate"]
    lines += [
        "",
        f"dovecote remote tell = {tell_ratio:.2f}{TIMES} raw nats-py publish; sequential ask = "
        f"{seq_ratio:.2f}{TIMES} nats-py's request-reply.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        mode, url, name = argv[1:4]
        asyncio.run(serve_raw(url, name) if mode == "raw" else serve_dovecote(url, name))
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.remote", description=__doc__)
    parser.add_argument(
        "--url", default=os.environ.get("DOVECOTE_TEST_NATS_URL", "nats://127.0.0.1:4222")
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", type=Path)
    parser.add_argument(
        "--blocks", type=int, default=10, help="alternating blocks per ask row (default 10)"
    )
    args = parser.parse_args(argv)
    n_tell, n_ask = (50_000, 2_000) if args.quick else (300_000, 10_000)
    blocks = max(1, args.blocks)
    results = asyncio.run(bench(args.url, n_tell, n_ask, blocks))
    report = render(results, args.url, n_tell, n_ask, blocks)
    print(report)
    if args.output is not None:
        text = args.output.read_text() if args.output.exists() else ""
        if START in text and END in text:
            head, rest = text.split(START, 1)
            text = f"{head}{START}\n{report}{END}{rest.split(END, 1)[1]}"
        else:
            text = report
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
