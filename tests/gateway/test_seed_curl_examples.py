"""Seed 004's curl examples, run as written with ``curl`` against a started server.

Only the address changes (the server listens on a free port, not 8080); ``-sS -w`` is
appended to read the status code.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from gateway_kit import Broker, sqlite_url

PRIORITY_ENSURE = """curl -X POST http://127.0.0.1:8080/v1/mailboxes/alice \\
  -H 'Content-Type: application/json' \\
  -d '{"capacity": 100, "ordering_mode": "priority"}'"""

PRIORITY_SEND = """curl -X POST http://127.0.0.1:8080/v1/mailboxes/alice/send \\
  -H 'Content-Type: application/json' \\
  -d '{"from": "ops", "payload_base64": "aGVsbG8=", "priority": 5, "ttl_ms": 60000}'"""

FANOUT = """curl -X POST http://127.0.0.1:8080/v1/fanout \\
  -H 'Content-Type: application/json' \\
  -d '{
    "from": "ops",
    "targets": ["alice", "bob", "carol"],
    "payload_base64": "YnJvYWRjYXN0"
  }'"""

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    b = Broker.start(sqlite_url(tmp_path_factory.mktemp("curl") / "curl.db"), grpc=False)
    yield b
    assert b.stop() == 0


def curl(broker: Broker, command: str) -> tuple[int, object]:
    line = command.replace("127.0.0.1:8080", broker.listening["http"])
    done = subprocess.run(
        ["bash", "-c", line + " -sS -w '\\n%{http_code}'"],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    body, _, status = done.stdout.rpartition("\n")
    return int(status), json.loads(body)


def test_priority_example(broker: Broker) -> None:
    status, mailbox = curl(broker, PRIORITY_ENSURE)
    assert status == 200
    assert isinstance(mailbox, dict)
    assert (mailbox["agent_id"], mailbox["capacity"]) == ("alice", 100)
    assert mailbox["ordering_mode"] == "priority"
    status, message = curl(broker, PRIORITY_SEND)
    assert status == 201
    assert isinstance(message, dict)
    assert (message["priority"], message["payload_base64"]) == (5, "aGVsbG8=")
    assert message["expires_at_ms"] == message["created_at_ms"] + 60_000


def test_fanout_example(broker: Broker) -> None:
    status, body = curl(broker, FANOUT)
    assert status == 201
    assert isinstance(body, dict)
    messages = body["messages"]
    assert [m["mailbox_id"] for m in messages] == ["alice", "bob", "carol"]
    assert len({m["message_id"] for m in messages}) == 3


def test_the_examples_are_the_seeds_text() -> None:
    seed = Path("/work/shared/seeds/004_d22c22077f93de36.txt")
    if not seed.exists():
        pytest.skip("the seed file is not on this machine")
    text = seed.read_text()
    for example in (PRIORITY_ENSURE, PRIORITY_SEND, FANOUT):
        assert example in text
