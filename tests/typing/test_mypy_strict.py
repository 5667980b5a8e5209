"""``mypy --strict`` passes over the typed-refs checks, every README snippet and every
example (issue 8, typed refs): what users copy type-checks, and ``await ref.ask(...)`` is
the actor's reply type, not ``Any``.

Runs the mypy of the interpreter running the tests (``sys.executable -m mypy``), with
``src`` on ``MYPYPATH`` (an editable install is invisible to mypy). ~5-20 s uncached.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The README and the concept pages carved out of it (the core's documented snippets).
_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "concepts").glob("*.md"))]
README_SNIPPETS = [
    code
    for page in _PAGES
    for code in re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
]


def mypy_strict(*paths: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", *map(str, paths)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_typed_refs_check() -> None:
    result = mypy_strict(Path(__file__).with_name("typed_refs.py"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_readme_snippet_and_example_passes_mypy_strict(tmp_path: Path) -> None:
    assert README_SNIPPETS
    snippets = []
    for index, code in enumerate(README_SNIPPETS):
        path = tmp_path / f"readme_snippet_{index:02d}.py"
        path.write_text(code)
        snippets.append(path)
    examples = sorted((ROOT / "examples").glob("*.py"))
    result = mypy_strict(*snippets, *examples)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_would_catch_an_untyped_ask(tmp_path: Path) -> None:
    """The check is live: a wrong reply type is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from dovecote import Actor, ActorSystem\n"
        "class Doubler(Actor[int, int]):\n"
        "    def on_receive(self, message: int) -> int:\n"
        "        return message * 2\n"
        "async def main(system: ActorSystem) -> str:\n"
        "    return await system.spawn(Doubler).ask(1)\n"
    )
    result = mypy_strict(bad)
    assert result.returncode == 1
    assert 'Incompatible return value type (got "int", expected "str")' in result.stdout


@pytest.fixture(autouse=True)
def _mypy_is_installed() -> None:
    pytest.importorskip("mypy")
