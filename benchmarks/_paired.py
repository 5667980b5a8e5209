"""Paired in-process ratios: the regression guard's last look at a ratio target it failed.

On a shared VM one process can run twice as fast as the next for the same code (seen on
2026-12-01: the yardstick's tell at 2.3M or 4.7M msgs/s from one process to the next), so
the ratio of two per-process medians can land anywhere. Here dovecote's workload and the
yardstick's run alternately in one fresh process, ``rounds`` times, each pair a few
milliseconds apart so that both meet the same phase of the machine; the figure is the
median of the pair ratios, and over several such processes the median of their medians.
The target and the guard's slack stay as they are: only the estimate is steadier.

    python -m benchmarks._paired tell msgs_per_s --loop asyncio --size 20000 --rounds 30
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
from typing import Any

from ._plan import WORKLOADS, Target
from ._runner import ROOT, child_env
from .adapters import load


def _sides(workload: str, metric: str) -> tuple[str, str, str]:
    """``(yardstick runtime, its workload, its metric)`` that dovecote's figure divides by."""
    spec = WORKLOADS[workload]
    entry = next(m for m in spec.metrics if m.key == metric)
    base_workload, base_metric = entry.baseline or (workload, metric)
    return WORKLOADS[base_workload].yardstick, base_workload, base_metric


async def _pairs(workload: str, metric: str, size: int, rounds: int) -> list[float]:
    yardstick, base_workload, base_metric = _sides(workload, metric)
    mine, base = load("dovecote"), load(yardstick)
    mine_fn, base_fn = mine.workload(workload), base.workload(base_workload)
    await mine.open()
    await base.open()
    try:
        await mine_fn(size)  # warm-up, both
        await base_fn(size)
        ratios = []
        for _ in range(rounds):
            a = (await mine_fn(size))[metric]
            b = (await base_fn(size))[base_metric]
            if b:
                ratios.append(a / b)
        return ratios
    finally:
        await mine.close()
        await base.close()


def measure(workload: str, metric: str, loop: str, size: int, rounds: int) -> float:
    """The median pair ratio of one process (this one)."""
    from .cell import _loop_factory

    with asyncio.Runner(loop_factory=_loop_factory(loop)) as runner:
        ratios = runner.run(_pairs(workload, metric, size, rounds))
    return statistics.median(ratios)


def paired_ratio(
    target: Target, processes: int = 3, rounds: int = 30, timeout: float = 120.0
) -> float | None:
    """The median over ``processes`` fresh interpreters of :func:`measure` for ``target``
    (a ratio target); None if no process gave a figure."""
    size = max(1_000, WORKLOADS[target.workload].quick // 5)
    env = child_env()
    figures = []
    for _ in range(processes):
        cmd = [sys.executable, "-m", "benchmarks._paired", target.workload, target.metric,
               "--loop", target.loop, "--size", str(size), "--rounds", str(rounds)]
        try:
            done = subprocess.run(
                cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            continue
        for line in reversed(done.stdout.splitlines()):
            if line.startswith("{"):
                figures.append(float(json.loads(line)["ratio"]))
                break
    return statistics.median(figures) if figures else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._paired", description=__doc__)
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("metric")
    parser.add_argument("--loop", default="asyncio")
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    result: dict[str, Any] = {
        "workload": args.workload,
        "metric": args.metric,
        "ratio": measure(args.workload, args.metric, args.loop, args.size, args.rounds),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
