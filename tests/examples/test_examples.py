"""Every program in examples/ runs to completion and prints what it promises.

Each example is started with the current interpreter in its own process. All of them
are launched once, in parallel, when the module is first used; each test then waits
for its own process, so the whole module takes about as long as the slowest example.
A new file in examples/ is picked up automatically: it must exit 0, and if it is listed
in EXPECTED its output must contain the listed lines.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest

from service_urls import nats_url

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.py"))
TIMEOUT = 30.0

EXPECTED: dict[str, list[str]] = {
    "hello.py": [
        "ask mem://hello@local/user/greeter -> hello world (greeting #2)",
        "ask via the child -> HI FROM THE CHILD",
        "bounded mailbox kept [7, 8, 9], dropped 7",
        "crash -> RuntimeError('boom'), supervisor restarts the greeter",
        "after restart -> hello again (greeting #1)",
    ],
    "telemetry_sink.py": [
        "burst 1: sent readings #0..#499, sink stored #400..#499 (the newest 100)",
        "sent 2500 = stored 500 + dropped 2000",
    ],
    "priority_triage.py": [
        "handled order: [3, 6, 5, 2, 7, 1, 4]",
        "second round: [8, 10, 9]",
    ],
    "connection_stash.py": [
        "offline, stashing 'GET a'",
        "connected: replaying the stash",
        "asks answered after connecting: ['ok:GET a', 'ok:GET b']",
        "ask after reconnect: ok:GET c",
    ],
    "supervised_worker.py": [
        "worker #1: pre_restart(ValueError('cannot digest poison-1'), failing message='poison-1')",
        "worker #2: post_restart(ValueError('cannot digest poison-1'))",
        "worker #2: processed 'job-2' (1 so far)",
        "dead letter: 'job-3' (queued-at-stop)",
        "supervisor: /user/supervisor/worker stopped for good (restart budget spent)",
        "worker incarnations: 4; supervisor alive: True",
    ],
    "bank_account.py": [
        "<- lost updates",
        "<- exact, no locks",
    ],
    "remote_ping_pong.py": [
        "members: ping, pong",
        "ask -> Pong(n=0, by='pong')",
        "ping 3 -> pong 3 from pong",
        "watched /user/ponger on node pong: Terminated",
    ],
}
#: examples that talk to the NATS server (skipped locally when it is not there)
NEEDS_NATS = {"remote_ping_pong.py"}


def _run(path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if "DOVECOTE_TEST_NATS_URL" in env:
        env.setdefault("DOVECOTE_NATS_URL", env["DOVECOTE_TEST_NATS_URL"])
    return subprocess.run(
        [sys.executable, str(path)],
        cwd=EXAMPLES_DIR.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@cache
def _launched() -> dict[str, Future[subprocess.CompletedProcess[str]]]:
    pool = ThreadPoolExecutor(max_workers=max(1, len(EXAMPLES)))
    futures = {path.name: pool.submit(_run, path) for path in EXAMPLES}
    pool.shutdown(wait=False)
    return futures


def test_the_examples_directory_has_the_documented_examples():
    assert set(EXPECTED) <= {path.name for path in EXAMPLES}


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_example_runs_to_completion_and_prints_what_it_promises(path: Path):
    if path.name in NEEDS_NATS:
        nats_url()  # skips (or fails under CI) when the server is not reachable
    result = _launched()[path.name].result()
    report = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, f"{path.name} exited with {result.returncode}\n{report}"
    for line in EXPECTED.get(path.name, []):
        assert line in result.stdout, f"{path.name} did not print {line!r}\n{report}"
