"""Every Python snippet in README.md and docs/ runs as written.

A fenced ``python`` block runs as a program (``python -c``) and must exit 0. An HTML comment
on the line before the fence changes that:

- ``<!-- snippet: skip -->``: a fragment that is not a whole program (say why nearby);
- ``<!-- snippet: pytest -->``: a test module, run with pytest (asyncio auto mode);
- ``<!-- snippet: requires postgres -->`` / ``requires nats``: needs that service (skipped
  locally without it, a failure under CI; the URL is in ``DOVECOTE_TEST_POSTGRES_URL`` /
  ``DOVECOTE_TEST_NATS_URL``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from service_urls import nats_url, postgres_url

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(
    r"(?:<!--\s*snippet:\s*(?P<mode>[^>]*?)\s*-->\s*\n)?```python\n(?P<code>.*?)```", re.S
)


def _snippets() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for index, match in enumerate(_FENCE.finditer(text)):
            ident = f"{page.relative_to(ROOT)}#{index}"
            found.append((ident, (match.group("mode") or "run").strip(), match.group("code")))
    return found


SNIPPETS = _snippets()


def test_the_docs_have_snippets() -> None:
    assert len(SNIPPETS) > 20


@pytest.mark.parametrize(("mode", "code"), [s[1:] for s in SNIPPETS], ids=[s[0] for s in SNIPPETS])
def test_snippet_runs(mode: str, code: str, tmp_path: Path) -> None:
    if mode == "skip":
        pytest.skip("a fragment, marked as such in the page")
    env = dict(os.environ)
    if mode == "requires postgres":
        env["DOVECOTE_TEST_POSTGRES_URL"] = postgres_url()
    elif mode == "requires nats":
        env["DOVECOTE_TEST_NATS_URL"] = nats_url()
    elif mode not in ("run", "pytest"):
        raise AssertionError(f"unknown snippet mode {mode!r}")
    if mode == "pytest":
        (tmp_path / "test_snippet.py").write_text(code, encoding="utf-8")
        (tmp_path / "pytest.ini").write_text(
            "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n",
            encoding="utf-8",
        )
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    else:
        command = [sys.executable, "-c", code]
    completed = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
