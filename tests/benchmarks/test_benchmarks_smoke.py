"""The benchmark harness runs: one tiny hand-written cell through its entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_handwritten_tell_cell_prints_one_json_line_with_its_metrics() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.cell", "handwritten", "tell", "--size", "1000"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert result["status"] == "ok", result
    assert (result["runtime"], result["workload"], result["loop"]) == (
        "handwritten",
        "tell",
        "asyncio",
    )
    assert result["size"] == 1000
    assert set(result["metrics"]) == {"msgs_per_s"}
    assert result["metrics"]["msgs_per_s"] > 0
    assert result["seconds"] > 0
