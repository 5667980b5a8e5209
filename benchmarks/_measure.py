"""Small measuring helpers shared by the adapters: clocks, percentiles, resident memory."""

from __future__ import annotations

import gc
import os
import statistics
from collections.abc import Awaitable, Callable
from time import perf_counter

__all__ = [
    "collect",
    "percentile",
    "perf_counter",
    "process_table",
    "pss_bytes",
    "rss_bytes",
    "time_spawn_and_stop",
    "tree_rss_bytes",
]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes(pid: int | str = "self") -> int:
    """Resident set size of one process, from /proc (falls back to ru_maxrss)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, session id) for every live process, from /proc."""
    table: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: split after the last ")"
        fields = stat[stat.rindex(b")") + 2 :].split()
        if fields[0] == b"Z":
            continue
        table[int(entry)] = (int(fields[1]), int(fields[3]))
    return table


def _children_of(root: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for pid, (ppid, _sid) in process_table().items():
        parents.setdefault(ppid, []).append(pid)
    found: list[int] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        for child in parents.get(pid, ()):
            found.append(child)
            todo.append(child)
    return found


def tree_rss_bytes() -> int:
    """RSS of this process plus all its descendants (for process-per-actor peers)."""
    total = rss_bytes()
    for pid in _children_of(os.getpid()):
        try:
            total += rss_bytes(pid)
        except (OSError, ValueError, IndexError):
            continue
    return total


def pss_bytes(pid: int | str = "self") -> int:
    """Proportional set size (shared pages split between sharers); 0 if unreadable."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def collect() -> None:
    """A full collection, twice: the second one reaps what finalizers of the first freed."""
    gc.collect()
    gc.collect()


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list (q in 0..100)."""
    if not sorted_values:
        return float("nan")
    if q == 50:
        return float(statistics.median(sorted_values))
    rank = max(0, min(len(sorted_values) - 1, round(q / 100 * len(sorted_values)) - 1))
    return sorted_values[rank]


def latency_metrics(latencies: list[float], elapsed: float) -> dict[str, float]:
    """Round trips per second and p50/p99 in microseconds; sorts ``latencies`` in place."""
    latencies.sort()
    return {
        "asks_per_s": len(latencies) / elapsed,
        "p50_us": percentile(latencies, 50) * 1e6,
        "p99_us": percentile(latencies, 99) * 1e6,
    }


async def time_asks(ask: Callable[[int], Awaitable[object]], n: int) -> dict[str, float]:
    """``n`` sequential awaited asks, each timed alone: the same loop for every runtime."""
    lat = [0.0] * n
    t0 = perf_counter()
    for i in range(n):
        t = perf_counter()
        await ask(i)
        lat[i] = perf_counter() - t
    return latency_metrics(lat, perf_counter() - t0)


async def time_fanout(
    tells: list[Callable[[int], object]], rounds: int, done: Awaitable[object]
) -> dict[str, float]:
    """Tell every actor round-robin ``rounds`` times, then await ``done``: msgs/s."""
    t0 = perf_counter()
    for i in range(rounds):
        for tell in tells:
            tell(i)
    await done
    return {"msgs_per_s": rounds * len(tells) / (perf_counter() - t0)}


async def time_spawn_and_stop(
    spawn_all: Callable[[], Awaitable[object]], stop_all: Callable[[], Awaitable[object]], n: int
) -> dict[str, float]:
    """Workload (d) for one runtime: ``spawn_all`` makes ``n`` actors and returns once the
    last one has answered; ``stop_all`` stops them and returns once they are gone.

    µs per spawn and per stop, and the resident memory each idle actor adds (RSS delta
    after a full collection, so garbage does not count).
    """
    collect()
    rss0 = rss_bytes()
    t0 = perf_counter()
    await spawn_all()
    t1 = perf_counter()
    collect()
    rss1 = rss_bytes()
    t2 = perf_counter()
    await stop_all()
    t3 = perf_counter()
    return {
        "spawn_us": (t1 - t0) / n * 1e6,
        "idle_kib": (rss1 - rss0) / n / 1024,
        "stop_us": (t3 - t2) / n * 1e6,
    }
