"""The library prints nothing on stdout (issue 8, logging): stdout belongs to the program.

Every README snippet and every example runs with ``print`` sent to a side file, so
whatever still reaches the real stdout was written by something else (before: structlog's
default printed info lines and full tracebacks there). A library warning goes to stderr.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import cache
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
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
TIMEOUT = 60.0

# ``print`` writes to the file named by DOVECOTE_TEST_PRINTS unless it is given a file
# (structlog's PrintLogger passes file=None for stdout: that still reaches stdout).
PRELUDE = """\
import builtins as _b, functools as _f, os as _o
_b.print = _f.partial(_b.print, file=open(_o.environ["DOVECOTE_TEST_PRINTS"], "w"), flush=True)
"""


def run_quietly(code: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run ``code`` in a fresh interpreter; return the process and what it printed."""
    with tempfile.TemporaryDirectory() as tmp:
        prints = Path(tmp) / "prints.txt"
        env = {**os.environ, "DOVECOTE_TEST_PRINTS": str(prints)}
        result = subprocess.run(
            [sys.executable, "-c", PRELUDE + code],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        return result, prints.read_text() if prints.exists() else ""


def example_code(path: Path) -> str:
    return f"import runpy\nrunpy.run_path({str(path)!r}, run_name='__main__')\n"


@cache
def _launched() -> dict[str, object]:
    pool = ThreadPoolExecutor(max_workers=4)
    jobs = {f"readme-{i}": code for i, code in enumerate(README_SNIPPETS)}
    jobs.update({path.name: example_code(path) for path in EXAMPLES})
    futures = {name: pool.submit(run_quietly, code) for name, code in jobs.items()}
    pool.shutdown(wait=False)
    return futures  # type: ignore[return-value]


NAMES = [f"readme-{i}" for i in range(len(README_SNIPPETS))] + [p.name for p in EXAMPLES]


@pytest.mark.parametrize("name", NAMES)
def test_nothing_but_the_programs_own_prints_reaches_stdout(name: str) -> None:
    result, printed = _launched()[name].result()  # type: ignore[attr-defined]
    report = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}\nprinted:\n{printed}"
    assert result.returncode == 0, report
    assert result.stdout == "", report


WARNING_PROGRAM = """
import asyncio
import dovecote
from dovecote import Actor, ActorSystem

class Slow(Actor):
    async def on_receive(self, message):
        await asyncio.sleep(0)

async def main():
    async with ActorSystem("loud") as system:
        ref = system.spawn(Slow, "slow")
        for i in range(10_001):  # the mailbox growth warning fires at 10,000
            ref.tell(i)
        await ref.ask("done", timeout=30)
    ref.tell("late")  # a dead letter: logged at info level
    print("program output")

dovecote.run(main())
"""


def test_a_library_warning_lands_on_stderr_and_info_stays_quiet() -> None:
    result, printed = run_quietly(WARNING_PROGRAM)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert printed == "program output\n"
    assert "mailbox user queue is growing" in result.stderr
    assert "owner=/user/slow" in result.stderr
    assert "dead letter" not in result.stderr  # info level: quiet by default


def test_an_application_logging_setup_decides_what_shows() -> None:
    setup = (
        "import logging, sys\n"
        "logging.basicConfig(stream=sys.stderr, level=logging.INFO, format='%(name)s|%(message)s')"
    )
    result, printed = run_quietly(setup + "\n" + WARNING_PROGRAM)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert printed == "program output\n"
    assert "dovecote.mailbox|mailbox user queue is growing" in result.stderr
    assert "dovecote.system|dead letter" in result.stderr
