"""The durable store rows run through the cell entry point (tiny sizes; no timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KEYS = {
    "store_send": {"full_per_s", "normal_per_s", "group_full_per_s", "group_normal_per_s"},
    "store_claim": {"full_per_s", "normal_per_s", "group_full_per_s", "group_normal_per_s"},
}


@pytest.mark.parametrize(("runtime", "workload"), [
    ("sqlite3", "store_send"), ("sqlite3", "store_claim"),
    ("dovecote", "store_send"), ("dovecote", "store_claim"),
])
def test_a_store_cell_reports_its_figures(runtime: str, workload: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.cell", runtime, workload, "--size", "300",
         "--no-warmup"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["status"] == "ok", result
    expected = KEYS[workload] if runtime == "dovecote" else (
        KEYS[workload] if workload == "store_send" else {"full_per_s", "normal_per_s"})
    assert set(result["metrics"]) == expected
    assert all(value > 0 for value in result["metrics"].values())


def test_the_store_rows_are_planned_with_their_yardstick() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks._runner import plan
    finally:
        sys.path.remove(str(ROOT))
    groups = plan(["dovecote"], ["store_send"], ["asyncio"])
    assert [[c.runtime for c in g] for g in groups] == [["dovecote", "sqlite3"]]
    actors = plan(["dovecote", "sqlite3"], ["tell"], ["asyncio"])
    assert [[c.runtime for c in g] for g in actors] == [["dovecote", "handwritten"]]
