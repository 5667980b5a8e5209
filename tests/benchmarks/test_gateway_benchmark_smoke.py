"""``python -m benchmarks.gateway`` runs end to end at a tiny size and reports every row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("grpc")


def test_every_row_and_workload_reports_its_figures() -> None:
    command = ["benchmarks.gateway", "--size", "64", "--concurrency", "4", "--json"]
    proc = subprocess.run(
        [sys.executable, "-m", *command],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {(r["workload"], r["row"]) for r in rows} == {
        (w, r) for w in ("send", "claim+commit") for r in ("store", "http", "grpc")
    }
    for r in rows:
        assert r["ops_per_s"] > 0
        assert r["p99_us"] >= r["p50_us"] > 0
