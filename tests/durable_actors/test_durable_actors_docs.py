"""Every Python snippet in docs/durable-actors.md runs (each in a fresh interpreter)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "durable-actors.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_the_page_has_snippets() -> None:
    assert len(SNIPPETS) >= 4


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_snippet_runs(index: int, tmp_path: Path) -> None:
    script = tmp_path / f"snippet_{index}.py"
    script.write_text(SNIPPETS[index])
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
