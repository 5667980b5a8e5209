"""Every Python snippet in docs/post-office.md runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "post-office.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet-{i}" for i in range(len(SNIPPETS))])
def test_each_guide_snippet_runs_to_completion(snippet: str) -> None:
    completed = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, timeout=30, check=False
    )
    assert completed.returncode == 0, completed.stderr
