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


def test_a_paired_in_process_ratio_divides_by_the_yardstick_of_the_target() -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks._paired import _sides, paired_ratio
    from benchmarks._plan import Target

    # bounded (dovecote only) is divided by the hand-written tell, tell by itself
    assert _sides("bounded", "msgs_per_s") == ("handwritten", "tell", "msgs_per_s")
    assert _sides("tell", "msgs_per_s") == ("handwritten", "tell", "msgs_per_s")
    figure = paired_ratio(Target("tell", "msgs_per_s", "ratio>=", 0.6), processes=1, rounds=3)
    assert figure is not None
    assert 0.05 < figure < 20


def test_the_guard_gives_a_failed_ratio_target_a_paired_last_look() -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks.__main__ import _paired_look
    from benchmarks._plan import Target
    from benchmarks._report import Verdict

    target = Target("tell", "msgs_per_s", "ratio>=", 0.6)
    looked = _paired_look(Verdict(target, 0.01, False, False))  # as if a slow phase
    assert looked.figure is not None
    assert looked.figure != 0.01
    assert looked.guard_passed == target.passes(looked.figure, 0.8)
    absolute = Target("ask", "asks_per_s", "abs>=", 250_000, loop="uvloop")
    kept = Verdict(absolute, 1.0, False, False)
    assert _paired_look(kept) is kept  # an absolute target is not a ratio: as it was
