"""The approval-flow example runs to completion on its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "approval_flow.py"


def test_the_approval_flow_example_finishes_and_reports_every_decision() -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=30, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert "payment-1: approved" in completed.stdout
    assert "payment-3: rejected" in completed.stdout
    assert "done: 3 decisions, 0 requests left, 0 in flight" in completed.stdout
