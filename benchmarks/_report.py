"""Markdown: the machine, the targets, and one table per workload with ratios."""

from __future__ import annotations

import platform
import subprocess
import sys
from dataclasses import dataclass

from ._plan import (
    EN_DASH,
    LOOPS,
    RUNTIME_INFO,
    RUNTIMES,
    TARGETS,
    TIMES,
    WORKLOADS,
    YARDSTICK,
    Target,
)
from ._runner import Cell, Outcome


def machine() -> dict[str, str]:
    try:
        uname = subprocess.run(["uname", "-a"], capture_output=True, text=True).stdout.strip()
    except OSError:
        uname = " ".join(platform.uname())
    cpu = platform.processor() or "?"
    cores = "?"
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
        names = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")]
        if names:
            cpu = names[0]
            cores = str(len(names))
    except OSError:
        pass
    try:
        import uvloop

        uv = uvloop.__version__
    except ImportError:
        uv = "not installed"
    return {
        "uname": uname,
        "cpu": f"{cpu} ({cores} logical CPUs)",
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "uvloop": uv,
    }


def fmt(value: float) -> str:
    a = abs(value)
    if a >= 1e6:
        return f"{value / 1e6:.2f}M"
    if a >= 1e4:
        return f"{value / 1e3:.0f}k"
    if a >= 1e3:
        return f"{value / 1e3:.1f}k"
    if a >= 100:
        return f"{value:.0f}"
    if a >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def fmt_ratio(value: float) -> str:
    """A ratio with two decimals, or two significant digits below 0.01 (never 0.00)."""
    return f"{value:.2f}" if value >= 0.01 or value == 0 else f"{value:.2g}"


def baseline_cell(cell: Cell, workload: str) -> Cell:
    """The yardstick cell a figure is divided by (same loop for loop-bound runtimes)."""
    info = RUNTIME_INFO.get(cell.runtime)
    loop = cell.loop if info is None or info.loop_bound else "asyncio"
    return Cell(WORKLOADS[workload].yardstick, workload, loop)


def ratio(outcomes: dict[Cell, Outcome], cell: Cell, key: str) -> float | None:
    spec = WORKLOADS[cell.workload]
    metric = next(m for m in spec.metrics if m.key == key)
    if not metric.ratio:
        return None
    mine = outcomes.get(cell)
    if metric.own_baseline is not None:
        base, base_key = mine, metric.own_baseline
    else:
        base_workload, base_key = metric.baseline or (cell.workload, key)
        base = outcomes.get(baseline_cell(cell, base_workload))
    if mine is None or base is None:
        return None
    a, b = mine.stats(key), base.stats(base_key)
    if a is None or b is None or b[0] == 0:
        return None
    return a[0] / b[0]


@dataclass
class Verdict:
    target: Target
    figure: float | None
    passed: bool | None  # None: not measured
    guard_passed: bool | None  # with the regression guard's 80% slack


def evaluate(outcomes: dict[Cell, Outcome], runtime: str = "dovecote") -> list[Verdict]:
    verdicts: list[Verdict] = []
    for t in TARGETS:
        cell = Cell(runtime, t.workload, t.loop)
        figure: float | None
        if t.kind.startswith("ratio"):
            figure = ratio(outcomes, cell, t.metric)
        else:
            outcome = outcomes.get(cell)
            stats = outcome.stats(t.metric) if outcome else None
            figure = stats[0] if stats else None
        if figure is None:
            verdicts.append(Verdict(t, None, None, None))
        else:
            verdicts.append(Verdict(t, figure, t.passes(figure), t.passes(figure, 0.8)))
    return verdicts


def _targets_table(verdicts: list[Verdict]) -> list[str]:
    out = [
        "| workload | metric | loop | target | dovecote | meets target | within 80% guard |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for v in verdicts:
        t = v.target
        if v.figure is None:
            shown, ok, guard = "not measured", "—", "—"
        else:
            shown = f"{v.figure:.2f}{TIMES}" if t.kind.startswith("ratio") else fmt(v.figure)
            ok = "yes" if v.passed else "**no**"
            guard = "yes" if v.guard_passed else "**no**"
        unit = WORKLOADS[t.workload].metrics
        label = next(m.unit for m in unit if m.key == t.metric)
        out.append(
            f"| {t.workload} | {label} | {t.loop} | {t.describe()} | {shown} | {ok} | {guard} |"
        )
    return out


def _workload_table(outcomes: dict[Cell, Outcome], workload: str) -> list[str]:
    spec = WORKLOADS[workload]
    cells = [c for c in outcomes if c.workload == workload]
    if not cells:
        return []
    order = {r: i for i, r in enumerate(RUNTIMES)}
    cells.sort(key=lambda c: (order.get(c.runtime, 99), LOOPS.index(c.loop)))
    if spec.dovecote_only:
        cells = [c for c in cells if c.runtime == "dovecote"]
        if not cells:
            return []
    head = ["runtime", "loop", "n"]
    for m in spec.metrics:
        base = m.baseline or (workload, m.key)
        ref = "" if base == (workload, m.key) else f" ({base[0]})"
        against = "hand-written" if spec.yardstick == YARDSTICK else spec.yardstick
        if m.own_baseline is not None:
            against, ref = next(o.unit for o in spec.metrics if o.key == m.own_baseline), ""
        head += [f"{m.unit} median (min{EN_DASH}max)",
                 f"{TIMES} {against}{ref}" if m.ratio else TIMES]
    out = [
        f"### {spec.title}",
        "",
        spec.about,
        "",
        "| " + " | ".join(head) + " |",
        "| " + " | ".join(["---"] * len(head)) + " |",
    ]
    for cell in cells:
        outcome = outcomes[cell]
        info = RUNTIME_INFO.get(cell.runtime)
        loop = cell.loop if info is None or info.loop_bound else f"— ({info.off_loop})"
        row = [cell.runtime, loop]
        if outcome.status != "ok":
            reason = outcome.reason.replace("|", "/")[:140]
            row += ["—", f"{outcome.status}: {reason}"] + ["—"] * (len(head) - 4)
        else:
            n = f"{outcome.size:,}"
            if len(outcome.ok_runs) < len(outcome.runs):
                # some repeats failed (e.g. the runtime was being edited mid-run)
                n += f" ({len(outcome.ok_runs)}/{len(outcome.runs)} ok)"
            row.append(n)
            for m in spec.metrics:
                st = outcome.stats(m.key)
                if st is None:
                    row += ["—", "—"]
                    continue
                med, lo, hi = st
                row.append(f"{fmt(med)} ({fmt(lo)}{EN_DASH}{fmt(hi)})")
                r = ratio(outcomes, cell, m.key)
                row.append("—" if r is None else f"{fmt_ratio(r)}{TIMES}")
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    return out


def render(
    outcomes: dict[Cell, Outcome],
    *,
    mode: str,
    repeats: int,
    seconds: float,
    when: str,
) -> str:
    m = machine()
    lines = [
        f"_Run {when}: mode **{mode}**, {repeats} interleaved repeat(s) per cell, "
        f"{len(outcomes)} cells, {seconds:.0f} s wall time._",
        "",
        f"- machine: `{m['uname']}`",
        f"- CPU: {m['cpu']}",
        f"- Python: {m['python']}; uvloop {m['uvloop']}",
        "",
        f"Figures are medians over the repeats with (min{EN_DASH}max). Each ratio divides the "
        "runtime's median by the hand-written actor's median measured in the same run on "
        "the same loop (thread/process peers against the default asyncio loop); the store "
        "rows (g) divide by plain sqlite3 doing the same statements by hand. For "
        "throughput a ratio above 1 is better; for µs, KiB and latency below 1 is better.",
        "",
    ]
    if any(c.runtime == "dovecote" for c in outcomes):
        lines += ["### dovecote against the targets (issue 4)", ""]
        verdicts = [
            v
            for v in evaluate(outcomes)
            if Cell("dovecote", v.target.workload, v.target.loop) in outcomes
        ]
        lines += _targets_table(verdicts)
        lines += [""]
    for workload in WORKLOADS:
        lines += _workload_table(outcomes, workload)
    return "\n".join(lines).rstrip() + "\n"
