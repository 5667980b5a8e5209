"""Every Python snippet in docs/durable.md runs as written (in a scratch directory)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "durable.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


def test_the_guide_has_snippets() -> None:
    assert len(SNIPPETS) >= 4


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet-{i}" for i in range(len(SNIPPETS))])
def test_each_guide_snippet_runs_to_completion(snippet: str, tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, timeout=60,
        check=False, cwd=tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
