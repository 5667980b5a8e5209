"""SIGKILL the broker while a client sends; a restart on the same SQLite file has every
send that was acknowledged (201) before the kill."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
from gateway_kit import Broker, sqlite_url

ACKED_BEFORE_KILL = 40


def test_a_sigkill_loses_no_acknowledged_send(tmp_path: Path) -> None:
    db = sqlite_url(tmp_path / "crash.db")
    broker = Broker.start(db, grpc=False)
    acked: list[str] = []
    enough = threading.Event()

    def sender() -> None:
        with httpx.Client(base_url=broker.http, timeout=5.0) as client:
            n = 0
            while True:
                try:
                    r = client.post(
                        "/v1/mailboxes/crash/send",
                        json={"from": f"s{n % 3}", "payload_base64": "eA=="},
                    )
                except httpx.HTTPError:
                    return  # the server is gone
                if r.status_code == 201:
                    acked.append(r.json()["message_id"])
                    if len(acked) >= ACKED_BEFORE_KILL:
                        enough.set()
                n += 1

    thread = threading.Thread(target=sender)
    thread.start()
    assert enough.wait(timeout=30), "the sender never got its acknowledgements"
    broker.kill()  # mid-stream: the sender is still sending
    thread.join(timeout=30)
    survivors = list(acked)

    again = Broker.start(db, grpc=False)
    try:
        with httpx.Client(base_url=again.http, timeout=10.0) as client:
            stored = client.get("/v1/mailboxes/crash/peek", params={"max": 100_000}).json()
            stats = client.get("/v1/mailboxes/crash/stats").json()
    finally:
        assert again.stop() == 0
    ids = {m["message_id"] for m in stored}
    assert set(survivors) <= ids
    assert stats["pending_count"] >= len(survivors)
