"""``--token``: a bearer token on every HTTP route but /healthz, and gRPC metadata."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from gateway_kit import Broker, sqlite_url

from dovecote.gateway._proto import load

pb, services = load()
TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    db = sqlite_url(Path(tmp_path_factory.mktemp("auth")) / "auth.db")
    b = Broker.start(db, "--token", TOKEN)
    yield b
    assert b.stop() == 0


def test_http_needs_the_bearer_token_except_healthz(broker: Broker) -> None:
    assert httpx.get(f"{broker.http}/healthz").text == "ok"
    for path in ("/v1/mailboxes", "/metrics", "/openapi.json", "/v1/mailboxes/a/stats"):
        r = httpx.get(f"{broker.http}{path}")
        assert r.status_code == 401
        assert r.json()["error"] == "unauthorized"
        assert r.headers["www-authenticate"] == "Bearer"
        wrong = httpx.get(f"{broker.http}{path}", headers={"authorization": "Bearer nope"})
        assert wrong.status_code == 401
    ok = httpx.get(f"{broker.http}/v1/mailboxes", headers={"authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200


def test_grpc_needs_the_authorization_metadata(broker: Broker) -> None:
    with grpc.insecure_channel(broker.grpc) as channel:
        stub = services.PostboxServiceStub(channel)
        request = pb.ListMailboxesRequest()
        with pytest.raises(grpc.RpcError) as info:
            stub.ListMailboxes(request, timeout=10)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        stream = stub.StreamClaim(pb.StreamClaimRequest(agent_id="a", claimer_id="c"), timeout=10)
        with pytest.raises(grpc.RpcError) as info:
            list(stream)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        reply = stub.ListMailboxes(
            request, metadata=[("authorization", f"Bearer {TOKEN}")], timeout=10
        )
        assert list(reply.mailboxes) == []
