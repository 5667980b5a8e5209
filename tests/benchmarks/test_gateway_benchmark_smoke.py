"""``python -m benchmarks.gateway`` runs end to end at a tiny size and reports every row."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("grpc")


def run_rows(*options: str) -> list[dict[str, Any]]:
    """``python -m benchmarks.gateway --json OPTIONS``: one dict per row."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.gateway", "--json", *options],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_every_row_and_workload_reports_its_figures() -> None:
    rows = run_rows("--size", "64", "--concurrency", "4")
    # h2load replays one request, so its row has no claim+commit; without h2load, no row
    h2load = {("send", "grpc-h2load")} if shutil.which("h2load") else set()
    assert {(r["workload"], r["row"]) for r in rows} == h2load | {
        (w, r) for w in ("send", "claim+commit") for r in ("store", "http", "grpc")
    }
    for r in rows:
        assert r["ops_per_s"] > 0
        assert r["p99_us"] >= r["p50_us"] > 0


@pytest.mark.skipif(shutil.which("h2load") is None, reason="h2load (nghttp2-client) not installed")
def test_the_h2load_row_counts_its_own_cpu_and_every_send() -> None:
    # the row raises unless the mailbox holds exactly one message per call
    (row,) = run_rows("--size", "200", "--rows", "grpc-h2load")
    assert (row["row"], row["workload"], row["size"]) == ("grpc-h2load", "send", 200)
    assert row["client_cpu_us"] > 0
    assert row["server_cpu_us"] > 0
    assert row["p99_us"] >= row["p50_us"] > 0
