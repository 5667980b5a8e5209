"""One benchmark cell: ``python -m benchmarks.cell RUNTIME WORKLOAD --loop L --size N``.

Prints exactly one JSON line on stdout:
``{"runtime", "workload", "loop", "size", "status": "ok"|"unavailable"|"unsupported"|"error",
"metrics": {...}, "seconds", "error"?}``. Always exits 0 unless the arguments are bad, so
the runner can tell a broken peer from a broken harness.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from ._measure import collect
from ._plan import LOOPS, WORKLOADS
from .adapters import Unavailable, load


def _loop_factory(loop: str) -> Callable[[], asyncio.AbstractEventLoop]:
    if loop == "uvloop":
        try:
            import uvloop
        except ImportError as exc:
            raise Unavailable(f"uvloop: {exc}") from exc
        return uvloop.new_event_loop
    return asyncio.new_event_loop


def effective_size(runtime_cap: int | None, workload: str, size: int) -> int:
    """Scale a slow runtime's cap (given for full size) down with the requested size."""
    if runtime_cap is None:
        return size
    full = WORKLOADS[workload].full
    return max(1, min(size, round(runtime_cap * size / full)))


async def _run(runtime_name: str, workload: str, size: int, warmup: bool) -> dict[str, Any]:
    runtime = load(runtime_name)
    if not runtime.supports(workload):
        return {"status": "unsupported", "size": size}
    size = effective_size(runtime.max_size(workload), workload, size)
    fn = runtime.workload(workload)
    await runtime.open()
    try:
        if warmup and runtime.wants_warmup(workload):
            await fn(max(1, int(size * WORKLOADS[workload].warmup)))
        collect()
        t0 = time.perf_counter()
        metrics = await fn(size)
        seconds = time.perf_counter() - t0
    finally:
        await runtime.close()
    return {"status": "ok", "size": size, "metrics": metrics, "seconds": seconds}


def run_cell(
    runtime: str, workload: str, loop: str, size: int, warmup: bool = True
) -> dict[str, Any]:
    result: dict[str, Any] = {"runtime": runtime, "workload": workload, "loop": loop}
    try:
        factory = _loop_factory(loop)
        with asyncio.Runner(loop_factory=factory) as runner:
            result.update(runner.run(_run(runtime, workload, size, warmup)))
    except Unavailable as exc:
        result.update(status="unavailable", error=str(exc))
    except Exception as exc:
        result.update(status="error", error=f"{type(exc).__name__}: {exc}")
        traceback.print_exc(file=sys.stderr)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cell", description=__doc__)
    parser.add_argument("runtime")
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("--loop", choices=LOOPS, default="asyncio")
    parser.add_argument("--size", type=int, default=None, help="default: the full size")
    parser.add_argument("--no-warmup", action="store_true")
    args = parser.parse_args(argv)
    size = args.size if args.size is not None else WORKLOADS[args.workload].full
    # Runtimes may log to stdout (structlog prints there by default): point fd 1 at stderr
    # while the cell runs, and keep the real stdout for the one JSON line.
    sys.stdout.flush()
    real_stdout = os.dup(1)
    os.dup2(2, 1)
    try:
        result = run_cell(args.runtime, args.workload, args.loop, size, not args.no_warmup)
    finally:
        sys.stdout.flush()
        os.dup2(real_stdout, 1)
        os.close(real_stdout)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
