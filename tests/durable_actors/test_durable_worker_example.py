"""examples/durable_worker.py: a worker killed with SIGKILL mid-job; its successor finishes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "durable_worker.py"


def test_the_queue_survives_kill_9_and_the_job_in_progress_is_redelivered() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=90, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "worker 1 handled 8 jobs, then got kill -9 (exit -9)" in lines
    assert "every job handled: True" in lines
    # 30 jobs and the end marker, each committed once; nothing left claimed or pending
    assert "store: committed 31, pending 0, claimed 0" in lines
