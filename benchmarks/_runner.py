"""Plans the cells, runs each in a fresh subprocess (repeats interleaved), aggregates."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._plan import NON_ACTOR_RUNTIMES, RUNTIME_INFO, RUNTIMES, WORKLOADS, YARDSTICK

ROOT = Path(__file__).resolve().parent.parent
_FINAL = frozenset({"unavailable", "unsupported"})


@dataclass(frozen=True)
class Cell:
    runtime: str
    workload: str
    loop: str


@dataclass
class Outcome:
    """Every repeat of one cell."""

    cell: Cell
    runs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok_runs(self) -> list[dict[str, Any]]:
        return [r for r in self.runs if r.get("status") == "ok"]

    @property
    def status(self) -> str:
        if self.ok_runs:
            return "ok"
        if not self.runs:
            return "not run"
        first = self.runs[0]
        return str(first.get("status", "error"))

    @property
    def reason(self) -> str:
        for r in self.runs:
            if r.get("status") != "ok":
                return str(r.get("error") or r.get("status"))
        return ""

    @property
    def size(self) -> int | None:
        runs = self.ok_runs
        return int(runs[0]["size"]) if runs else None

    def stats(self, key: str) -> tuple[float, float, float] | None:
        """(median, min, max) of one metric over the successful repeats."""
        values = [float(r["metrics"][key]) for r in self.ok_runs if key in r["metrics"]]
        if not values:
            return None
        return statistics.median(values), min(values), max(values)


def plan(runtimes: list[str], workloads: list[str], loops: list[str]) -> list[list[Cell]]:
    """Groups of cells that are compared with each other, one group per (workload, loop).

    The yardstick is always part of the plan, and a dovecote-only workload also brings in
    the yardstick's tell cell on the same loop (its ratios are taken against that).
    """
    yardsticks = [YARDSTICK, *(WORKLOADS[w].yardstick for w in workloads)]
    runtimes = [*dict.fromkeys(r for r in yardsticks if r not in runtimes), *runtimes]
    runtimes = [r for r in RUNTIMES if r in runtimes] + [r for r in runtimes if r not in RUNTIMES]
    wanted = list(workloads)
    if any(WORKLOADS[w].dovecote_only for w in wanted) and "tell" not in wanted:
        wanted.insert(0, "tell")
    groups: list[list[Cell]] = []
    for workload in wanted:
        spec = WORKLOADS[workload]
        for loop in loops:
            group: list[Cell] = []
            for runtime in runtimes:
                info = RUNTIME_INFO.get(runtime)
                if spec.runtimes is not None and runtime not in spec.runtimes:
                    continue
                if spec.runtimes is None and runtime in NON_ACTOR_RUNTIMES:
                    continue
                if spec.dovecote_only and runtime != "dovecote":
                    # only the yardstick's tell is needed, and it is planned under "tell"
                    continue
                if info is not None:
                    if workload in info.skips:
                        continue
                    if loop != "asyncio" and not info.loop_bound:
                        continue
                group.append(Cell(runtime, workload, loop))
            if workload not in workloads and group:
                group = [c for c in group if c.runtime == spec.yardstick]
            if group:
                groups.append(group)
    return groups


def child_env() -> dict[str, str]:
    """The environment of a benchmark child process: this one's, with the repo importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


def run_one(cell: Cell, size: int, timeout: float) -> dict[str, Any]:
    """Run one cell in a fresh interpreter; never raises."""
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.cell",
        cell.runtime,
        cell.workload,
        "--loop",
        cell.loop,
        "--size",
        str(size),
    ]
    env = child_env()
    base = {"runtime": cell.runtime, "workload": cell.workload, "loop": cell.loop}
    # a session of its own, so a timed-out cell and any process it started can be killed
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {**base, "status": "error", "error": f"timed out after {timeout:g} s"}
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            try:
                result: dict[str, Any] = json.loads(line)
            except json.JSONDecodeError:
                break
            return result
    tail = " | ".join(err.strip().splitlines()[-3:])
    return {**base, "status": "error", "error": f"exit {proc.returncode}: {tail}"}


def _brief(result: dict[str, Any]) -> str:
    if result.get("status") != "ok":
        return f"{result.get('status')}: {result.get('error', '')}"[:120]
    metrics = ", ".join(f"{k}={v:,.4g}" for k, v in result["metrics"].items())
    return f"{metrics}  (n={result['size']:,}, {result['seconds']:.2f} s)"


def run_plan(
    groups: list[list[Cell]],
    repeats: int,
    quick: bool,
    timeout: float,
    log: Any = sys.stderr,
) -> dict[Cell, Outcome]:
    """Run every group `repeats` times, round-robin over runtimes, rotating the order."""
    outcomes: dict[Cell, Outcome] = {c: Outcome(c) for g in groups for c in g}
    total = sum(len(g) for g in groups) * repeats
    done = 0
    started = time.monotonic()
    for rep in range(repeats):
        for group in groups:
            shift = rep % len(group)
            for cell in group[shift:] + group[:shift]:
                outcome = outcomes[cell]
                if outcome.runs and outcome.runs[0].get("status") in _FINAL:
                    continue  # an unavailable peer stays unavailable: do not retry it
                spec = WORKLOADS[cell.workload]
                size = spec.quick if quick else spec.full
                result = run_one(cell, size, timeout)
                outcome.runs.append(result)
                done += 1
                print(
                    f"[{done}/{total} {time.monotonic() - started:5.0f}s] "
                    f"{cell.runtime:<16} {cell.workload:<10} {cell.loop:<7} {_brief(result)}",
                    file=log,
                    flush=True,
                )
    return outcomes
