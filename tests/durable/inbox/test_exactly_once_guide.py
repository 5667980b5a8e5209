"""Every Python snippet in docs/exactly-once.md runs as written (PostgreSQL ones need the
server: they skip locally without it and fail under CI, like every PostgreSQL test)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from service_urls import postgres_url

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "exactly-once.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


def test_the_guide_has_its_snippets():
    assert len(SNIPPETS) >= 5


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet-{i}" for i in range(len(SNIPPETS))])
def test_each_guide_snippet_runs_to_completion(snippet: str) -> None:
    env = dict(os.environ)
    if "asyncpg" in snippet:
        env["DOVECOTE_TEST_POSTGRES_URL"] = postgres_url()
    completed = subprocess.run(
        [sys.executable, "-c", snippet],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr
