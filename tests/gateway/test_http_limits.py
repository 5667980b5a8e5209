"""``--max-body-bytes``: an oversized body is refused with 413 and the JSON error body,
whether it declares its length or streams chunks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from gateway_kit import Broker, sqlite_url


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    db = sqlite_url(Path(tmp_path_factory.mktemp("limits")) / "limits.db")
    b = Broker.start(db, "--max-body-bytes", "1KiB", grpc=False)
    yield b
    assert b.stop() == 0


def body(size: int) -> bytes:
    """A valid send body of exactly ``size`` bytes (padded with JSON whitespace)."""
    data = b'{"from": "ops", "payload_base64": "eA=="}'
    return data + b" " * (size - len(data))


def test_a_body_over_the_cap_is_413(broker: Broker) -> None:
    with httpx.Client(base_url=broker.http, timeout=10) as client:
        ok = client.post(
            "/v1/mailboxes/lim/send",
            content=body(1024),
            headers={"content-type": "application/json"},
        )
        assert ok.status_code == 201, ok.text
        r = client.post(
            "/v1/mailboxes/lim/send",
            content=body(1025),
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 413
        assert r.json()["error"] == "request_too_large"


def test_a_chunked_body_over_the_cap_is_413(broker: Broker) -> None:
    def chunks() -> Iterator[bytes]:
        data = body(4096)
        for i in range(0, len(data), 512):
            yield data[i : i + 512]

    with httpx.Client(base_url=broker.http, timeout=10) as client:
        r = client.post(
            "/v1/mailboxes/lim/send", content=chunks(), headers={"content-type": "application/json"}
        )
        assert r.status_code == 413
        assert r.json()["error"] == "request_too_large"
