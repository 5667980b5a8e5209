"""Every Python snippet in docs/remote.md runs as written (against the test NATS server)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from service_urls import nats_url

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "remote.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet-{i}" for i in range(len(SNIPPETS))])
def test_each_guide_snippet_runs_to_completion(snippet: str) -> None:
    env = {**os.environ, "DOVECOTE_NATS_URL": nats_url()}
    completed = subprocess.run(
        [sys.executable, "-c", snippet],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr
    for expected in re.findall(r"# (\S.*)$", snippet, re.M):
        if expected.startswith(("hello", "shipped", "builtins", "/user", "['node")):
            assert expected in completed.stdout, f"{expected!r} not in {completed.stdout!r}"
