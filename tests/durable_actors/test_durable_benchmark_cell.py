"""The durable_actor benchmark cell runs and reports the durable and in-memory figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_durable_actor_cell_reports_its_figures() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.cell", "dovecote", "durable_actor", "--size", "50"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["status"] == "ok", result
    metrics = result["metrics"]
    for prefix in ("full", "normal", "memory"):
        assert metrics[f"{prefix}_per_s"] > 0
        assert 0 < metrics[f"{prefix}_p50_us"] <= metrics[f"{prefix}_p99_us"]
